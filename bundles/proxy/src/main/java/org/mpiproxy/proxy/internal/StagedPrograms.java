package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Programs hosts stage to this node (docs/protocol-v2.md 5.8): fragments of a file named by its
 * SHA-256 come in any order and any number of times; once all are here and the content has that
 * digest, it becomes {@code <directory>/sha256-<hex>}, executable, and stays as a cache for every
 * later job. A file larger than {@code stage.max.bytes}, or than the free space of the directory's
 * file system less {@link #FREE_SPACE_MARGIN}, is refused at its first fragment, before anything is
 * kept of it. Partial files are written to disk as their fragments come ({@code .staging-*.part}
 * in the proxy's directory, owner-only), never held on the heap; at most {@link #MAX_PARTIAL_FILES} at
 * once, each dropped when no fragment came for a while. The directory is the proxy's
 * ({@code rwx--x--x}: ranks of another user run a program by its name, nobody lists them). A program
 * a user stages with her job key (4.1) is hers only: it goes to her own directory
 * {@code u<uid>} ({@link StagedFiles#userDirectory}, made hers with {@code rwx------}, refused when
 * it is a link, another's or others may write it), owned by her with {@code r-x------}, renamed
 * there from its partial file; the cache is per directory, so another user's copy of the same
 * content is hers again. The limits count every directory's files together; {@link StagedRetention}
 * deletes users' programs not used for a while, and their directories left empty. Relay thread only.
 */
final class StagedPrograms {

    /** Default of {@code stage.max.bytes}, the largest file a host may stage: 1 GiB. */
    static final long MAX_FILE_BYTES = 1L << 30;
    /** Free space a staged file must leave on the directory's file system. */
    static final long FREE_SPACE_MARGIN = 64L << 20;
    /** The most files arriving at once. */
    static final int MAX_PARTIAL_FILES = 64;
    /** A partial file that got no fragment for this long is dropped. */
    static final long IDLE_NANOS = 60_000_000_000L;
    /** Length of the digest that starts every fragment's payload. */
    static final int DIGEST_LENGTH = 32;
    /** The mode of a program a user staged: hers to run, nobody else's. */
    private static final String USER_PROGRAM_MODE = "r-x------";

    /**
     * The outcome of one request: a result code, whether the file is complete here, why not, and
     * for {@link MpiErrors#ERR_MESSAGE_TOO_LARGE} the largest file the node takes now.
     */
    record Outcome(int result, boolean complete, String problem, long limit) {

        Outcome(int result, boolean complete, String problem) {
            this(result, complete, problem, 0);
        }
    }

    /** A file arriving: its fragments so far, in a file of its own. */
    private static final class Partial {
        final Path file;
        final long size;
        final int chunk;
        final int count;
        final BitSet have;
        FileChannel channel;
        long touched;

        Partial(Path file, long size, int chunk, int count, BitSet have) {
            this.file = file;
            this.size = size;
            this.chunk = chunk;
            this.count = count;
            this.have = have;
        }
    }

    private final Path directory;
    private final LongSupplier maxFileBytes;
    private final ToLongFunction<Path> usableSpace;
    private final Map<String, Partial> partials = new HashMap<>();
    /** The announced sizes of the partial files, all together. */
    private long partialBytes;

    /** @param directory where complete programs go (created when needed) */
    StagedPrograms(Path directory) {
        this(directory, () -> MAX_FILE_BYTES, StagedPrograms::usableSpace);
    }

    /**
     * @param directory    where complete programs go (created when needed)
     * @param maxFileBytes the largest file taken ({@code stage.max.bytes}), asked at each new file
     * @param usableSpace  the bytes free for a new file on the file system of an existing directory
     */
    StagedPrograms(Path directory, LongSupplier maxFileBytes, ToLongFunction<Path> usableSpace) {
        this.directory = directory;
        this.maxFileBytes = maxFileBytes;
        this.usableSpace = usableSpace;
    }

    Path directory() {
        return directory;
    }

    /** @return the bytes usable on the directory's file system, 0 when it cannot be measured */
    static long usableSpace(Path directory) {
        try {
            FileStore store = Files.getFileStore(directory);
            return store.getUsableSpace();
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * @param size     the file's length (the request's argument)
     * @param index    this fragment (the sequence), or any value for a probe
     * @param count    the file's fragments (the ack); 0: a probe, does the node have the file?
     * @param chunk    bytes of every fragment but the last (the tag)
     * @param payload  the digest, then this fragment's bytes
     * @param now      nanos, for dropping idle partial files
     * @return what to answer
     */
    Outcome onFragment(long size, long index, long count, long chunk, ByteBuffer payload, int offset, int length,
                       long now) {
        return onFragment(null, size, index, count, chunk, payload, offset, length, now);
    }

    /**
     * As {@link #onFragment(long, long, long, long, ByteBuffer, int, int, long)}, for a user.
     *
     * @param user the user whose job key signed the request, whose own directory takes the program;
     *             {@code null} under a cluster key (the shared directory)
     */
    Outcome onFragment(RankIdentity user, long size, long index, long count, long chunk, ByteBuffer payload,
                       int offset, int length, long now) {
        purge(now);
        if (length < DIGEST_LENGTH) {
            return new Outcome(MpiErrors.ERR_ARG, false, "payload of " + length + " bytes has no digest");
        }
        byte[] digest = new byte[DIGEST_LENGTH];
        payload.get(offset, digest);
        String name = user == null ? StagedFiles.name(digest)
                : StagedFiles.USER_PREFIX + user.uid() + "/" + StagedFiles.name(digest);
        Path file = directory.resolve(name);
        String refused = user == null ? null : StagedFiles.problem(file.getParent(), user.uid());
        if (refused != null) {
            return new Outcome(MpiErrors.ERR_IO, false, "cannot store " + name + ": " + refused);
        }
        if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            if (user != null) {
                StagedRetention.used(file); // asked for: its launcher's EXEC follows, no sweep takes it meanwhile
            }
            return new Outcome(MpiErrors.SUCCESS, true, null);
        }
        if (count == 0) {
            return new Outcome(MpiErrors.SUCCESS, false, null);
        }
        Partial p = partials.get(name);
        if (p == null) {
            // before anything is kept of the file: its announced size is checked against the limits
            long limit = maxFileBytes.getAsLong();
            if (size < 0 || size > limit) {
                return new Outcome(MpiErrors.ERR_MESSAGE_TOO_LARGE, false, name + " of " + size + " bytes, more than"
                        + " stage.max.bytes=" + limit, limit);
            }
        }
        if (chunk < 1 || chunk > 65535 || count != Math.max(1, (size + chunk - 1) / chunk) || index < 0
                || index >= count) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment " + index + " of " + count + ", "
                    + chunk + " bytes each, does not cut " + size + " bytes");
        }
        long from = index * chunk;
        int expected = (int) Math.min(chunk, size - from);
        if (length - DIGEST_LENGTH != expected) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment " + index + " holds "
                    + (length - DIGEST_LENGTH) + " bytes, not " + expected);
        }
        if (p == null) {
            Outcome notBegun = begin(user, name, size, (int) chunk, (int) count, now);
            if (notBegun != null) {
                return notBegun;
            }
            p = partials.get(name);
        } else if (p.size != size || p.chunk != chunk) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment of a " + size + "-byte file, "
                    + p.size + " bytes announced first");
        }
        p.touched = now;
        if (!p.have.get((int) index)) {
            try {
                write(p, payload.duplicate().limit(offset + length).position(offset + DIGEST_LENGTH), from);
            } catch (IOException e) {
                drop(name, p);
                return new Outcome(MpiErrors.ERR_IO, false, "cannot write " + p.file + ": " + e.getMessage());
            }
            p.have.set((int) index);
        }
        if (p.have.cardinality() < p.count) {
            return new Outcome(MpiErrors.SUCCESS, false, null);
        }
        return complete(user, name, p, file, digest);
    }

    /**
     * Starts a file: checks the free space and the number of files arriving, then makes its partial
     * file. The staged directory, and the user's own, are made (or checked) here.
     *
     * @return {@code null} when it started, else the refusal
     */
    private Outcome begin(RankIdentity user, String name, long size, int chunk, int count, long now) {
        if (partials.size() >= MAX_PARTIAL_FILES) {
            return new Outcome(MpiErrors.ERR_NO_MEM, false, "staging " + name + ": " + partials.size()
                    + " other files are arriving; try again later");
        }
        try {
            PrivateDirectories.restrict(directory, PrivateDirectories.SEARCH_ONLY, "staged directory " + directory);
            if (user != null) {
                userDirectory(user);
            }
        } catch (IOException e) {
            return new Outcome(MpiErrors.ERR_IO, false, "cannot store " + name + ": " + e.getMessage());
        }
        long room = usableSpace.applyAsLong(directory) - FREE_SPACE_MARGIN;
        if (size > room) {
            long limit = Math.max(0, room);
            return new Outcome(MpiErrors.ERR_MESSAGE_TOO_LARGE, false, name + " of " + size + " bytes, more than"
                    + " the free space of " + directory + " less " + FREE_SPACE_MARGIN + " bytes (" + limit + ")",
                    limit);
        }
        if (size + partialBytes > room) {
            return new Outcome(MpiErrors.ERR_NO_MEM, false, "staging " + name + ": " + partialBytes
                    + " bytes of other files are arriving and " + room + " bytes are free; try again later");
        }
        Partial p;
        try {
            Path part = Files.createTempFile(directory, ".staging-", ".part",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            p = new Partial(part, size, chunk, count, new BitSet(count));
            p.channel = FileChannel.open(part, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return new Outcome(MpiErrors.ERR_IO, false, "cannot store " + name + ": " + e.getMessage());
        }
        p.touched = now;
        partials.put(name, p);
        partialBytes += size;
        return null;
    }

    private static void write(Partial p, ByteBuffer bytes, long position) throws IOException {
        long at = position;
        while (bytes.hasRemaining()) {
            at += p.channel.write(bytes, at);
        }
    }

    /**
     * Makes a user's own directory, hers with {@code rwx------}, or checks the one there. It is made in
     * the proxy's directory, which nobody else writes, so no name in between can be swapped.
     *
     * @return the directory
     * @throws IOException with one line when it is refused or cannot be made hers
     */
    private Path userDirectory(RankIdentity user) throws IOException {
        Path own = StagedFiles.userDirectory(directory, user.uid());
        String problem = StagedFiles.problem(own, user.uid());
        if (problem != null) {
            throw new IOException(problem);
        }
        if (Files.exists(own, LinkOption.NOFOLLOW_LINKS)) {
            return own;
        }
        Files.createDirectory(own, PosixFilePermissions.asFileAttribute(PrivateDirectories.OWNER_ONLY));
        try {
            // the process's umask may have taken bits of the mode
            Files.getFileAttributeView(own, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setPermissions(PrivateDirectories.OWNER_ONLY);
            giveAway(own, user);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(own);
            throw new IOException("cannot give staged directory " + own + " to " + user + ": " + e.getMessage(), e);
        }
        return own;
    }

    /** Gives a file of the proxy's directory (not followed if a link) to a user. */
    private static void giveAway(Path path, RankIdentity user) throws IOException {
        Files.setAttribute(path, "unix:gid", (int) user.gid(), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(path, "unix:uid", (int) user.uid(), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * The last fragment came: the content is checked against its digest and becomes the program, for
     * a user hers ({@value #USER_PROGRAM_MODE}) in her directory, checked again just before.
     */
    private Outcome complete(RankIdentity user, String name, Partial p, Path file, byte[] digest) {
        partials.remove(name);
        partialBytes -= p.size;
        try {
            p.channel.close();
            if (!Arrays.equals(sha256(p.file), digest)) {
                Files.deleteIfExists(p.file);
                return new Outcome(MpiErrors.ERR_ARG, false, name + ": the content has another SHA-256; dropped");
            }
            Files.getFileAttributeView(p.file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setPermissions(PosixFilePermissions.fromString(user == null ? "rwxr-xr-x" : USER_PROGRAM_MODE));
            if (user != null) {
                userDirectory(user);
                giveAway(p.file, user);
            }
            try {
                move(p.file, file);
            } catch (NoSuchFileException e) {
                if (user == null) {
                    throw e;
                }
                // the retention sweep removed her directory, empty, in between: made again
                userDirectory(user);
                move(p.file, file);
            }
        } catch (IOException e) {
            deleteQuietly(p.file);
            return new Outcome(MpiErrors.ERR_IO, false, "cannot store " + file + ": " + e.getMessage());
        }
        return new Outcome(MpiErrors.SUCCESS, true, null);
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * @return the partial files as plain values, for the next revision of the proxy ({@link HandOver})
     *         or the next start of the node: name to {@code {Path file, Long size, Integer chunk,
     *         Integer count, long[] fragments here}}; this instance lets go of them
     */
    Map<String, Object[]> export() {
        Map<String, Object[]> m = new HashMap<>();
        partials.forEach((name, p) -> {
            closeQuietly(p);
            m.put(name, new Object[] {p.file, p.size, p.chunk, p.count, p.have.toLongArray()});
        });
        partials.clear();
        partialBytes = 0;
        return m;
    }

    /**
     * Goes on with the partial files a previous revision's {@link #export()} gave (also in the form
     * of revisions that held them in memory); an entry of another shape, or one whose file is gone,
     * is dropped (its host stages it again).
     *
     * @param now nanos: the files count as touched now
     */
    void restore(Object exported, long now) {
        if (!(exported instanceof Map<?, ?> m)) {
            return;
        }
        m.forEach((name, value) -> {
            if (!(name instanceof String n) || !(value instanceof Object[] a) || partials.containsKey(n)
                    || partials.size() >= MAX_PARTIAL_FILES) {
                return;
            }
            try {
                Partial p = null;
                if (a.length == 5 && a[0] instanceof Path file && a[1] instanceof Long size
                        && a[2] instanceof Integer chunk && a[3] instanceof Integer count && a[4] instanceof long[] have
                        && file.getParent() != null && file.getParent().equals(directory)) {
                    p = new Partial(file, size, chunk, count, BitSet.valueOf(have));
                    p.channel = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                } else if (a.length == 4 && a[0] instanceof byte[] data && a[1] instanceof Integer chunk
                        && a[2] instanceof Integer count && a[3] instanceof BitSet have
                        && data.length <= maxFileBytes.getAsLong()) {
                    PrivateDirectories.restrict(directory, PrivateDirectories.SEARCH_ONLY,
                            "staged directory " + directory);
                    Path part = Files.createTempFile(directory, ".staging-", ".part",
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                    p = new Partial(part, data.length, chunk, count, have);
                    p.channel = FileChannel.open(part, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                    write(p, ByteBuffer.wrap(data), 0);
                }
                if (p != null) {
                    p.touched = now;
                    partials.put(n, p);
                    partialBytes += p.size;
                }
            } catch (IOException | RuntimeException e) {
                // dropped: its host stages it again
            }
        });
    }

    private void purge(long now) {
        for (Iterator<Partial> it = partials.values().iterator(); it.hasNext(); ) {
            Partial p = it.next();
            if (now - p.touched > IDLE_NANOS) {
                partialBytes -= p.size;
                it.remove();
                closeQuietly(p);
                deleteQuietly(p.file);
            }
        }
    }

    private void drop(String name, Partial p) {
        partials.remove(name);
        partialBytes -= p.size;
        closeQuietly(p);
        deleteQuietly(p.file);
    }

    private static void closeQuietly(Partial p) {
        try {
            p.channel.close();
        } catch (IOException e) {
            // the file is dropped or handed over by name: a failed close loses nothing of it
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // a partial file left behind is never run: no program has its name
        }
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] sha256(Path file) throws IOException {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Channels.newInputStream(FileChannel.open(file, StandardOpenOption.READ,
                LinkOption.NOFOLLOW_LINKS))) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                sha.update(buffer, 0, n);
            }
        }
        return sha.digest();
    }
}
