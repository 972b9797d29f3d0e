package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class TaggedOutputTest {

    @Test
    void shouldTagWholeLinesAndEndALastPartialLine() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String text = "2\n3\n" + "x".repeat(1000) + "\nno newline";

        new TaggedOutput(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), out, "[0] ", () -> false).run();

        assertEquals("[0] 2\n[0] 3\n[0] " + "x".repeat(1000) + "\n[0] no newline\n", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldMarkALastPartialLineCutWhenTheRankWasStopped() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        new TaggedOutput(new ByteArrayInputStream("whole\nhalf a li".getBytes(StandardCharsets.UTF_8)), out, "[0] ",
                () -> true).run();

        assertEquals("[0] whole\n[0] half a li [mpiproxy: line cut]\n", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldWriteNothingForAnEmptyStream() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        new TaggedOutput(new ByteArrayInputStream(new byte[0]), out, "[3] ", () -> false).run();

        assertEquals("", out.toString(StandardCharsets.UTF_8));
    }
}
