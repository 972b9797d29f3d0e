package org.mpiproxy.protocol;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAC_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MIN_DATAGRAM_LENGTH;

import java.nio.ByteBuffer;
import java.security.MessageDigest;

/**
 * Signs and checks v2 datagrams: HMAC-SHA256 under the cluster key named by the key id, over the
 * header and payload. {@link #verify} checks, in this order and before anything else of the
 * datagram is used: length, magic, declared payload length, key id, MAC (constant time), node id,
 * timestamp skew and, for requests, the replay cache: one per key, in which no source holds more
 * than its share ({@link ReplayCache}), so that neither one key holder nor one source can fill the
 * cache for the others.
 * <p>
 * Not thread-safe: one instance per thread (it holds its {@link HmacSha256} instances and scratch
 * arrays, so signing and checking allocate nothing).
 */
public final class V2Authenticator {

    /** {@link #verify}: the datagram is authentic, addressed to this node, fresh and new. */
    public static final int OK = 0;
    /** Shorter than header plus MAC. */
    public static final int TOO_SHORT = 1;
    /** First byte is not {@link V2HeaderDescriptor#MAGIC}. */
    public static final int BAD_MAGIC = 2;
    /** Declared payload length disagrees with the datagram's length. */
    public static final int BAD_LENGTH = 3;
    /** The key id names no configured key. */
    public static final int UNKNOWN_KEY = 4;
    /** The MAC does not match. */
    public static final int BAD_MAC = 5;
    /** Authentic, but for another node. */
    public static final int WRONG_NODE = 6;
    /** Timestamp older than the allowed skew. */
    public static final int STALE = 7;
    /** Timestamp further in the future than the allowed skew. */
    public static final int FUTURE = 8;
    /** Nonce already seen within the window. */
    public static final int REPLAYED = 9;
    /** The key's replay cache is full of unexpired nonces: refused to stay safe (the sender may retry). */
    public static final int REPLAY_CACHE_FULL = 10;
    /** The source's share of the key's replay cache is full of unexpired nonces: refused (it may retry). */
    public static final int REPLAY_SOURCE_FULL = 11;

    private static final String[] REASONS = {"ok", "too.short", "bad.magic", "bad.length", "unknown.key",
        "bad.mac", "wrong.node", "stale", "future", "replayed", "replay.cache.full", "replay.source.full"};

    private final ClusterKeys keys;
    private final HmacSha256[] macs = new HmacSha256[256];
    private final ReplayCache[] replay = new ReplayCache[256];
    private final long nodeId;
    private final long skewMillis;
    private final int replayCapacity;
    private final int sourceShare;
    private final byte[] computed = new byte[MAC_LENGTH];
    private final byte[] received = new byte[MAC_LENGTH];
    private final V2HeaderFlyweight header = new V2HeaderFlyweight();

    /**
     * An authenticator whose replay caches have no bound per source.
     *
     * @param keys           the cluster keys
     * @param nodeId         the node id datagrams must name ({@link NodeIds#of})
     * @param skewMillis     largest accepted difference between a timestamp and the clock
     * @param replayCapacity nonces remembered per key
     */
    public V2Authenticator(ClusterKeys keys, long nodeId, long skewMillis, int replayCapacity) {
        this(keys, nodeId, skewMillis, replayCapacity, replayCapacity);
    }

    /**
     * @param keys           the cluster keys
     * @param nodeId         the node id datagrams must name ({@link NodeIds#of})
     * @param skewMillis     largest accepted difference between a timestamp and the clock
     * @param replayCapacity nonces remembered per key
     * @param sourceShare    nonces remembered per key for one source ({@link ReplayCache#sourceOf}), &gt;= 1
     * @throws IllegalArgumentException when the skew is negative or a bound out of range
     */
    public V2Authenticator(ClusterKeys keys, long nodeId, long skewMillis, int replayCapacity, int sourceShare) {
        if (skewMillis < 0) {
            throw new IllegalArgumentException("skewMillis=" + skewMillis + " must be >= 0");
        }
        if (sourceShare < 1) {
            throw new IllegalArgumentException("sourceShare=" + sourceShare + " must be >= 1");
        }
        this.keys = keys;
        this.nodeId = nodeId;
        this.skewMillis = skewMillis;
        this.replayCapacity = replayCapacity;
        this.sourceShare = sourceShare;
        for (int id = 0; id < 256; id++) {
            if (keys.has(id)) {
                macs[id] = new HmacSha256(keys.key(id));
                // a nonce must be remembered as long as its timestamp can still be accepted
                replay[id] = new ReplayCache(replayCapacity, sourceShare, 2 * skewMillis + 1);
            }
        }
    }

