package org.mpiproxy.mpi.internal.engine;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Rings between two ranks of one job on one node, for the messages they exchange: one file per
 * pair that talks, {@code pair-<low>-<high>.chan} in the job's directory (the same layout as a
 * rank's channel, docs/ring-layout.md), its {@code toRank} ring carrying messages from the lower
 * rank to the higher, {@code fromRank} the other way. Whichever rank needs it first creates the
 * file (exclusively, mode 0600); the other maps it. The proxy removes it with the job's directory.
 */
public final class ShmPairs {

    /** Capacity of each ring of a pair when {@code MPIPROXY_PAIR_RING_BYTES} is not set. */
    public static final int DEFAULT_CAPACITY = 1 << 20;

    /** How long a rank waits for the other to finish writing a pair file it found. */
    static final long READY_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final Path directory;
    private final long jobId;
    private final int self;
    private final int capacity;

    /**
     * @param directory the job's directory (where the rank's own channel file is)
     * @param jobId     the job
     * @param self      this rank
     * @param capacity  bytes of each ring of a pair this rank creates
     */
    public ShmPairs(Path directory, long jobId, int self, int capacity) {
        this.directory = directory;
        this.jobId = jobId;
        this.self = self;
        this.capacity = capacity;
    }

    /** @return the file of the pair {@code a}, {@code b} */
    public static Path file(Path directory, int a, int b) {
        return directory.resolve("pair-" + Math.min(a, b) + "-" + Math.max(a, b) + ".chan");
    }

    /**
     * @param peer the other rank, on this node
     * @return the link to it
     * @throws CommFailure when the pair file cannot be created or mapped
     */
    public RingLink open(int peer) {
        Path file = file(directory, self, peer);
        MappedRankChannel pair = null;
        try {
            try {
                pair = MappedRankChannel.create(file, capacity, jobId, Math.min(self, peer));
            } catch (FileAlreadyExistsException e) {
                pair = mapWhenReady(file);
            }
        } catch (IOException | RuntimeException e) {
            throw new CommFailure(MpiErrors.ERR_IO, "rank " + self + ": no shared memory with rank " + peer + " ("
                    + file + "): " + e.getMessage());
        }
        boolean low = self < peer;
        var out = low ? pair.toRank() : pair.fromRank();
        var in = low ? pair.fromRank() : pair.toRank();
        // neither side sleeps on a doorbell of a pair: it polls, backing off
        out.producerRingsDoorbell(false);
        return new RingLink(out, in, null, pair);
    }

    private static MappedRankChannel mapWhenReady(Path file) throws IOException {
        long start = System.nanoTime();
        while (true) {
            try {
                return MappedRankChannel.map(file);
            } catch (IOException e) {
                // the other rank is still writing it: its header's version is stored last
                if (System.nanoTime() - start > READY_NANOS) {
                    throw e;
                }
                LockSupport.parkNanos(100_000);
            }
        }
    }
}
