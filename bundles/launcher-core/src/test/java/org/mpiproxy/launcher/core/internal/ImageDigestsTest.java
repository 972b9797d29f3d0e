package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;

class ImageDigestsTest {

    @TempDir
    Path temp;

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test
    void shouldRunListedImagesAndRefuseOthers() throws Exception {
        Path images = Files.createDirectories(temp.resolve("images"));
        Path good = TestImages.writeImage(images, "good", "#!/bin/sh\necho good\n");
        Path bad = TestImages.writeImage(images, "bad", "#!/bin/sh\necho bad\n");
        Path list = Files.writeString(temp.resolve("image.digests"),
                "# programs this node runs\n" + sha256(good).toUpperCase() + "  # good\n\n");
        ImageCache cache = new ImageCache(temp.resolve("cache"), 1 << 20,
                CoreLauncherComponent.digests(list.toString()));

        assertTrue(Files.isExecutable(cache.extract("good", good)));
        LaunchException e = assertThrows(LaunchException.class, () -> cache.extract("bad", bad));
        assertTrue(e.getMessage().contains("not in image.digests"), e.getMessage());
        assertTrue(e.getMessage().contains(sha256(bad)), e.getMessage());
        try (var cached = Files.list(temp.resolve("cache"))) {
            assertEquals(1, cached.count(), "nothing of the refused image is extracted");
        }
    }

    @Test
    void shouldAcceptAnyImageWithoutAList() throws Exception {
        Path image = TestImages.writeImage(temp, "any", "#!/bin/sh\n");
        assertTrue(Files.isExecutable(new ImageCache(temp.resolve("cache"), 1 << 20,
                CoreLauncherComponent.digests("")).extract("any", image)));
    }

    @Test
    void shouldRejectMalformedOrMissingLists() throws Exception {
        Path list = Files.writeString(temp.resolve("image.digests"), "abc123\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CoreLauncherComponent.digests(list.toString()));
        assertTrue(e.getMessage().contains("line 1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CoreLauncherComponent.digests(temp.resolve("missing").toString()));
        assertTrue(e.getMessage().startsWith("image.digests="), e.getMessage());
    }
}
