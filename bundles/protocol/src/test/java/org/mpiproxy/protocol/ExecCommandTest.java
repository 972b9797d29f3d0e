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

    private static ExecCommand plain(byte[] b) {
        ByteBuffer buffer = ByteBuffer.allocate(b.length + 8).order(java.nio.ByteOrder.BIG_ENDIAN);
        buffer.put(5, b);
        return ExecCommand.parsePlain(buffer, 5, b.length);
    }

    private static String plainProblem(byte[] b) {
        return assertThrows(IllegalArgumentException.class, () -> plain(b)).getMessage();
    }

    @Test
    void shouldRoundTripThePlainFormWithSpacesAndEnvironment() {
        java.util.Map<String, String> env = new java.util.LinkedHashMap<>();
        env.put("OMP_NUM_THREADS", "4");
        env.put("EMPTY", "");
        env.put("WITH_EQ", "a=b c");
        ExecCommand c = new ExecCommand("hostname", List.of("two words", "", "-x"), env);
        byte[] b = c.encodePlain();
        // counts little-endian whatever the buffer's order: 3 arguments, 3 variables
        assertEquals(3, b[0]);
        assertEquals(0, b[1]);
        assertEquals(3, b[2]);
        ExecCommand back = plain(b);
        assertEquals("hostname", back.program());
        assertEquals(List.of("two words", "", "-x"), back.args());
        assertEquals(env, back.environment());
        assertEquals(List.copyOf(env.keySet()), List.copyOf(back.environment().keySet()));
    }

    @Test
    void shouldRefuseMalformedPlainForms() {
        assertTrue(plainProblem(new byte[] {1, 0}).contains("shorter than its two counts"));
        byte[] truncated = new ExecCommand("prog", List.of("a"), java.util.Map.of("A", "1")).encodePlain();
        assertTrue(plainProblem(java.util.Arrays.copyOf(truncated, truncated.length - 1))
                .contains("ends after 2 of its 3 strings"));
        byte[] extra = java.util.Arrays.copyOf(truncated, truncated.length + 2);
        assertTrue(plainProblem(extra).contains("2 bytes after its 3 strings"));
        byte[] badName = {0, 0, 1, 0, 'p', 0, '1', 'A', '=', 'x', 0};
        assertTrue(plainProblem(badName).contains("'1A=x' is not NAME=VALUE"));
        byte[] noEq = {0, 0, 1, 0, 'p', 0, 'A', 0};
        assertTrue(plainProblem(noEq).contains("'A' is not NAME=VALUE"));
        byte[] path = {0, 0, 0, 0, '.', '.', '/', 'x', 0};
        plainProblem(path);
        byte[] tooMany = {(byte) 0x01, (byte) 0x02, 0, 0};
        assertTrue(plainProblem(tooMany).contains("513 arguments, more than 256"));
        byte[] badUtf8 = {0, 0, 0, 0, 'p', (byte) 0xff, 0};
        assertTrue(plainProblem(badUtf8).contains("not valid UTF-8"));
    }

    @Test
    void shouldRefuseToEncodeWhatThePlainFormCannotCarry() {
        assertThrows(IllegalArgumentException.class,
                () -> new ExecCommand("p", List.of("a\0b"), java.util.Map.of()).encodePlain());
        assertThrows(IllegalArgumentException.class,
                () -> new ExecCommand("p", List.of(), java.util.Map.of("BAD-NAME", "1")).encodePlain());
    }
}
