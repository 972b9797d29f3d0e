package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STAGE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * Copies a program to nodes before a job (protocol v2 STAGE, docs/protocol-v2.md 5.8): each node
 * is asked first whether it has the content already (its SHA-256 names it); the others get the
 * file in fragments, {@value #WINDOW} in flight per node, the next sent as each is acknowledged,
 * those unacknowledged sent again every {@code 100 ms}, until the node says the file is complete.
 */
final class V2Stage {

    /** Fragments in flight per node. */
    static final int WINDOW = 64;
    private static final long RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final int DIGEST = 32;

    private V2Stage() {
    }

    /** @return the name a node gives the content: {@code sha256-<hex>} */
    static String name(byte[] content) {
        return "sha256-" + HexFormat.of().formatHex(sha256(content));
    }

    /** How far one node is. */
    private static final class Node {
        boolean known;
        boolean complete;
        String problem;
        final BitSet acked = new BitSet();
        int next;
    }

    /**
     * @param nodes   the proxies
     * @param jobId   the job the program is for (any nonzero id)
     * @param keys    the cluster keys
     * @param content the program
     * @param wait    how long to try
     * @return why each node that does not have the program now does not, by node; empty when all have it
     * @throws IOException when the socket fails
     */
    static Map<InetSocketAddress, String> stage(List<InetSocketAddress> nodes, long jobId, ClusterKeys keys,
                                                byte[] content, Duration wait) throws IOException {
        return stage(nodes, jobId, keys, null, content, wait);
    }

    /** As the method above, with the job's credential when {@code keys} is its job key, else {@code null}. */
    static Map<InetSocketAddress, String> stage(List<InetSocketAddress> nodes, long jobId, ClusterKeys keys,
                                                V2Credential credential, byte[] content, Duration wait)
            throws IOException {
        return transfer(OP_STAGE, "staging", nodes, jobId, keys, credential, content, wait);
    }

    /**
     * Sends content named by its SHA-256 with STAGE, or with ENVIRONMENT (docs/protocol-v2.md 5.10),
     * whose fields are STAGE's: probe, fragments, acknowledgements.
     *
     * @param operation {@code OP_STAGE} or {@code OP_ENVIRONMENT}
     * @param what      the transfer's name in the problems, e.g. {@code staging}
     * @return why each node that does not have the content now does not, by node; empty when all have it
     */
    static Map<InetSocketAddress, String> transfer(int operation, String what, List<InetSocketAddress> nodes,
                                                   long jobId, ClusterKeys keys, V2Credential credential,
                                                   byte[] content, Duration wait) throws IOException {
        byte[] digest = sha256(content);
        int chunk = V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH - HEADER_LENGTH - V2HeaderDescriptor.MAC_LENGTH - DIGEST;
        int count = Math.max(1, (content.length + chunk - 1) / chunk);
        V2Control.Signer signer = new V2Control.Signer(keys, credential);
        Map<InetSocketAddress, Node> state = new LinkedHashMap<>();
        nodes.forEach(n -> state.put(n, new Node()));
        RequestRounds.run(0, signer.in, wait, RESEND_NANOS, new RequestRounds.Exchange() {
            @Override
            public void send(DatagramChannel channel) throws IOException {
                for (Map.Entry<InetSocketAddress, Node> e : state.entrySet()) {
                    Node n = e.getValue();
                    if (n.complete || n.problem != null) {
                        continue;
                    }
                    if (!n.known) {
                        fragment(channel, e.getKey(), -1);
                        continue;
                    }
                    // everything sent and not acknowledged yet, again
                    for (int i = n.acked.nextClearBit(0); i < n.next && i < count; i = n.acked.nextClearBit(i + 1)) {
                        fragment(channel, e.getKey(), i);
                    }
                }
            }

            private void fragment(DatagramChannel channel, InetSocketAddress node, int index) throws IOException {
                boolean probe = index < 0;
                int from = probe ? 0 : index * chunk;
                int length = probe ? 0 : Math.min(chunk, content.length - from);
                byte[] payload = new byte[DIGEST + length];
                System.arraycopy(digest, 0, payload, 0, DIGEST);
                System.arraycopy(content, from, payload, DIGEST, length);
                channel.send(signer.request(node, operation, jobId, 0, 0, h -> h.argument(content.length)
                        .sequence(probe ? 0 : index).ack(probe ? 0 : count).tag(chunk), payload), node);
            }

            @Override
            public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in) throws IOException {
                Node n = state.get(source);
                V2HeaderFlyweight h = n == null ? null : signer.verify(source, jobId);
                if (h == null || h.operation() != operation || n.complete || n.problem != null) {
                    return;
                }
                if (h.result() != MpiErrors.SUCCESS) {
                    byte[] reason = new byte[h.payloadLength()];
                    in.get(HEADER_LENGTH, reason);
                    n.problem = what + " refused with " + MpiErrors.name(h.result()) + (reason.length > 0 ? ": "
                            + new String(reason, java.nio.charset.StandardCharsets.UTF_8) : " (see the node's log)");
                    return;
                }
                if (h.argument() == 1) {
                    n.complete = true;
                    return;
                }
                if (h.ack() == 0) {
                    // the probe's answer: not there yet; fill the window
                    if (!n.known) {
                        n.known = true;
                        while (n.next < count && n.next < WINDOW) {
                            fragment(channel, source, n.next++);
                        }
                    }
                    return;
                }
                long index = h.sequence();
                if (index >= 0 && index < count && !n.acked.get((int) index)) {
                    n.acked.set((int) index);
                    if (n.next < count) {
                        fragment(channel, source, n.next++);
                    }
                }
            }

            @Override
            public boolean done() {
                for (Node n : state.values()) {
                    if (!n.complete && n.problem == null) {
                        return false;
                    }
                }
                return true;
            }
        });
        Map<InetSocketAddress, String> problems = new LinkedHashMap<>();
        state.forEach((node, n) -> {
            if (!n.complete) {
                problems.put(node, n.problem != null ? n.problem : what + ": no answer from its proxy in "
                        + wait.toSeconds() + " s");
            }
        });
        return problems;
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
