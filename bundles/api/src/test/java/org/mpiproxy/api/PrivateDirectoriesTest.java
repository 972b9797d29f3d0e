package org.mpiproxy.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PrivateDirectoriesTest {

    @TempDir
    Path dir;

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static Path made(Path directory, String mode) throws IOException {
        Files.createDirectory(directory);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString(mode));
        return directory;
    }

    @Test
    void shouldMakeAMissingDirectoryWithItsModeAndItsParentsSearchOnly() throws IOException {
        Path directory = dir.resolve("a").resolve("b");

        PrivateDirectories.ensure(directory, PrivateDirectories.OWNER_ONLY, "logs");

        assertEquals("rwx------", mode(directory));
        assertEquals("rwx--x--x", mode(dir.resolve("a")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"rwxrwxrwx", "rwxrwxr-x", "rwx-w----", "rwx----w-"})
    void shouldRefuseADirectoryOthersCanWrite(String permissions) throws IOException {
        Path directory = made(dir.resolve("d"), permissions);
        String line = "d can be written by its group or others (" + mode(directory) + "); refusing to use it";

        assertEquals(line, PrivateDirectories.problem(directory, "d"));
        assertEquals(line, assertThrows(IOException.class,
                () -> PrivateDirectories.restrict(directory, PrivateDirectories.OWNER_ONLY, "d")).getMessage());
        assertEquals(permissions, mode(directory), "left as it is");
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a directory to another user needs root");
        Path directory = made(dir.resolve("d"), "rwx------");
        Files.setAttribute(directory, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);

        assertEquals("d is owned by uid 65534, not by uid 0 that runs the proxy; refusing to use it (remove it, or"
                + " give it to uid 0 with mode 700)", assertThrows(IOException.class,
                () -> PrivateDirectories.ensure(directory, PrivateDirectories.OWNER_ONLY, "d")).getMessage());
    }

    @Test
    void shouldRefuseALinkAndAFile() throws IOException {
        Path target = made(dir.resolve("target"), "rwx------");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        Path file = Files.createFile(dir.resolve("file"));

        assertEquals("l is a symbolic link; refusing to use it", PrivateDirectories.problem(link, "l"));
        assertEquals("f exists and is not a directory", PrivateDirectories.problem(file, "f"));
        assertThrows(IOException.class, () -> PrivateDirectories.ensure(link, PrivateDirectories.OWNER_ONLY, "l"));
        assertNull(PrivateDirectories.problem(dir.resolve("missing"), "m"), "a missing one is made later");
    }

    @Test
    void shouldTakeAwayWhatAnOwnDirectoryGivesOthersOnlyWhenRestricting() throws IOException {
        Path directory = made(dir.resolve("d"), "rwxr-xr-x");

        PrivateDirectories.ensure(directory, PrivateDirectories.OWNER_ONLY, "d");
        assertEquals("rwxr-xr-x", mode(directory), "ensure leaves a usable one as it is");

        PrivateDirectories.restrict(directory, PrivateDirectories.OWNER_ONLY, "d");
        assertEquals("rwx------", mode(directory));
    }
}
