package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The PMI fences {@link V2Session} sends to every node of its job (docs/protocol-v2.md 5.7): each
 * fence in fragments, every fragment sent again until its node acknowledges it.
 * <p>
 * Threads: {@link #add} from any thread; the others on the session's thread only.
 */
final class V2Fences {

    /** How long a fragment waits for its acknowledgement before it is sent again. */
    static final long RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** One fragment of a PMI fence for one node. */
    private static final class FenceFragment {
        final InetSocketAddress node;
        final int epoch;
        final int index;
        final int count;
        final byte[] pairs;
        long sentAt;

        FenceFragment(InetSocketAddress node, int epoch, int index, int count, byte[] pairs) {
            this.node = node;
            this.epoch = epoch;
            this.index = index;
            this.count = count;
            this.pairs = pairs;
        }
    }

    private final long jobId;
    private final V2Control.Signer signer;
    private final DatagramChannel output;
    private final Collection<InetSocketAddress> nodes;
    private final PrintStream err;
    /** Fence fragments to send (any thread adds, the session thread sends). */
    private final ConcurrentLinkedQueue<FenceFragment> newFragments = new ConcurrentLinkedQueue<>();
    /** Fence fragments sent and not acknowledged yet; session thread only. */
    private final List<FenceFragment> unacked = new ArrayList<>();

    /**
     * @param jobId  the job
     * @param signer signs the requests
     * @param output the session's socket
     * @param nodes  the job's nodes
     * @param err    where refusals are reported
     */
    V2Fences(long jobId, V2Control.Signer signer, DatagramChannel output, Collection<InetSocketAddress> nodes,
             PrintStream err) {
        this.jobId = jobId;
        this.signer = signer;
        this.output = output;
        this.nodes = nodes;
        this.err = err;
    }

    /** @return the largest payload of a fence fragment */
    static int fencePayload() {
        return V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH - HEADER_LENGTH - V2HeaderDescriptor.MAC_LENGTH;
    }

    /** Queues a finished fence for every node: its pairs, cut into payloads of {@link #fencePayload}. */
    void add(int epoch, List<byte[]> pairs) {
        for (InetSocketAddress node : nodes) {
            for (int i = 0; i < pairs.size(); i++) {
                newFragments.add(new FenceFragment(node, epoch, i, pairs.size(), pairs.get(i)));
            }
        }
    }

    /** Queues one fragment for some nodes only (node attributes: fence 0, the fragment their number). */
    void addTo(int epoch, int index, int count, byte[] pairs, Collection<InetSocketAddress> to) {
        for (InetSocketAddress node : to) {
            newFragments.add(new FenceFragment(node, epoch, index, count, pairs));
        }
    }

    /** @return whether every fragment sent was acknowledged */
    boolean allAcknowledged() {
        return unacked.isEmpty();
    }

    /** Sends the new fragments and again those not acknowledged for {@link #RESEND_NANOS}. */
    void send() throws IOException {
        FenceFragment f;
        while ((f = newFragments.poll()) != null) {
            unacked.add(f);
        }
        long now = System.nanoTime();
        for (FenceFragment fragment : unacked) {
            if (fragment.sentAt == 0 || now - fragment.sentAt >= RESEND_NANOS) {
                fragment.sentAt = now;
                output.send(signer.request(fragment.node, V2HeaderDescriptor.OP_PMI, jobId, 0, 0,
                        h -> h.argument(fragment.epoch).sequence(fragment.index).ack(fragment.count),
                        fragment.pairs), fragment.node);
            }
        }
    }

    /** A node's reply to a fragment: it is acknowledged (or refused, which is reported). */
    void onReply(InetSocketAddress node, V2HeaderFlyweight h) {
        if (h.result() == MpiErrors.ERR_ARG) {
            err.println("mpiproxy: " + node + " refused fence " + h.argument() + " fragment " + h.sequence());
        }
        unacked.removeIf(f -> f.node.equals(node) && f.epoch == h.argument() && f.index == h.sequence());
    }
}
