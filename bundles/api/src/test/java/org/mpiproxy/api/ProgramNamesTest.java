package org.mpiproxy.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProgramNamesTest {

    @TempDir
    Path dir;

    @Test
    void shouldAcceptPlainNames() {
        assertNull(ProgramNames.problem("mpiprime"));
        assertNull(ProgramNames.problem("a.b-c_d"));
    }

    @Test
    void shouldRejectBadNames() {
        assertEquals("program name is empty", ProgramNames.problem(""));
        assertEquals("program name is empty", ProgramNames.problem(null));
        assertTrue(ProgramNames.problem("a/b").contains("path separator"));
        assertTrue(ProgramNames.problem("..").contains(".."));
        assertTrue(ProgramNames.problem("a..b").contains(".."));
        assertTrue(ProgramNames.problem("a\u0001").contains("control character 0x1"));
        assertTrue(ProgramNames.problem("a\u007f").contains("control character 0x7f"));
        assertTrue(ProgramNames.problem("x".repeat(256)).contains("longer than 255"));
    }

    @Test
    void shouldRefuseAnImageAsAProgramButAcceptItAsAFileName() {
        assertEquals("'mpiping.lz4' is the LZ4 image of program 'mpiping' for remote cores, not a program: name"
                + " 'mpiping'", ProgramNames.problem("mpiping.lz4"));
        assertNull(ProgramNames.fileNameProblem("mpiping.lz4"));
        assertTrue(ProgramNames.isImage("mpiping.lz4"));
        assertFalse(ProgramNames.isImage("mpiping"));
        assertNull(ProgramNames.problem("mpiping.lz4.txt"));
    }

    @Test
    void shouldResolveRegularFileInside() throws IOException {
        Path p = Files.writeString(dir.resolve("prog"), "x");
        assertEquals(p.toRealPath(), ProgramNames.resolveContained(dir, "prog"));
    }

    @Test
    void shouldRejectSymlinkEscapingTheDirectory(@TempDir Path outside) throws IOException {
        Path target = Files.writeString(outside.resolve("evil"), "x");
        Files.createSymbolicLink(dir.resolve("prog"), target);
        IOException e = assertThrows(IOException.class, () -> ProgramNames.resolveContained(dir, "prog"));
        assertTrue(e.getMessage().contains("resolves outside"), e.getMessage());
    }

    @Test
    void shouldRejectMissingFileAndDirectories() throws IOException {
        assertTrue(assertThrows(IOException.class, () -> ProgramNames.resolveContained(dir, "nope"))
                .getMessage().startsWith("no program 'nope'"));
        Files.createDirectory(dir.resolve("sub"));
        assertTrue(assertThrows(IOException.class, () -> ProgramNames.resolveContained(dir, "sub"))
                .getMessage().contains("not a regular file"));
        assertTrue(assertThrows(IOException.class, () -> ProgramNames.resolveContained(dir.resolve("none"), "x"))
                .getMessage().contains("does not exist"));
    }
}
