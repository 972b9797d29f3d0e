package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.mpi.RankOutputHandler;

class PipeOutputTest {

    @TempDir
    Path dir;

    private final List<String> fallback = new ArrayList<>();
    private final RankOutputHandler printing = (rank, stderr, line, partial) -> fallback.add(rank + " " + line);

    @Test
    void shouldWriteOneRecordPerLineWithItsStreamAndTag() throws Exception {
        Path pipe = dir.resolve("output");
        PipeOutput output = new PipeOutput(pipe, true, printing);
        output.onLine(3, false, "hello", false);
        output.onLine(2, true, "oops", false);
        output.onDropped(1, false, 7);
        assertEquals("O[3] hello\nE[2] oops\nO[1] [mpiproxy: 7 lines dropped: the host acknowledged no output for too"
                + " long]\n", Files.readString(pipe, StandardCharsets.UTF_8));
        assertEquals(List.of(), fallback);
        new PipeOutput(dir.resolve("untagged"), false, printing).onLine(4, false, "plain", false);
        assertEquals("Oplain\n", Files.readString(dir.resolve("untagged")));
    }

    @Test
    void shouldPrintTheLinesItselfWhenThePipeCannotBeOpened() {
        PipeOutput output = new PipeOutput(dir.resolve("no-such-dir").resolve("output"), true, printing);
        output.onLine(5, false, "still shown", false);
        assertEquals(List.of("5 still shown"), fallback);
    }
}
