package org.mpiproxy.itests;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;

/**
 * The host side of mpiprime's rank 1 over v1, pulled in portions: a RECV stream that tolerates a
 * lost request (after a few silent rounds it asks again for what is missing). Elements are never
 * asked for twice in a way that could duplicate them: each one leaves the rank's ring once, in
 * order, so {@link #bytes} holds every flag exactly once when nothing was lost.
 */
final class PrimeStream {

    /** Elements asked for by one RECV. */
    private static final long REQUEST = 100_000;
    private static final int SILENT_ROUNDS_BEFORE_RESEND = 3;

    final FreeNosHost host;
    final long total;
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final Duration timeout;
    long requested;
    long received;

    /**
     * @param host    the job's host, its receive timeout the silence after which a RECV counts as lost
     * @param total   the elements rank 1 sends
     * @param timeout how long the stream may go without a single element before it counts as stalled
     */
    PrimeStream(FreeNosHost host, long total, Duration timeout) {
        this.host = host;
        this.total = total;
        this.timeout = timeout;
    }

    /**
     * Receives until {@code upTo} elements have arrived in all. A busy machine may make the stream
     * slow, not wrong: only a stream that brings nothing for the whole timeout fails.
     */
    void receive(long upTo) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        int silent = 0;
        while (received < upTo) {
            if (requested <= received) {
                long want = Math.min(REQUEST, total - received);
                host.sendRaw(FreeNosHost.header(FreeNosHost.RECV, 0, 1, 0, FreeNosHost.MPI_UNSIGNED_CHAR, want, 0));
                requested = received + want;
            }
            FreeNosHost.Reply r = host.receiveOrNull();
            if (r == null) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("stream stalled at " + received + " of " + total + ": nothing for " + timeout);
                }
                if (++silent >= SILENT_ROUNDS_BEFORE_RESEND) {
                    requested = received;
                    silent = 0;
                }
                continue;
            }
            silent = 0;
            if (r.op != FreeNosHost.RECV || r.result != 0 || r.rankId != 1) {
                throw new AssertionError("unexpected reply " + r + " at " + received);
            }
            deadline = System.nanoTime() + timeout.toNanos();
            bytes.write(r.payload, 0, r.payload.length);
            received += r.datacount;
            if (received > total) {
                throw new AssertionError("received " + received + " elements, the rank sends " + total);
            }
        }
    }

    /** @return mpiprime's flags: flag j = 1 when first + j is prime (sieve) */
    static byte[] primeFlags(int first, int count) {
        int limit = first + count;
        boolean[] composite = new boolean[limit];
        composite[0] = true;
        if (limit > 1) {
            composite[1] = true;
        }
        for (long i = 2; i * i < limit; i++) {
            if (!composite[(int) i]) {
                for (long k = i * i; k < limit; k += i) {
                    composite[(int) k] = true;
                }
            }
        }
        byte[] flags = new byte[count];
        for (int j = 0; j < count; j++) {
            flags[j] = (byte) (composite[first + j] ? 0 : 1);
        }
        return flags;
    }
}
