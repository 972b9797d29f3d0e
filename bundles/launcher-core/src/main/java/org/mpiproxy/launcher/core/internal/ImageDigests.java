package org.mpiproxy.launcher.core.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The SHA-256 digests of the program images a node accepts, from a file of hex lines
 * ({@code #} starts a comment). {@link #ANY} accepts every image. Immutable and thread-safe.
 */
final class ImageDigests {

    /** No list configured: every image is accepted. */
    static final ImageDigests ANY = new ImageDigests(null, null);

    private final Set<String> allowed;
    private final Path source;

    private ImageDigests(Set<String> allowed, Path source) {
        this.allowed = allowed;
        this.source = source;
    }

    /**
     * @param file the list
     * @return its digests
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when a line is not 64 hex digits, naming file and line
     */
    static ImageDigests load(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Set<String> digests = new HashSet<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            String digest = (hash >= 0 ? line.substring(0, hash) : line).trim().toLowerCase(Locale.ROOT);
            if (digest.isEmpty()) {
                continue;
            }
            if (!digest.matches("[0-9a-f]{64}")) {
                throw new IllegalArgumentException("image.digests=" + file + " line " + (i + 1)
                        + " is not a SHA-256 digest of 64 hex digits: " + line);
            }
            digests.add(digest);
        }
        return new ImageDigests(Set.copyOf(digests), file);
    }

    /**
     * @param sha256Hex an image's digest, lower-case hex
     * @return whether the image may run
     */
    boolean allows(String sha256Hex) {
        return allowed == null || allowed.contains(sha256Hex);
    }

    /** @return the list's file, or {@code null} for {@link #ANY} */
    Path source() {
        return source;
    }

    /** @return how many digests the list holds, -1 for {@link #ANY} */
    int size() {
        return allowed == null ? -1 : allowed.size();
    }
}
