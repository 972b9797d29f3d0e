package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ReplayCache;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * What the v2 proxy sends back: one reply buffer, filled through {@link #header()} and completed,
 * signed and sent by {@link #send}; the refusals of requests that were authentic but name no job
 * or rank, and the rate-limited 16-byte refusals of requests that did not verify
 * (docs/protocol-v2.md 3.5), among them the busy refusal of a request the replay cache could not
 * remember. Owns the authenticator, so a key rotation changes signing and verifying at once.
 * Receive thread only (the dispatcher's lock).
 */
final class V2Replies {

    private final V2HeaderFlyweight reply = new V2HeaderFlyweight();
    private final ByteBuffer buffer;
    private final int maxPayload;
    private final LongSupplier clock;
    private final SplittableRandom random;
    private final ProxyCounters<V2Counter> counters;
    private final ByteBuffer refusalBuffer = ByteBuffer.allocateDirect(V2RefusalDescriptor.LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
    private final RefusalLimiter refusals = new RefusalLimiter();
    /** The time of the refusals' rate limits, nanoseconds. */
    private LongSupplier nanoClock = System::nanoTime;
    private V2Authenticator authenticator;

    /**
     * @param settings the v2 settings: keys, node, clock skew, replay cache and datagram size
     * @param clock    milliseconds since the epoch, for timestamps
     * @param random   nonces
     * @param counters where failed sends and refusals are counted
     */
    V2Replies(V2Settings settings, LongSupplier clock, SplittableRandom random, ProxyCounters<V2Counter> counters) {
        this.authenticator = new V2Authenticator(settings.keys(), settings.nodeId(), settings.skew().toMillis(),
                settings.replayCacheSize(), settings.replaySourceShare(), settings.credentialsMax());
        this.buffer = ByteBuffer.allocateDirect(settings.datagramSize()).order(ByteOrder.LITTLE_ENDIAN);
        this.maxPayload = settings.maxPayload();
        this.clock = clock;
        this.random = random;
        this.counters = counters;
        reply.wrap(buffer, 0);
    }

    /** Measures the refusals' rate limits on {@code clock} ({@link System#nanoTime} by default). */
    void refusalClock(LongSupplier clock) {
        this.nanoClock = clock;
    }

    /** @return verifies requests and signs replies */
    V2Authenticator authenticator() {
        return authenticator;
    }

    /**
     * Verifies a request (docs/protocol-v2.md 3.2). The nonces of requests that act or answer to
     * their source are remembered, each against its source's share of the key's replay cache:
     * EXEC, TERMINATE, STAGE, PMI and CREDENTIAL act; STATUS is answered to its source, so a replay could
     * reflect replies elsewhere. SEND, RECV and OUTPUT are made harmless by sequence numbers.
     * The operation is read before the MAC only to decide this; the replay check itself runs
     * after the MAC has been verified.
     *
     * @param nowMillis the proxy's clock, milliseconds since the epoch
     * @param source    the request's source; may be null (one source for all such)
     * @return {@link V2Authenticator#OK} or the reason for refusal
     */
    int verify(ByteBuffer datagram, int offset, int length, long nowMillis, InetSocketAddress source) {
        int operation = length > V2HeaderDescriptor.OPERATION_OFFSET
                ? datagram.get(offset + V2HeaderDescriptor.OPERATION_OFFSET) & 0xff : -1;
        boolean remembered = operation == V2HeaderDescriptor.OP_EXEC || operation == V2HeaderDescriptor.OP_TERMINATE
                || operation == V2HeaderDescriptor.OP_STATUS || operation == V2HeaderDescriptor.OP_STAGE
                || operation == V2HeaderDescriptor.OP_PMI || operation == V2HeaderDescriptor.OP_CREDENTIAL
                || operation == V2HeaderDescriptor.OP_ENVIRONMENT;
        if (!remembered) {
            return authenticator.verify(datagram, offset, length, nowMillis, false);
        }
        long from = ReplayCache.sourceOf(source != null ? source.getAddress() : null);
        return authenticator.verify(datagram, offset, length, nowMillis, true, from);
    }

    /** Uses new keys (or a new node name) for verifying and signing from now on. */
    /**
     * Goes on with the authenticator a previous revision of the proxy handed over (its replay
     * caches keep refusing the requests it accepted), under the keys in force; one of another
     * revision of the protocol bundle cannot be used and is ignored.
     *
     * @return whether it was taken
     */
    boolean adopt(Object handedOver, ClusterKeys keys, long nodeId) {
        if (!(handedOver instanceof V2Authenticator)) {
            return false;
        }
        authenticator = ((V2Authenticator) handedOver).rekey(keys, nodeId);
        return true;
    }

    void rekey(ClusterKeys keys, long nodeId) {
        authenticator = authenticator.rekey(keys, nodeId);
    }

    long nodeId() {
        return authenticator.nodeId();
    }

    /** @return the reply's header, to fill before {@link #send} */
    V2HeaderFlyweight header() {
        return reply;
    }

    /** @return the reply buffer; a payload goes at {@link org.mpiproxy.protocol.V2HeaderDescriptor#HEADER_LENGTH} */
    ByteBuffer buffer() {
        return buffer;
    }

    /** @return the header reset for a reply about a rank of a job, under the job's current key */
    V2HeaderFlyweight about(int operation, int flags, V2Job job, int rankId, int coreId) {
        return reply.reset(operation, FLAG_REPLY | flags).keyId(job.keyId).nodeId(authenticator.nodeId())
                .jobId(job.jobId).rank(rankId).core(coreId);
    }

    /** @return the header reset for a reply to {@code request}: its operation, key id and job id */
    V2HeaderFlyweight to(V2HeaderFlyweight request) {
        return reply.reset(request.operation(), FLAG_REPLY).keyId(request.keyId()).nodeId(authenticator.nodeId())
                .jobId(request.jobId());
    }

    /** Puts a reason text as the payload, cut to one datagram; @return its length in bytes */
    int putReason(String reason) {
        return ReasonText.put(buffer, HEADER_LENGTH, reason, maxPayload);
    }

    /** Completes and signs the reply header in the buffer and sends it; nothing when {@code replies} is null. */
    void send(DatagramTransport replies, int payloadLength, InetSocketAddress target) {
        send(replies, payloadLength, target, null);
    }

    /**
     * As {@link #send(DatagramTransport, int, InetSocketAddress)}, signed by {@code signer} when not
     * {@code null}: a job key this node issued but does not hold (a MUNGE reply, docs/protocol-v2.md 4.3).
     */
    void send(DatagramTransport replies, int payloadLength, InetSocketAddress target, V2Authenticator signer) {
        reply.payloadLength(payloadLength).timestamp(clock.getAsLong()).nonce(random.nextLong());
        int length = signer == null ? sign(buffer, 0) : signer.sign(buffer, 0);
        if (length < 0 || replies == null) {
            buffer.clear();
            return;
        }
        buffer.limit(length).position(0);
        if (!replies.send(buffer, target)) {
            counters.increment(V2Counter.REPLIES_FAILED);
        }
        buffer.clear();
    }

    /** Signs under the key the header names; -1 (counted) when that key was removed since. */
    int sign(ByteBuffer datagram, int offset) {
        try {
            return authenticator.sign(datagram, offset);
        } catch (IllegalArgumentException e) {
            counters.increment(V2Counter.REPLIES_KEY_REMOVED);
            return -1;
        }
    }

    /** Answers an authentic request with a result and no payload (an unknown job or rank, a bad argument). */
    void refuse(DatagramTransport replies, V2HeaderFlyweight request, InetSocketAddress target, int result,
                V2Counter counter) {
        counters.increment(counter);
        to(request).rank(request.rank()).sequence(request.sequence()).result(result);
        send(replies, 0, target);
    }

    /**
     * Tells the source of a request that did not verify, or that the replay cache could not
     * remember (busy), why it is not answered (docs/protocol-v2.md 3.5): a 16-byte refusal echoing
     * its key id and nonce, at most one per request and within the per-source and global rate
     * limits; none for a malformed or replayed datagram.
     */
    void refuseUnverified(ByteBuffer datagram, int offset, int authResult, InetSocketAddress source,
                          DatagramTransport replies) {
        refuse(datagram, offset, V2RefusalDescriptor.reasonOf(authResult), source, replies);
    }

    /** Sends the refusal of {@code reason} (none for 0), within the same rate limits as {@link #refuseUnverified}. */
    void refuse(ByteBuffer datagram, int offset, int reason, InetSocketAddress source, DatagramTransport replies) {
        if (reason == 0 || replies == null) {
            return;
        }
        if (!refusals.permit(source.getAddress(), nanoClock.getAsLong())) {
            counters.increment(V2Counter.REFUSALS_LIMITED);
            return;
        }
        V2RefusalDescriptor.put(datagram, offset, reason, refusalBuffer, 0);
        refusalBuffer.limit(V2RefusalDescriptor.LENGTH).position(0);
        counters.increment(replies.send(refusalBuffer, source) ? V2Counter.REFUSALS_SENT : V2Counter.REPLIES_FAILED);
        refusalBuffer.clear();
    }
}
