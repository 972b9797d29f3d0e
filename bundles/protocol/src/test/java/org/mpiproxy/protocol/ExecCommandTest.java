package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ExecCommandTest {

    private static ExecCommand parse(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.allocate(b.length + 8);
        buffer.put(3, b);
        return ExecCommand.parse(buffer, 3, b.length);
    }

    private static String problem(String s) {
        return assertThrows(IllegalArgumentException.class, () -> parse(s)).getMessage();
    }

    @Test
    void shouldSplitProgramAndArguments() {
        ExecCommand c = parse("mpiprime 10000");
        assertEquals("mpiprime", c.program());
        assertEquals(List.of("10000"), c.args());
        assertEquals("mpiprime 10000", c.toCommandLine());
    }

    @Test
    void shouldIgnoreRunsOfSpacesAndTrailingNuls() {
        ExecCommand c = parse("  mpiping   a  b \0\0");
        assertEquals("mpiping", c.program());
        assertEquals(List.of("a", "b"), c.args());
    }

    @Test
    void shouldRejectEmptyCommand() {
        assertEquals("command is empty", problem("   "));
        assertEquals("command is empty", problem(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/bin/sh -c x", "../x", "..", "a/b", "x\\y"})
    void shouldRejectPathsAsProgramNames(String command) {
        assertTrue(problem(command).startsWith("program name"), command);
    }

    @Test
    void shouldRejectControlCharacters() {
        assertTrue(problem("mpiping a\nb").contains("control character 0xa"));
        assertTrue(problem("mpi\tping").contains("control character 0x9"));
    }

    @Test
    void shouldRejectNulInsideCommand() {
        assertTrue(problem("mpiping\0rm").contains("control character 0x0"));
    }

    @Test
    void shouldRejectInvalidUtf8() {
        ByteBuffer b = ByteBuffer.wrap(new byte[] {'a', (byte) 0xc3, (byte) 0x28});
        assertEquals("command is not valid UTF-8",
                assertThrows(IllegalArgumentException.class, () -> ExecCommand.parse(b, 0, 3)).getMessage());
    }

    @Test
    void shouldRejectOversizeCommand() {
        ByteBuffer b = ByteBuffer.allocate(ExecCommand.MAX_LENGTH + 1);
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> ExecCommand.parse(b, 0, b.capacity())).getMessage().contains("more than 4096"));
    }

    @Test
    void shouldRejectTooManyArguments() {
        assertTrue(problem("p" + " a".repeat(ExecCommand.MAX_ARGS + 1)).contains("more than 256 arguments"));
        assertEquals(ExecCommand.MAX_ARGS, parse("p" + " a".repeat(ExecCommand.MAX_ARGS)).args().size());
    }
}