    /**
     * An authenticator for new keys or a new node id (key rotation without a restart), with this
     * one's clock skew, replay capacity and share per source. A key id whose key is unchanged keeps its replay
     * cache, so a request accepted before the change cannot be replayed after it; a new or changed
     * key starts with an empty one (nothing was ever accepted under it).
     *
     * @param newKeys   the cluster keys from now on
     * @param newNodeId the node id datagrams must name from now on
     * @return the new authenticator; this one must no longer be used
     */
    public V2Authenticator rekey(ClusterKeys newKeys, long newNodeId) {
        V2Authenticator next = new V2Authenticator(newKeys, newNodeId, skewMillis, replayCapacity, sourceShare);
        for (int id = 0; id < 256; id++) {
            if (keys.has(id) && newKeys.has(id) && java.util.Arrays.equals(keys.key(id), newKeys.key(id))) {
                next.replay[id] = replay[id];
            }
        }
        return next;
    }

    /** @return the node id this authenticator expects */
    public long nodeId() {
        return nodeId;
    }

    /** @return the id of the key {@link #sign} uses unless told otherwise */
    public int sendKeyId() {
        return keys.sendKeyId();
    }

    /**
     * Computes the MAC over the header and payload (the payload length must be set) under the key
     * named in the header's key id, and writes it after the payload.
     *
     * @param buffer the datagram
     * @param offset absolute index of its first byte
     * @return the datagram's length with the MAC
     * @throws IllegalArgumentException when the key id names no key
     */
    public int sign(ByteBuffer buffer, int offset) {
        header.wrap(buffer, offset);
        HmacSha256 mac = macs[header.keyId()];
        if (mac == null) {
            throw new IllegalArgumentException("keyId=" + header.keyId() + " is not configured");
        }
        int macOffset = header.macOffset();
        mac.update(buffer, offset, macOffset - offset);
        mac.tag(computed, 0);
        buffer.put(macOffset, computed, 0, MAC_LENGTH);
        return macOffset + MAC_LENGTH - offset;
    }

    /**
     * Checks a request: everything {@link #verifyReply} checks, plus the replay cache. An
     * authentic request that is accepted has its nonce remembered.
     *
     * @param buffer    the datagram
     * @param offset    absolute index of its first byte
     * @param length    its length as received
     * @param nowMillis the current time, milliseconds since the epoch
     * @return {@link #OK} or the reason for refusal
     */
    public int verify(ByteBuffer buffer, int offset, int length, long nowMillis) {
        return verify(buffer, offset, length, nowMillis, true);
    }

    /**
     * Checks a request; the replay cache only when asked (the proxy asks for EXEC and TERMINATE:
     * SEND and RECV are made harmless by sequence numbers, see docs/protocol-v2.md 3.2).
     *
     * @param buffer      the datagram
     * @param offset      absolute index of its first byte
     * @param length      its length as received
     * @param nowMillis   the current time, milliseconds since the epoch
     * @param checkReplay whether to check and remember the nonce
     * @return {@link #OK} or the reason for refusal
     */
    public int verify(ByteBuffer buffer, int offset, int length, long nowMillis, boolean checkReplay) {
        return verify(buffer, offset, length, nowMillis, checkReplay, ReplayCache.NO_SOURCE);
    }

