package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Programs hosts stage to this node (docs/protocol-v2.md 5.8): fragments of a file named by its
 * SHA-256 come in any order and any number of times; once all are here and the content has that
 * digest, it becomes {@code <directory>/sha256-<hex>}, executable, and stays as a cache for every
 * later job. Partial files live in memory, bounded per file and in all, and are dropped when no
 * fragment came for a while. Relay thread only.
 */
final class StagedPrograms {

    /** The largest file a host may stage. */
    static final long MAX_FILE_BYTES = 256L << 20;
    /** The most bytes of partial files held at once. */
    static final long MAX_PARTIAL_BYTES = 512L << 20;
    /** A partial file that got no fragment for this long is dropped. */
    static final long IDLE_NANOS = 60_000_000_000L;
    /** Length of the digest that starts every fragment's payload. */
    static final int DIGEST_LENGTH = 32;

    /** The outcome of one request: a result code, whether the file is complete here, and why not. */
    record Outcome(int result, boolean complete, String problem) {
    }

    private static final class Partial {
        final byte[] data;
        final int chunk;
        final int count;
        final BitSet have;
        long touched;

        Partial(int size, int chunk, int count) {
            this(new byte[size], chunk, count, new BitSet(count));
        }

        Partial(byte[] data, int chunk, int count, BitSet have) {
            this.data = data;
            this.chunk = chunk;
            this.count = count;
            this.have = have;
        }
    }

    private final Path directory;
    private final Map<String, Partial> partials = new HashMap<>();
    private long partialBytes;

    /** @param directory where complete programs go (created when needed) */
    StagedPrograms(Path directory) {
        this.directory = directory;
    }

    Path directory() {
        return directory;
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
        purge(now);
        if (length < DIGEST_LENGTH) {
            return new Outcome(MpiErrors.ERR_ARG, false, "payload of " + length + " bytes has no digest");
        }
        byte[] digest = new byte[DIGEST_LENGTH];
        payload.get(offset, digest);
        String name = StagedFiles.name(digest);
        Path file = directory.resolve(name);
        if (Files.isRegularFile(file)) {
            return new Outcome(MpiErrors.SUCCESS, true, null);
        }
        if (count == 0) {
            return new Outcome(MpiErrors.SUCCESS, false, null);
        }
        if (size < 0 || size > MAX_FILE_BYTES) {
            return new Outcome(MpiErrors.ERR_MESSAGE_TOO_LARGE, false, name + " of " + size + " bytes, more than "
                    + MAX_FILE_BYTES);
        }
        if (chunk < 1 || chunk > 65535 || count != Math.max(1, (size + chunk - 1) / chunk) || index < 0
                || index >= count) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment " + index + " of " + count + ", "
                    + chunk + " bytes each, does not cut " + size + " bytes");
        }
        int from = (int) (index * chunk);
        int expected = (int) Math.min(chunk, size - from);
        if (length - DIGEST_LENGTH != expected) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment " + index + " holds "
                    + (length - DIGEST_LENGTH) + " bytes, not " + expected);
        }
        Partial p = partials.get(name);
        if (p == null) {
            if (partialBytes + size > MAX_PARTIAL_BYTES) {
                return new Outcome(MpiErrors.ERR_NO_MEM, false, "staging " + name + ": " + partialBytes
                        + " bytes of other files are arriving; try again later");
            }
            p = new Partial((int) size, (int) chunk, (int) count);
            partials.put(name, p);
            partialBytes += size;
        } else if (p.data.length != size || p.chunk != chunk) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": fragment of a " + size + "-byte file, "
                    + p.data.length + " bytes announced first");
        }
        p.touched = now;
        if (!p.have.get((int) index)) {
            payload.get(offset + DIGEST_LENGTH, p.data, from, expected);
            p.have.set((int) index);
        }
        if (p.have.cardinality() < p.count) {
            return new Outcome(MpiErrors.SUCCESS, false, null);
        }
        partials.remove(name);
        partialBytes -= p.data.length;
        if (!Arrays.equals(sha256(p.data), digest)) {
            return new Outcome(MpiErrors.ERR_ARG, false, name + ": the content has another SHA-256; dropped");
        }
        try {
            store(file, p.data);
        } catch (IOException e) {
            return new Outcome(MpiErrors.ERR_IO, false, "cannot store " + file + ": " + e.getMessage());
        }
        return new Outcome(MpiErrors.SUCCESS, true, null);
    }

    /**
     * @return the partial files as plain values, for the next revision of the proxy ({@link HandOver}):
     *         name to {@code {byte[] data, Integer chunk, Integer count, BitSet have}}
     */
    Map<String, Object[]> export() {
        Map<String, Object[]> m = new HashMap<>();
        partials.forEach((name, p) -> m.put(name, new Object[] {p.data, p.chunk, p.count, p.have}));
        return m;
    }

    /**
     * Goes on with the partial files a previous revision's {@link #export()} gave; an entry of
     * another shape is dropped (its host stages it again).
     *
     * @param now nanos: the files count as touched now
     */
    void restore(Object exported, long now) {
        if (!(exported instanceof Map<?, ?> m)) {
            return;
        }
        m.forEach((name, value) -> {
            if (name instanceof String n && value instanceof Object[] a && a.length == 4 && a[0] instanceof byte[] data
                    && a[1] instanceof Integer chunk && a[2] instanceof Integer count && a[3] instanceof BitSet have
                    && partialBytes + data.length <= MAX_PARTIAL_BYTES) {
                Partial p = new Partial(data, chunk, count, have);
                p.touched = now;
                partials.put(n, p);
                partialBytes += data.length;
            }
        });
    }

    private void store(Path file, byte[] data) throws IOException {
        Files.createDirectories(directory);
        Path tmp = Files.createTempFile(directory, ".staging-", ".tmp");
        try {
            Files.write(tmp, data);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private void purge(long now) {
        for (Iterator<Partial> it = partials.values().iterator(); it.hasNext(); ) {
            Partial p = it.next();
            if (now - p.touched > IDLE_NANOS) {
                partialBytes -= p.data.length;
                it.remove();
            }
        }
    }

    static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
