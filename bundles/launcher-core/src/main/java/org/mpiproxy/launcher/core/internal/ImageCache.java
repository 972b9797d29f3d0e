package org.mpiproxy.launcher.core.internal;

import java.io.BufferedInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;

import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4FrameInputStream;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.PrivateDirectories;

/**
 * Decompressed program images, kept in a private directory under a name made of the program
 * name and the SHA-256 of the compressed image, so an unchanged image is extracted once and a
 * changed one again. Files appear atomically (written to a temporary file, then renamed).
 * Thread-safe: concurrent extractions of one image each write their own temporary file.
 */
final class ImageCache {

    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(OWNER_ONLY);
    private static final int BUFFER_SIZE = 64 * 1024;
    private static final int SHA256_HEX_LENGTH = 64;
    /** Keeps {@code <prefix>-<digest>} within the usual 255-byte file name limit. */
    private static final int MAX_PREFIX_LENGTH = 255 - 1 - SHA256_HEX_LENGTH - 2;
    static final String TEMPORARY_PREFIX = ".extract-";
    static final String TEMPORARY_SUFFIX = ".tmp";
    /** The directory of the images of jobs' users, one directory per group. */
    static final String GROUPS = "groups";

    /** With a rank user: its group may search the directory and read and run the images, nothing more. */
    private static final Set<PosixFilePermission> GROUP_SEARCH = PosixFilePermissions.fromString("rwx--x---");
    private static final Set<PosixFilePermission> GROUP_RUN = PosixFilePermissions.fromString("rwxr-x---");

    private final Path directory;
    private final long maxImageSize;
    private final ImageDigests digests;
    /** Group of the rank user, or -1 when ranks run as the proxy's own user. */
    private final long rankGroup;

    /**
     * @param directory    the cache directory; created with mode 0700 on first use
     * @param maxImageSize the largest decompressed image accepted, in bytes, &gt; 0
     */
    ImageCache(Path directory, long maxImageSize) {
        this(directory, maxImageSize, ImageDigests.ANY);
    }

    /**
     * @param directory    the cache directory
     * @param maxImageSize the largest decompressed image accepted, in bytes, &gt; 0
     * @param digests      the images accepted
     */
    ImageCache(Path directory, long maxImageSize, ImageDigests digests) {
        this(directory, maxImageSize, digests, -1);
    }

    /**
     * @param directory    the cache directory
     * @param maxImageSize the largest decompressed image accepted, in bytes
     * @param digests      the images accepted
     * @param rankGroup    the gid ranks run with when they run as another user (directory and
     *                     images get that group, which may run but not change them), or -1
     */
    ImageCache(Path directory, long maxImageSize, ImageDigests digests, long rankGroup) {
        this.rankGroup = rankGroup;
        this.digests = digests;
        this.directory = Objects.requireNonNull(directory, "directory");
        if (maxImageSize <= 0) {
            throw new IllegalArgumentException("max.image.size=" + maxImageSize + " must be > 0");
        }
        this.maxImageSize = maxImageSize;
    }

    Path directory() {
        return directory;
    }

    long maxImageSize() {
        return maxImageSize;
    }

    /**
     * Returns the executable for an image, extracting it unless already cached.
     *
     * @param program the program name
     * @param image   its LZ4 frame image
     * @return the cached executable, mode 0700
     * @throws LaunchException with MPI_ERR_IO when the image cannot be read, is corrupt, is
     *                         larger than the cap or the cache cannot be written
     */
    Path extract(String program, Path image) throws LaunchException {
        String digest;
        try {
            digest = sha256Hex(image);
        } catch (IOException e) {
            throw failure("cannot read " + describe(program, image) + ": " + e.getMessage(), e);
        }
        checkAllowed(program, image, digest);
        prepareDirectory(program);
        Path cached = directory.resolve(cacheName(program, digest));
        if (Files.isRegularFile(cached, LinkOption.NOFOLLOW_LINKS) && Files.isExecutable(cached)) {
            try {
                shareWithRankGroup(cached, GROUP_RUN);
            } catch (IOException e) {
                throw failure("cannot give image cache file " + cached + " to group " + rankGroup + ": " + e, e);
            }
            return cached;
        }
        Path temporary;
        try {
            temporary = Files.createTempFile(directory, TEMPORARY_PREFIX, TEMPORARY_SUFFIX, OWNER_ONLY_ATTRIBUTE);
        } catch (IOException e) {
            throw failure("cannot write to image cache " + directory + " for program '" + program + "': " + e, e);
        }
        try {
            String extractedDigest = decompress(program, image, temporary);
            // the image may have changed since it was checked: the bytes run must be on the list
            checkAllowed(program, image, extractedDigest);
            Files.setPosixFilePermissions(temporary, OWNER_ONLY);
            shareWithRankGroup(temporary, GROUP_RUN);
            // Named after the bytes actually extracted, in case the image changed meanwhile.
            Path target = directory.resolve(cacheName(program, extractedDigest));
            Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            LaunchException failure = failure("cannot write to image cache " + directory + " for program '"
                    + program + "': " + e, e);
            discard(temporary, failure);
            throw failure;
        } catch (LaunchException e) {
            discard(temporary, e);
            throw e;
        }
    }