    /**
     * Checks a request from a source; the replay cache only when asked, where the nonce counts
     * against the source's share of the key's cache.
     *
     * @param buffer      the datagram
     * @param offset      absolute index of its first byte
     * @param length      its length as received
     * @param nowMillis   the current time, milliseconds since the epoch
     * @param checkReplay whether to check and remember the nonce
     * @param source      the request's source, {@link ReplayCache#sourceOf} its address
     * @return {@link #OK} or the reason for refusal ({@link #REPLAY_CACHE_FULL} and
     *         {@link #REPLAY_SOURCE_FULL}: authentic and new, but not remembered, so not to be served)
     */
    public int verify(ByteBuffer buffer, int offset, int length, long nowMillis, boolean checkReplay, long source) {
        int result = verifyReply(buffer, offset, length, nowMillis);
        if (result != OK || !checkReplay) {
            return result;
        }
        switch (replay[header.keyId()].add(header.nonce(), source, nowMillis)) {
            case ReplayCache.ADDED: return OK;
            case ReplayCache.REPLAYED: return REPLAYED;
            case ReplayCache.SOURCE_FULL: return REPLAY_SOURCE_FULL;
            default: return REPLAY_CACHE_FULL;
        }
    }

    /**
     * @param keyId a key id
     * @return nonces its replay cache remembers now (0 for a key id that names no key)
     */
    public int replaySize(int keyId) {
        ReplayCache cache = replay[keyId & 0xff];
        return cache == null ? 0 : cache.size();
    }

    /**
     * @param keyId  a key id
     * @param source a source ({@link ReplayCache#sourceOf})
     * @return nonces its replay cache remembers now for that source
     */
    public int replaySizeOf(int keyId, long source) {
        ReplayCache cache = replay[keyId & 0xff];
        return cache == null ? 0 : cache.sizeOf(source);
    }

    /** @return the most nonces remembered per key */
    public int replayCapacity() {
        return replayCapacity;
    }

    /** @return the most nonces remembered per key for one source */
    public int sourceShare() {
        return Math.min(sourceShare, replayCapacity);
    }

    /**
     * Checks length, magic, key id, MAC, node id and timestamp skew, without the replay cache
     * (replies are matched by sequence numbers instead).
     *
     * @param buffer    the datagram
     * @param offset    absolute index of its first byte
     * @param length    its length as received
     * @param nowMillis the current time, milliseconds since the epoch
     * @return {@link #OK} or the reason for refusal
     */
    public int verifyReply(ByteBuffer buffer, int offset, int length, long nowMillis) {
        if (length < MIN_DATAGRAM_LENGTH) {
            return TOO_SHORT;
        }
        header.wrap(buffer, offset);
        if (header.magic() != V2HeaderDescriptor.MAGIC) {
            return BAD_MAGIC;
        }
        if (header.datagramLength() != length) {
            return BAD_LENGTH;
        }
        HmacSha256 mac = macs[header.keyId()];
        if (mac == null) {
            return UNKNOWN_KEY;
        }
        int macOffset = offset + length - MAC_LENGTH;
        mac.update(buffer, offset, length - MAC_LENGTH);
        mac.tag(computed, 0);
        buffer.get(macOffset, received, 0, MAC_LENGTH);
        if (!MessageDigest.isEqual(computed, received)) {
            return BAD_MAC;
        }
        if (header.nodeId() != nodeId) {
            return WRONG_NODE;
        }
        long timestamp = header.timestamp();
        if (timestamp < nowMillis - skewMillis) {
            return STALE;
        }
        if (timestamp > nowMillis + skewMillis) {
            return FUTURE;
        }
        return OK;
    }

    /**
     * @param result a result of {@link #verify}
     * @return a short name for counters and logs, such as {@code bad.mac}
     */
    public static String reason(int result) {
        return result >= 0 && result < REASONS.length ? REASONS[result] : "unknown";
    }

    /** Number of distinct results of {@link #verify}. */
    public static int reasonCount() {
        return REASONS.length;
    }

    /** @return {@code HEADER_LENGTH}, for callers laying out payloads */
    public static int headerLength() {
        return HEADER_LENGTH;
    }
}
