package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterKeysTest {

    @TempDir
    Path dir;

    private int files;

    private Path keyFile(String content, String mode) throws IOException {
        Path f = dir.resolve("k-" + ++files);
        Files.writeString(f, content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    private static String message(Path file) {
        return assertThrows(IllegalArgumentException.class, () -> ClusterKeys.readKeyFile(file)).getMessage();
    }

    @Test
    void shouldReadAHexKeyWithATrailingNewline() throws IOException {
        Path f = keyFile(V2Examples.KEY_HEX + "\n", "rw-------");
        assertArrayEquals(HexFormat.of().parseHex(V2Examples.KEY_HEX), ClusterKeys.readKeyFile(f));
        assertArrayEquals(HexFormat.of().parseHex(V2Examples.KEY_HEX),
                ClusterKeys.readKeyFile(keyFile(V2Examples.KEY_HEX, "r--------")));
    }

    @Test
    void shouldRefuseAFileOthersCanRead() throws IOException {
        Path f = keyFile(V2Examples.KEY_HEX, "rw-r--r--");
        assertEquals("key file " + f + " has mode rw-r--r--; it must be rw------- (0600) or r-------- (0400)",
                message(f));
        assertTrue(message(keyFile(V2Examples.KEY_HEX, "rw----rw-")).contains("has mode rw----rw-"));
        assertTrue(message(keyFile(V2Examples.KEY_HEX, "rwx------")).contains("has mode rwx------"));
    }

    @Test
    void shouldRefuseASymbolicLink() throws IOException {
        Path target = keyFile(V2Examples.KEY_HEX, "rw-------");
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        assertEquals("key file " + link + " is a symbolic link; name the file itself", message(link));
    }

    @Test
    void shouldRefuseAShortKey() throws IOException {
        Path f = keyFile(V2Examples.KEY_HEX.substring(0, 62), "rw-------");
        assertEquals("key file " + f + " holds a 248-bit key; at least 256 bits (64 hexadecimal digits) are needed",
                message(f));
    }

    @Test
    void shouldRefuseTextThatIsNotHex() throws IOException {
        Path f = keyFile(V2Examples.KEY_HEX.replace('a', 'g'), "rw-------");
        assertTrue(message(f).contains("hexadecimal digits and nothing else"));
        assertTrue(message(keyFile(V2Examples.KEY_HEX + "0", "rw-------")).contains("even number"));
    }

    @Test
    void shouldRefuseAMissingFileAndADirectory() throws IOException {
        assertEquals("key file " + dir.resolve("none") + " does not exist", message(dir.resolve("none")));
        Path d = Files.createDirectory(dir.resolve("d"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------")));
        assertEquals("key file " + d + " is not a regular file", message(d));
    }

    @Test
    void shouldGenerateAPrivateKeyOnceAndLoadIt() throws IOException {
        Path f = dir.resolve("etc/mpiproxy.key");
        assertTrue(ClusterKeys.generateIfMissing(f));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        byte[] key = ClusterKeys.readKeyFile(f);
        assertEquals(32, key.length);
        assertFalse(ClusterKeys.generateIfMissing(f));
        assertArrayEquals(key, ClusterKeys.readKeyFile(f));
    }

    @Test
    void shouldParseAKeyListWithIdsInOrder() {
        Map<Integer, Path> files = ClusterKeys.parseFileList("2:new.key, 1:/abs/old.key", dir);
        assertEquals(java.util.List.of(2, 1), java.util.List.copyOf(files.keySet()));
        assertEquals(dir.resolve("new.key"), files.get(2));
        assertEquals(Path.of("/abs/old.key"), files.get(1));
        assertEquals(Map.of(1, dir.resolve("etc/mpiproxy.key")), ClusterKeys.parseFileList("etc/mpiproxy.key", dir));
        assertThrows(IllegalArgumentException.class, () -> ClusterKeys.parseFileList("1:a,1:b", dir));
        assertThrows(IllegalArgumentException.class, () -> ClusterKeys.parseFileList("300:a", dir));
        assertThrows(IllegalArgumentException.class, () -> ClusterKeys.parseFileList(" , ", dir));
    }

    @Test
    void shouldLoadTwoKeysAndSignWithTheFirstListed() throws IOException {
        Path a = keyFile(V2Examples.KEY_HEX, "rw-------");
        Path b = keyFile("ff".repeat(32), "r--------");
        Map<Integer, Path> files = new java.util.LinkedHashMap<>();
        files.put(7, b);
        files.put(1, a);
        ClusterKeys keys = ClusterKeys.load(files);
        assertEquals(7, keys.sendKeyId());
        assertTrue(keys.has(1));
        assertFalse(keys.has(2));
    }
}
