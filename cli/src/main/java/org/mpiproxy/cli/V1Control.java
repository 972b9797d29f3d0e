package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * What the launcher can do over v1 besides running rank 0: probe proxies, and terminate a job's
 * ranks as the job's owner. A v1 job belongs to the host's UDP source address, so TERMINATE
 * must come from rank 0's port after rank 0 is gone. Requests are repeated every second until
 * answered (v1 does not retransmit). Not thread-safe.
 */
final class V1Control {

    /** Status of a rank whose proxy did not answer TERMINATE in time. */
    static final int NO_REPLY = -1;
    /** Status of a rank its proxy does not know (never started, or already finished). */
    static final int NOT_RUNNING = -2;
    /** Status of a rank whose proxy could not start it (TERMINATE replied an error). */
    static final int FAILED_TO_START = -3;
    /** Status of a rank whose node's proxy does not answer at all. */
    static final int NODE_DOWN = -4;

    private static final long RESEND_NANOS = Duration.ofSeconds(1).toNanos();

    private V1Control() {
    }

    /**
     * Probes proxies with TERMINATE of rank 0 (docs/protocol-v1.md): rank 0 is the host itself,
     * so every v1 proxy answers it at once with MPI_ERR_RANK, stops nothing and counts it as a
     * probe (older proxies as an unknown rank); an answer of any kind shows the proxy is up.
     *
     * @param proxies the proxies
     * @param wait    how long to wait for all answers
     * @return each proxy and what its probe learned
     * @throws IOException when a socket fails
     */
    static Map<InetSocketAddress, Prober.Answer> probe(List<InetSocketAddress> proxies, Duration wait)
            throws IOException {
        ByteBuffer out = ByteBuffer.allocate(HEADER_LENGTH).order(V1HeaderDescriptor.BYTE_ORDER);
        new V1HeaderFlyweight().wrap(out, 0).set(OP_TERMINATE, 0, 0, 0, 0, 0);
        Prober.Exchange exchange = new Prober.Exchange() {
            @Override
            public ByteBuffer request(InetSocketAddress proxy) {
                return out.clear();
            }

            @Override
            public Prober.Answer check(InetSocketAddress proxy, ByteBuffer in) {
                return in.position() >= HEADER_LENGTH ? Prober.Answer.ANSWERED : null;
            }
        };
        return Prober.probe(proxies, wait, exchange, ByteBuffer.allocate(2048).order(V1HeaderDescriptor.BYTE_ORDER));
    }

    /**
     * Sends TERMINATE for ranks 1..N-1 from the job's own port and collects the replies.
     *
     * @param localPort rank 0's UDP port (free again: rank 0 has exited)
     * @param ranks     placement of rank r at element r-1
     * @param statuses  element r: the exit status already known (&gt;= 0, nothing is sent) or
     *                  a negative value (TERMINATE is sent); updated in place with the replies
     * @param wait      how long to wait for the replies (proxies wait their terminate timeout
     *                  and stop grace before answering for a rank that does not exit)
     * @param stop      polled while waiting; {@code true} ends the wait early
     * @throws IOException when the port cannot be bound or the socket fails
     */
    static void terminate(int localPort, List<Placement> ranks, int[] statuses, Duration wait, BooleanSupplier stop)
            throws IOException {
        InetSocketAddress[] addresses = new InetSocketAddress[ranks.size() + 1];
        boolean[] pending = new boolean[ranks.size() + 1];
        int left = 0;
        for (int r = 1; r <= ranks.size(); r++) {
            addresses[r] = new InetSocketAddress(ranks.get(r - 1).address(), ranks.get(r - 1).port());
            pending[r] = statuses[r] < 0 && statuses[r] != NODE_DOWN;
            left += pending[r] ? 1 : 0;
        }
        if (left == 0) {
            return;
        }
        ByteBuffer out = ByteBuffer.allocate(HEADER_LENGTH).order(V1HeaderDescriptor.BYTE_ORDER);
        V1HeaderFlyweight outHeader = new V1HeaderFlyweight().wrap(out, 0);
        ByteBuffer in = ByteBuffer.allocate(2048).order(V1HeaderDescriptor.BYTE_ORDER);
        V1HeaderFlyweight inHeader = new V1HeaderFlyweight().wrap(in, 0);
        int waiting = left;
        RequestRounds.run(localPort, in, wait, RESEND_NANOS, new RequestRounds.Exchange() {
            private int left = waiting;

            @Override
            public void send(DatagramChannel channel) throws IOException {
                for (int r = 1; r < pending.length; r++) {
                    if (pending[r]) {
                        outHeader.set(OP_TERMINATE, 0, r, ranks.get(r - 1).coreId(), 0, 0);
                        channel.send(out.clear(), addresses[r]);
                    }
                }
            }

            @Override
            public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer datagram) {
                int r = inHeader.rankId();
                if (datagram.position() < HEADER_LENGTH || inHeader.operation() != OP_TERMINATE || r < 1
                        || r >= pending.length || !pending[r]) {
                    return;
                }
                pending[r] = false;
                left--;
                int result = inHeader.result();
                statuses[r] = result == MpiErrors.SUCCESS ? (int) inHeader.datacount()
                        : result == MpiErrors.ERR_RANK ? NOT_RUNNING : FAILED_TO_START;
            }

            @Override
            public boolean done() {
                return left == 0 || stop.getAsBoolean();
            }
        });
    }

    /**
     * @param status an exit status or one of the negative codes of this class
     * @return words for it
     */
    static String describe(int status) {
        switch (status) {
            case NO_REPLY:
                return "no TERMINATE reply: state unknown";
            case NOT_RUNNING:
                return "not running (its proxy has no such rank)";
            case FAILED_TO_START:
                return "could not be started";
            case NODE_DOWN:
                return "unknown: its node's proxy does not answer";
            default:
                return status > 128 && status < 160 ? "exited with status " + status + " (signal " + (status - 128) + ")"
                        : "exited with status " + status;
        }
    }
}
