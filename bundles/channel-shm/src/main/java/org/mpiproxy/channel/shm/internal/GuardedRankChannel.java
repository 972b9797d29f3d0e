package org.mpiproxy.channel.shm.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RingFaultException;

/**
 * The channel the manager hands out: a mapped channel whose rings turn a fault of their shared
 * memory (the JVM's {@link InternalError} when a mapped page cannot be had) into a
 * {@link RingFaultException} that names the file, the job and the rank, and says whether the
 * channel base has run out of space. Thread-safety as the channel it wraps.
 */
final class GuardedRankChannel implements RankChannel {

    /** Below this many usable bytes the channel base counts as full when a ring faults. */
    static final long FULL_BELOW_BYTES = 64 * 1024;

    private final RankChannel channel;
    private final Path baseDirectory;
    private final GuardedRing toRank;
    private final GuardedRing fromRank;

    /**
     * @param channel       the mapped channel
     * @param baseDirectory the channel base its file lives in, named when it is full
     */
    GuardedRankChannel(RankChannel channel, Path baseDirectory) {
        this.channel = channel;
        this.baseDirectory = baseDirectory;
        this.toRank = new GuardedRing(channel.toRank(), this, "toRank");
        this.fromRank = new GuardedRing(channel.fromRank(), this, "fromRank");
    }

    @Override
    public long jobId() {
        return channel.jobId();
    }

    @Override
    public int rankId() {
        return channel.rankId();
    }

    @Override
    public Path path() {
        return channel.path();
    }

    @Override
    public MessageRing toRank() {
        channel.toRank(); // fails when closed, as the wrapped channel does
        return toRank;
    }

    @Override
    public MessageRing fromRank() {
        channel.fromRank();
        return fromRank;
    }

    @Override
    public void close() {
        channel.close();
    }

    @Override
    public String toString() {
        return channel.toString();
    }

    /**
     * @param ring  which ring faulted
     * @param cause the fault
     * @return the ring error naming the file, the job, the rank and, when the channel base has
     *         (almost) no space left, that
     */
    RingFaultException fault(String ring, Throwable cause) {
        return fault(baseDirectory, channel.jobId(), channel.rankId(), channel.path(), ring, cause);
    }

    static RingFaultException fault(Path base, long jobId, int rankId, Path file, String ring, Throwable cause) {
        long usable = usableBytes(base);
        String what = usable >= 0 && usable < FULL_BELOW_BYTES ? "no space left in the channel base " + base
                : "a fault in the shared memory of the channel (its file cut shorter, or its file system failing;"
                        + " usable in " + base + ": " + (usable < 0 ? "unknown" : usable + " bytes") + ")";
        return new RingFaultException(what + " for job " + String.format("%016x", jobId) + " rank " + rankId
                + " (ring " + ring + " of " + file + ")", jobId, rankId, file, cause);
    }

    /** @return usable bytes of the file system of {@code directory}, -1 when it cannot be read */
    static long usableBytes(Path directory) {
        try {
            return Files.getFileStore(directory).getUsableSpace();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
