package org.mpiproxy.cli;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * The refusals (docs/protocol-v2.md 3.5) of the launcher's v2 requests: each matched to a nonce
 * sent to its node lately (a refusal is not authenticated), and the back-off of a node that
 * refused one as busy (its replay cache full): its requests are held back for 250 ms, doubled per
 * busy refusal in a row up to 4 s, until a valid reply ends the spell. Not thread-safe: one per
 * {@link V2Control.Signer}.
 */
final class V2Refusals {

    /** The first back-off after a busy refusal; doubled per busy refusal in a row. */
    static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** The longest back-off. */
    static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(4);
    /** Nonces remembered per node to match refusals. */
    static final int NONCES = 64;

    /** One node: the nonces sent to it lately, its busy spell. */
    private static final class Node {
        final long[] nonces = new long[NONCES];
        int nonceAt;
        boolean busy;
        long backoffNanos;
        long holdOffUntil;
        /** Why it refused, in words: the last matched refusal since the last valid reply. */
        String problem;
        /** Its last matched refusal was reason 6, no credential, not taken yet ({@link #takeNoCredential}). */
        boolean noCredential;
    }

    private final Map<InetSocketAddress, Node> nodes = new HashMap<>();

    /** Remembers a request's nonce, to match a refusal of it. */
    void sent(InetSocketAddress node, long nonce) {
        Node n = nodes.computeIfAbsent(node, a -> new Node());
        n.nonces[n.nonceAt] = nonce;
        n.nonceAt = (n.nonceAt + 1) % NONCES;
    }

    /**
     * Takes a datagram if it is a refusal of a request sent to {@code source} lately: a busy one
     * starts or lengthens the node's back-off.
     *
     * @param source where it came from
     * @param in     the datagram, from 0 to its position
     * @param now    {@link System#nanoTime}
     * @return whether it was such a refusal (then it is no reply: the request is still pending)
     */
    boolean onRefusal(InetSocketAddress source, ByteBuffer in, long now) {
        Node n = nodes.get(source);
        if (n == null || !V2RefusalDescriptor.isRefusal(in, 0, in.position()) || !sentTo(n, in)) {
            return false;
        }
        int reason = V2RefusalDescriptor.reason(in, 0);
        n.problem = reason == V2Credential.REASON_NO_CREDENTIAL ? "the proxy does not know the job's key: the"
                + " job's credential was not presented to it" : V2RefusalDescriptor.describe(reason,
                V2RefusalDescriptor.keyId(in, 0));
        n.noCredential = reason == V2Credential.REASON_NO_CREDENTIAL;
        if (V2RefusalDescriptor.isRetryable(reason)) {
            if (!n.busy) {
                n.busy = true;
                n.backoffNanos = FIRST_BACKOFF_NANOS;
            } else if (now - n.holdOffUntil >= 0) {
                // the refusals of requests sent in one round count once
                n.backoffNanos = Math.min(n.backoffNanos * 2, MAX_BACKOFF_NANOS);
            }
            n.holdOffUntil = now + n.backoffNanos;
        }
        return true;
    }

    private static boolean sentTo(Node n, ByteBuffer in) {
        long nonce = V2RefusalDescriptor.nonce(in, 0);
        for (long sent : n.nonces) {
            if (sent == nonce && sent != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param node a node
     * @return whether its last matched refusal was reason 6, no credential (docs/protocol-v2.md 3.5),
     *         and not taken since; taking it clears it and the problem it made
     */
    boolean takeNoCredential(InetSocketAddress node) {
        Node n = nodes.get(node);
        if (n == null || !n.noCredential) {
            return false;
        }
        n.noCredential = false;
        n.problem = null;
        return true;
    }

    /** A valid reply from the node: its busy spell (and any refusal) is over. */
    void answered(InetSocketAddress node) {
        Node n = nodes.get(node);
        if (n != null) {
            n.busy = false;
            n.problem = null;
        }
    }

    /**
     * @param node a node
     * @param now  {@link System#nanoTime}
     * @return whether requests to it wait now: it refused one as busy and its back-off is not over
     */
    boolean holdsOff(InetSocketAddress node, long now) {
        Node n = nodes.get(node);
        return n != null && n.busy && now - n.holdOffUntil < 0;
    }

    /** @return whether the node's last matched refusal since its last valid reply was busy */
    boolean busy(InetSocketAddress node) {
        Node n = nodes.get(node);
        return n != null && n.busy;
    }

    /** @return the node's last matched refusal since its last valid reply, in words, or {@code null} */
    String problem(InetSocketAddress node) {
        Node n = nodes.get(node);
        return n == null ? null : n.problem;
    }
}
