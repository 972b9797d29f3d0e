package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys a node serves with: the entropy floor, and every check of a key file, in one refusal. */
class KeyStrengthTest {

    @TempDir
    Path dir;

    private int files;

    private Path keyFile(String hex, String mode) throws IOException {
        Path f = dir.resolve("k-" + ++files);
        Files.writeString(f, hex + "\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    private static String refusal(Path... files) {
        Map<Integer, Path> byId = new LinkedHashMap<>();
        for (int i = 0; i < files.length; i++) {
            byId.put(i + 1, files[i]);
        }
        return assertThrows(IllegalArgumentException.class, () -> ClusterKeys.loadStrong(byId)).getMessage();
    }

    private static byte[] random(long seed, int length) {
        byte[] key = new byte[length];
        new Random(seed).nextBytes(key);
        return key;
    }

    @Test
    void shouldPassRandomKeys() {
        for (long seed = 0; seed < 10_000; seed++) {
            assertNull(ClusterKeys.weakness(random(seed, ClusterKeys.MIN_KEY_BYTES)), "seed " + seed);
        }
        assertNull(ClusterKeys.weakness(random(1, 64)));
        assertNull(ClusterKeys.weakness(HexFormat.of().parseHex(V2Examples.KEY_HEX)));
    }

    @Test
    void shouldRefuseKeysThatAreNotRandom() {
        assertEquals("is all zero", ClusterKeys.weakness(new byte[32]));
        assertEquals("repeats the 1-byte pattern ab", ClusterKeys.weakness(HexFormat.of().parseHex("ab".repeat(32))));
        assertEquals("repeats the 4-byte pattern deadbeef",
                ClusterKeys.weakness(HexFormat.of().parseHex("deadbeef".repeat(8))));
        byte[] half = random(3, 16);
        byte[] twice = new byte[32];
        System.arraycopy(half, 0, twice, 0, 16);
        System.arraycopy(half, 0, twice, 16, 16);
        assertEquals("repeats the 16-byte pattern " + HexFormat.of().formatHex(half), ClusterKeys.weakness(twice));
        byte[] fewValues = new byte[32];
        Random sevenValues = new Random(9);
        for (int i = 0; i < fewValues.length; i++) {
            fewValues[i] = (byte) (i < 7 ? i : sevenValues.nextInt(7));
        }
        assertNull(periodOf(fewValues), "not a repetition: the distinct values are what is short");
        assertTrue(ClusterKeys.weakness(fewValues).startsWith("holds only 7 different byte values"),
                ClusterKeys.weakness(fewValues));
        assertEquals("is shorter than 32 bytes (16)", ClusterKeys.weakness(random(4, 16)));
    }

    @Test
    void shouldRefuseAWeakKeyFileNamingIt() throws IOException {
        Path zero = keyFile("00".repeat(32), "rw-------");
        assertEquals("key file " + zero + " holds a weak key: it is all zero; make a random one (32 bytes of"
                + " /dev/urandom, in hexadecimal)", refusal(zero));
        Path pattern = keyFile("0123".repeat(16), "r--------");
        assertTrue(refusal(pattern).contains("holds a weak key: it repeats the 2-byte pattern 0123"));
    }

    @Test
    void shouldRefuseEmptyShortOpenAndForeignKeyFiles() throws IOException {
        String good = HexFormat.of().formatHex(random(5, 32));
        assertTrue(refusal(keyFile("", "rw-------")).contains("must hold an even number of hexadecimal digits"));
        assertTrue(refusal(keyFile(good.substring(0, 32), "rw-------")).contains("holds a 128-bit key"));
        assertTrue(refusal(keyFile(good, "rw-r-----")).contains("has mode rw-r-----"));
        assertTrue(refusal(keyFile(good, "rw----r--")).contains("has mode rw----r--"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), keyFile(good, "rw-------"));
        assertTrue(refusal(link).contains("is a symbolic link"));
    }

    @Test
    void shouldRefuseAKeyFileOfAnotherOwner() throws IOException {
        assumeTrue(isRoot(), "giving a file to another user needs root");
        Path foreign = keyFile(HexFormat.of().formatHex(random(6, 32)), "rw-------");
        Files.setAttribute(foreign, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        assertTrue(refusal(foreign).contains("is owned by"), refusal(foreign));
    }

    @Test
    void shouldRefuseAllKeysWhenOneIsWeakAndLoadThemWhenAllAreStrong() throws IOException {
        Path strong = keyFile(HexFormat.of().formatHex(random(7, 32)), "rw-------");
        Path weak = keyFile("00".repeat(32), "rw-------");
        assertTrue(refusal(strong, weak).startsWith("key file " + weak + " holds a weak key"));

        Path other = keyFile(HexFormat.of().formatHex(random(8, 48)), "r--------");
        Map<Integer, Path> both = new LinkedHashMap<>();
        both.put(2, other);
        both.put(1, strong);
        ClusterKeys keys = ClusterKeys.loadStrong(both);
        assertEquals(2, keys.sendKeyId());
        assertTrue(keys.has(1) && keys.has(2));
    }

    private static Integer periodOf(byte[] key) {
        for (int p = 1; p <= key.length / 2; p++) {
            boolean repeats = true;
            for (int i = p; i < key.length; i++) {
                repeats &= key[i] == key[i - p];
            }
            if (repeats) {
                return p;
            }
        }
        return null;
    }

    private static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Paths.get("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