    /**
     * As {@link #extract(String, Path)}, for a rank that runs as a job's user (docs/protocol-v2.md
     * 4.1) with group {@code gid}: unless that is the rank user's group, the image is extracted
     * into {@value #GROUPS}{@code /<gid>} below the cache directory, that group's to search and its
     * images that group's to read and run ({@code rwx--x---}, {@code rwxr-x---}), each group's
     * apart; the cache directory and {@value #GROUPS} become searchable by others, never listable.
     *
     * @param program the program name
     * @param image   its LZ4 frame image
     * @param gid     the group of the rank's user, -1 for none
     * @return the cached executable
     * @throws LaunchException as {@link #extract(String, Path)}
     */
    Path extract(String program, Path image, long gid) throws LaunchException {
        if (gid < 0 || gid == rankGroup) {
            return extract(program, image);
        }
        prepareDirectory(program);
        Path groups = directory.resolve(GROUPS);
        try {
            PrivateDirectories.restrict(groups, PrivateDirectories.SEARCH_ONLY, "image cache " + groups);
            Files.setPosixFilePermissions(groups, PrivateDirectories.SEARCH_ONLY);
        } catch (IOException e) {
            throw failure("cannot create image cache " + groups + " for program '" + program + "': "
                    + e.getMessage(), e);
        }
        // searchable from now on: the groups' directories are reached through it
        prepareDirectory(program);
        return new ImageCache(groups.resolve(Long.toString(gid)), maxImageSize, digests, gid).extract(program, image);
    }

    /**
     * @param program a program name
     * @param digest  the hex SHA-256 of its image
     * @return {@code <program>-<digest>}, the program name cut so the name fits 255 bytes
     */
    static String cacheName(String program, String digest) {
        String prefix = program.length() > MAX_PREFIX_LENGTH ? program.substring(0, MAX_PREFIX_LENGTH) : program;
        return prefix + "-" + digest;
    }

    private String decompress(String program, Path image, Path target) throws LaunchException, IOException {
        MessageDigest sha256 = sha256();
        try (FileOutputStream out = new FileOutputStream(target.toFile());
             InputStream compressed = new BufferedInputStream(
                     new DigestInputStream(open(program, image), sha256), BUFFER_SIZE);
             LZ4FrameInputStream frames = frames(program, image, compressed)) {
            byte[] buffer = new byte[BUFFER_SIZE];
            long total = 0;
            int n;
            while ((n = read(program, image, frames, buffer)) >= 0) {
                total += n;
                if (total > maxImageSize) {
                    throw failure(describe(program, image) + " decompresses to more than " + maxImageSize
                            + " bytes (max.image.size)", null);
                }
                out.write(buffer, 0, n);
            }
            if (total == 0) {
                throw failure(describe(program, image) + " holds no data", null);
            }
            // The digest must cover the whole image, also any bytes the decoder did not need.
            compressed.transferTo(OutputStream.nullOutputStream());
            out.getFD().sync();
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    private static InputStream open(String program, Path image) throws LaunchException {
        try {
            return Files.newInputStream(image);
        } catch (IOException e) {
            throw failure("cannot read " + describe(program, image) + ": " + e.getMessage(), e);
        }
    }

    private static LZ4FrameInputStream frames(String program, Path image, InputStream in) throws LaunchException {
        try {
            return new LZ4FrameInputStream(in, Lz4Codecs.decompressor(), Lz4Codecs.checksum());
        } catch (IOException | LZ4Exception e) {
            throw corrupt(program, image, e);
        }
    }

    private static int read(String program, Path image, LZ4FrameInputStream frames, byte[] buffer)
            throws LaunchException {
        try {
            return frames.read(buffer, 0, buffer.length);
        } catch (IOException | LZ4Exception e) {
            throw corrupt(program, image, e);
        }
    }

    private void prepareDirectory(String program) throws LaunchException {
        try {
            Path parent = directory.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(directory, OWNER_ONLY_ATTRIBUTE);
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(directory)) {
                    throw e;
                }
            }
            // one change of mode: a rank about to run an image never finds the directory closed
            Set<PosixFilePermission> mode = EnumSet.noneOf(PosixFilePermission.class);
            mode.addAll(rankGroup < 0 ? OWNER_ONLY : GROUP_SEARCH);
            if (Files.isDirectory(directory.resolve(GROUPS), LinkOption.NOFOLLOW_LINKS)) {
                mode.addAll(PrivateDirectories.SEARCH_ONLY);
            }
            if (rankGroup >= 0) {
                Files.setAttribute(directory, "unix:gid", (int) rankGroup, LinkOption.NOFOLLOW_LINKS);
            }
            Files.setPosixFilePermissions(directory, mode);
        } catch (IOException e) {
            throw failure("cannot create image cache " + directory + " for program '" + program + "': " + e, e);
        }
    }

    /** With a rank user, gives {@code path} to its group with {@code permissions}; owner-only otherwise. */
    private void shareWithRankGroup(Path path, Set<PosixFilePermission> permissions) throws IOException {
        if (rankGroup < 0) {
            return;
        }
        Files.setAttribute(path, "unix:gid", (int) rankGroup, LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(path, permissions);
    }

    private void checkAllowed(String program, Path image, String digest) throws LaunchException {
        if (!digests.allows(digest)) {
            throw failure(describe(program, image) + " has SHA-256 " + digest + ", which is not in image.digests ("
                    + digests.source() + "); refusing to run it", null);
        }
    }

    private static String sha256Hex(Path file) throws IOException {
        MessageDigest sha256 = sha256();
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha256)) {
            in.transferTo(OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(sha256.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    private static void discard(Path temporary, Exception failure) {
        try {
            Files.deleteIfExists(temporary);
        } catch (IOException e) {
            failure.addSuppressed(e);
        }
    }

    private static String describe(String program, Path image) {
        return "image '" + image.getFileName() + "' of program '" + program + "'";
    }

    private static LaunchException corrupt(String program, Path image, Exception cause) {
        return failure(describe(program, image) + " is not a valid LZ4 frame: " + cause.getMessage(), cause);
    }

    private static LaunchException failure(String message, Throwable cause) {
        return new LaunchException(message, cause);
    }
}
