package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.RingDescriptor;

/**
 * A world of ranks in one process, a thread each, linked pairwise by {@link RingLink}s over rings
 * in direct memory: small rings by default, so that long messages go in many records and offers
 * stop half-way, as between two ranks of one node.
 */
final class RingWorld {

    /** What one rank runs. */
    @FunctionalInterface
    interface Program {
        void run(Communicator world) throws Exception;
    }

    private final int size;
    private final MessageRing[][] rings;

    RingWorld(int size, int ringCapacity) {
        this.size = size;
        this.rings = new MessageRing[size][size];
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (i != j) {
                    rings[i][j] = new MappedMessageRing(
                            ByteBuffer.allocateDirect(RingDescriptor.RING_HEADER_LENGTH + ringCapacity));
                }
            }
        }
    }

    RingWorld(int size) {
        this(size, 4096);
    }

    /** The fabric of rank {@code self}: a link per peer, every link polled. */
    Fabric fabric(int self) {
        Link[] links = new Link[size];
        for (int j = 0; j < size; j++) {
            if (j != self) {
                links[j] = new RingLink(rings[self][j], rings[j][self], null, null);
            }
        }
        return new Fabric() {
            @Override
            public Link link(int peer) {
                return links[peer];
            }

            @Override
            public void listen(int peer) {
            }

            @Override
            public int poll(Link.Sink sink) {
                int n = 0;
                for (Link l : links) {
                    if (l != null) {
                        n += l.poll(sink);
                    }
                }
                return n;
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * Runs {@code program} on every rank, each in its own thread with its own engine.
     *
     * @param timeoutSeconds each engine's longest wait
     * @return each rank's failure, {@code null} where it succeeded
     */
    List<Throwable> run(long timeoutSeconds, Program program) throws InterruptedException {
        List<Throwable> failures = new ArrayList<>();
        Thread[] threads = new Thread[size];
        Throwable[] failed = new Throwable[size];
        for (int r = 0; r < size; r++) {
            final int rank = r;
            threads[r] = new Thread(() -> {
                try (Engine engine = new Engine(rank, size, fabric(rank), TimeUnit.SECONDS.toNanos(timeoutSeconds))) {
                    program.run(Communicator.world(engine));
                } catch (Throwable t) {
                    failed[rank] = t;
                }
            }, "rank-" + r);
            threads[r].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (Throwable t : failed) {
            failures.add(t);
        }
        return failures;
    }

    /** Runs {@code program} on every rank and rethrows the first failure. */
    void runAll(Program program) throws Exception {
        List<Throwable> failures = run(20, program);
        for (int r = 0; r < failures.size(); r++) {
            Throwable t = failures.get(r);
            if (t != null) {
                throw new AssertionError("rank " + r + " of " + size + ": " + t, t);
            }
        }
    }
}
