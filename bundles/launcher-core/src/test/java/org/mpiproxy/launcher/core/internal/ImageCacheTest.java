package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;

class ImageCacheTest {

    @TempDir
    Path temp;

    private Path cacheDir() {
        return temp.resolve("data").resolve("mpiproxy").resolve("images");
    }

    private static List<Path> list(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.toList();
        }
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test
    void shouldExtractImageIntoPrivateDirectoryWithOwnerOnlyMode() throws Exception {
        String script = TestImages.script("exit 0\n");
        Path image = TestImages.writeImage(temp, "prog", script);

        Path cached = new ImageCache(cacheDir(), 1 << 20).extract("prog", image);

        assertEquals(cacheDir(), cached.getParent());
        assertEquals("prog-" + sha256(image), cached.getFileName().toString());
        assertEquals(script, Files.readString(cached));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cached)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheDir())));
        assertEquals(List.of(cached), list(cacheDir()));
    }

    @Test
    void shouldTightenModeOfExistingCacheDirectory() throws Exception {
        Files.createDirectories(cacheDir());
        Files.setPosixFilePermissions(cacheDir(), PosixFilePermissions.fromString("rwxr-xr-x"));

        new ImageCache(cacheDir(), 1 << 20).extract("prog", TestImages.writeImage(temp, "prog", "x"));

        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cacheDir())));
    }

    @Test
    void shouldReuseCachedCopyOfUnchangedImage() throws Exception {
        Path image = TestImages.writeImage(temp, "prog", TestImages.script("exit 0\n"));
        ImageCache cache = new ImageCache(cacheDir(), 1 << 20);
        Path first = cache.extract("prog", image);
        Object inode = Files.readAttributes(first, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino");

        Path second = cache.extract("prog", image);

        assertEquals(first, second);
        assertEquals(inode, Files.readAttributes(second, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino"));
    }

    @Test
    void shouldExtractChangedImageAgain() throws Exception {
        ImageCache cache = new ImageCache(cacheDir(), 1 << 20);
        Path first = cache.extract("prog", TestImages.writeImage(temp, "prog", TestImages.script("exit 1\n")));

        Path second = cache.extract("prog", TestImages.writeImage(temp, "prog", TestImages.script("exit 2\n")));

        assertNotEquals(first, second);
        assertEquals(TestImages.script("exit 2\n"), Files.readString(second));
    }

    @Test
    void shouldExtractImageOfExactlyTheCap() throws Exception {
        byte[] content = new byte[4096];
        new Random(1).nextBytes(content);

        Path cached = new ImageCache(cacheDir(), content.length)
                .extract("blob", TestImages.writeImage(temp, "blob", content));

        assertArrayEquals(content, Files.readAllBytes(cached));
    }

    @Test
    void shouldRejectImageLargerThanCapAndLeaveNothingBehind() throws Exception {
        Path image = TestImages.writeImage(temp, "big", new byte[200_000]);

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(cacheDir(), 100_000).extract("big", image));

        assertEquals("image 'big.lz4' of program 'big' decompresses to more than 100000 bytes (max.image.size)",
                e.getMessage());
        assertEquals(List.of(), list(cacheDir()));
    }

    @Test
    void shouldRejectFileThatIsNotAnLz4Frame() throws Exception {
        Path image = Files.writeString(temp.resolve("junk.lz4"), "#!/bin/sh\nexit 0\n");

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(cacheDir(), 1 << 20).extract("junk", image));

        assertTrue(e.getMessage().startsWith("image 'junk.lz4' of program 'junk' is not a valid LZ4 frame"),
                e.getMessage());
        assertEquals(List.of(), list(cacheDir()));
    }

    @Test
    void shouldRejectTruncatedImage() throws Exception {
        byte[] content = new byte[100_000];
        new Random(2).nextBytes(content);
        Path image = TestImages.writeImage(temp, "cut", content);
        byte[] compressed = Files.readAllBytes(image);
        Files.write(image, java.util.Arrays.copyOf(compressed, compressed.length / 2));

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(cacheDir(), 1 << 20).extract("cut", image));

        assertTrue(e.getMessage().contains("is not a valid LZ4 frame"), e.getMessage());
        assertEquals(List.of(), list(cacheDir()));
    }

    @Test
    void shouldRejectImageWithCorruptBlock() throws Exception {
        byte[] content = "hello hello hello hello hello hello".repeat(100).getBytes(StandardCharsets.UTF_8);
        Path image = TestImages.writeImage(temp, "flip", content);
        byte[] compressed = Files.readAllBytes(image);
        compressed[compressed.length / 2] ^= 0x5a;
        Files.write(image, compressed);

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(cacheDir(), 1 << 20).extract("flip", image));

        assertTrue(e.getMessage().contains("is not a valid LZ4 frame"), e.getMessage());
        assertEquals(List.of(), list(cacheDir()));
    }

    @Test
    void shouldRejectEmptyImage() throws Exception {
        Path image = TestImages.writeImage(temp, "empty", new byte[0]);

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(cacheDir(), 1 << 20).extract("empty", image));

        assertEquals("image 'empty.lz4' of program 'empty' holds no data", e.getMessage());
    }

    @Test
    void shouldFailClearlyWhenCacheDirectoryCannotBeCreated() throws Exception {
        Path blocker = Files.writeString(temp.resolve("file"), "x");
        Path image = TestImages.writeImage(temp, "prog", "x");

        LaunchException e = assertThrows(LaunchException.class,
                () -> new ImageCache(blocker.resolve("images"), 1 << 20).extract("prog", image));

        assertTrue(e.getMessage().startsWith("cannot create image cache"), e.getMessage());
    }

    @Test
    void shouldKeepCacheNamesWithinFileNameLimit() {
        String digest = "a".repeat(64);

        assertEquals("p-" + digest, ImageCache.cacheName("p", digest));
        assertTrue(ImageCache.cacheName("p".repeat(255), digest).length() <= 255);
        assertTrue(ImageCache.cacheName("p".repeat(255), digest).endsWith("-" + digest));
    }

    @Test
    void shouldRejectNonPositiveCap() {
        assertThrows(IllegalArgumentException.class, () -> new ImageCache(cacheDir(), 0));
    }
}
