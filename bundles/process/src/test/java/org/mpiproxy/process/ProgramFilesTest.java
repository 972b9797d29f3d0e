package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;

class ProgramFilesTest {

    @TempDir
    Path temp;

    private Path programs() throws Exception {
        return Files.createDirectories(temp.resolve("programs"));
    }

    private LaunchException rejected(Path dir, String name) {
        LaunchException e = assertThrows(LaunchException.class, () -> ProgramFiles.executable(dir, name));
        return e;
    }

    @Test
    void shouldResolveExecutableToItsRealPath() throws Exception {
        Path dir = programs();
        Path script = TestScripts.write(dir, "hello", "exit 0\n");

        assertEquals(script.toRealPath(), ProgramFiles.executable(dir, "hello"));
    }

    @Test
    void shouldFollowSymlinkThatStaysInsideDirectory() throws Exception {
        Path dir = programs();
        Path script = TestScripts.write(dir, "hello", "exit 0\n");
        Files.createSymbolicLink(dir.resolve("alias"), script);

        assertEquals(script.toRealPath(), ProgramFiles.executable(dir, "alias"));
    }

    @Test
    void shouldRejectNameWithPathSeparator() throws Exception {
        TestScripts.write(temp, "outside", "exit 0\n");
        assertTrue(rejected(programs(), "../outside").getMessage().contains("'..'"));
        assertTrue(rejected(programs(), "sub/x").getMessage().contains("path separator"));
    }

    @Test
    void shouldRejectDotDotAndEmptyName() throws Exception {
        assertTrue(rejected(programs(), "..").getMessage().contains("'..'"));
        assertTrue(rejected(programs(), "").getMessage().contains("empty"));
        assertTrue(rejected(programs(), null).getMessage().contains("empty"));
    }

    @Test
    void shouldRejectControlCharacters() throws Exception {
        assertTrue(rejected(programs(), "a\nb").getMessage().contains("control character 0xa"));
        assertTrue(rejected(programs(), "a\u0000").getMessage().contains("control character 0x0"));
    }

    @Test
    void shouldRejectSymlinkEscapingTheDirectory() throws Exception {
        Path outside = TestScripts.write(temp, "outside", "exit 0\n");
        Path dir = programs();
        Files.createSymbolicLink(dir.resolve("escape"), outside);

        assertTrue(rejected(dir, "escape").getMessage().contains("resolves outside"));
    }

    @Test
    void shouldFollowLinksOfAPathDirectoryOnlyItsOwnerCanWrite() throws Exception {
        // as Debian's /usr/bin/java -> /etc/alternatives/java -> /usr/lib/jvm/.../bin/java
        Path jdk = Files.createDirectories(temp.resolve("jvm/bin"));
        Path javaFile = TestScripts.write(jdk, "java", "exit 0\n");
        Path alternatives = Files.createDirectories(temp.resolve("alternatives"));
        Files.createSymbolicLink(alternatives.resolve("java"), javaFile);
        Path bin = Files.createDirectories(temp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("java"), alternatives.resolve("java"));
        Files.setPosixFilePermissions(bin, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));

        assertEquals(javaFile.toRealPath(), ProgramFiles.executable(programs(), List.of(bin), "java"));

        // a directory others may write: anyone could have planted the link
        Files.setPosixFilePermissions(bin, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        LaunchException e = assertThrows(LaunchException.class,
                () -> ProgramFiles.executable(programs(), List.of(bin), "java"));
        assertTrue(e.getMessage().contains("resolves outside"), e.getMessage());
        // and the program directory keeps its containment whatever its mode
        Files.createSymbolicLink(programs().resolve("java"), javaFile);
        assertTrue(rejected(programs(), "java").getMessage().contains("resolves outside"));
    }

    @Test
    void shouldRejectDirectory() throws Exception {
        Path dir = programs();
        Files.createDirectory(dir.resolve("sub"));

        assertEquals("program 'sub' is not a regular file", rejected(dir, "sub").getMessage());
    }

    @Test
    void shouldRejectFileThatIsNotExecutable() throws Exception {
        Path dir = programs();
        Files.writeString(dir.resolve("data"), "#!/bin/sh\n");

        assertEquals("program 'data' is not executable", rejected(dir, "data").getMessage());
    }

    @Test
    void shouldRejectMissingProgramNamingItAndTheDirectory() throws Exception {
        Path dir = programs();

        assertEquals("no program 'nope' in " + dir.toRealPath(), rejected(dir, "nope").getMessage());
    }

    @Test
    void shouldRejectMissingDirectory() {
        assertTrue(rejected(temp.resolve("absent"), "x").getMessage().contains("does not exist"));
    }

    @Test
    void shouldValidateDerivedFileNameToo() throws Exception {
        Path dir = programs();
        String longName = "p".repeat(253);
        LaunchException e = assertThrows(LaunchException.class,
                () -> ProgramFiles.contained(dir, longName, longName + ".lz4"));
        assertTrue(e.getMessage().contains("longer than"));
    }

    @Test
    void shouldNeverRunAnImageAsAProgram() throws Exception {
        Path dir = programs();
        Path image = TestScripts.write(dir, "mpiping.lz4", "echo not a program\n");
        assertEquals("'mpiping.lz4' is the LZ4 image of program 'mpiping' for remote cores, not a program: name"
                + " 'mpiping'", rejected(dir, "mpiping.lz4").getMessage());
        assertEquals(image.toRealPath(), ProgramFiles.contained(dir, "mpiping", "mpiping.lz4"),
                "the core launcher still finds the image of program mpiping");
    }
}
