package org.mpiproxy.protocol;

import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAC_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MIN_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;

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
 * Key id 0 is a job's key (docs/protocol-v2.md 4.1). An authenticator whose keys hold key id 0 (a
 * host's, {@link ClusterKeys#ofJobKey}) uses it as any other key. A proxy's (no key id 0) keeps a
 * bounded table of the job keys it was shown credentials for ({@link #acceptCredential}): a
 * datagram of key id 0 is checked with the key of the job its header names (the job id, a fixed
 * header field, is read before the MAC as the key id is), {@link #NO_CREDENTIAL} when there is
 * none; a CREDENTIAL request of key id 0 with the job key its own payload's credential derives
 * ({@link #BAD_CREDENTIAL} when the credential does not verify or names another job), which
 * {@link #credential()} gives afterwards. Requests of key id 0 share one replay cache. Replies of
 * key id 0 are signed with the key of their job, a CREDENTIAL reply with the key of the credential
 * checked last (it answers that one, taken or not).
 * <p>
 * Not thread-safe: one instance per thread (it holds its {@link HmacSha256} instances and scratch
 * arrays, so signing and checking allocate nothing; but for CREDENTIAL, which decodes a credential).
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
    /** Key id 0 for a job whose job key this proxy does not know (or no longer: expired, forgotten). */
    public static final int NO_CREDENTIAL = 12;
    /** A CREDENTIAL of key id 0 whose credential does not verify, or names another job than the header. */
    public static final int BAD_CREDENTIAL = 13;
    /** Proxy: a CREDENTIAL of key id 0, MUNGE flag alone (4.3): no MAC, only length and magic were checked. */
    public static final int MUNGE = 14;

    /** {@link #acceptCredential}: the job's key is known (it was, or is now), under that credential's user. */
    public static final int CREDENTIAL_ACCEPTED = 0;
    /** {@link #acceptCredential}: the key of another user (or under another cluster key) is known for that job. */
    public static final int CREDENTIAL_OTHER_USER = 1;
    /** {@link #acceptCredential}: the table holds its most keys of jobs not kept, unexpired ones. */
    public static final int CREDENTIAL_TABLE_FULL = 2;
    /** Default of the most keys of jobs not kept ({@code v2.credentials.max}). */
    public static final int DEFAULT_PENDING_JOB_KEYS = 4096;

    private static final String[] REASONS = {"ok", "too.short", "bad.magic", "bad.length", "unknown.key",
        "bad.mac", "wrong.node", "stale", "future", "replayed", "replay.cache.full", "replay.source.full",
        "no.credential", "bad.credential", "munge"};

    private final ClusterKeys keys;
    private final HmacSha256[] macs = new HmacSha256[256];
    private final ReplayCache[] replay = new ReplayCache[256];
    private final long nodeId;
    private final long skewMillis;
    private final int replayCapacity;
    private final int sourceShare;
    private final int pendingJobKeys;
    /** The job keys, for a proxy (its keys hold no key id 0). */
    private final JobKeyTable jobKeys = new JobKeyTable();
    /** The credential of the CREDENTIAL request checked last, and its job key; {@code null} after others. */
    private JobCredential credential;
    private HmacSha256 credentialMac;
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
        this(keys, nodeId, skewMillis, replayCapacity, sourceShare, DEFAULT_PENDING_JOB_KEYS);
    }

    /**
     * @param keys           the cluster keys
     * @param nodeId         the node id datagrams must name ({@link NodeIds#of})
     * @param skewMillis     largest accepted difference between a timestamp and the clock
     * @param replayCapacity nonces remembered per key
     * @param sourceShare    nonces remembered per key for one source ({@link ReplayCache#sourceOf}), &gt;= 1
     * @param pendingJobKeys most job keys kept for jobs not {@link #keepJob kept} (a node does not have yet), &gt;= 0
     * @throws IllegalArgumentException when the skew is negative or a bound out of range
     */
    public V2Authenticator(ClusterKeys keys, long nodeId, long skewMillis, int replayCapacity, int sourceShare,
                           int pendingJobKeys) {
        if (pendingJobKeys < 0) {
            throw new IllegalArgumentException("pendingJobKeys=" + pendingJobKeys + " must be >= 0");
        }
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
        this.pendingJobKeys = pendingJobKeys;
        for (int id = 0; id < 256; id++) {
            // key id 0: a host's job key, or a proxy's table of them; either has one replay cache
            if (keys.has(id) || id == JobCredential.JOB_KEY_ID) {
                macs[id] = keys.has(id) ? new HmacSha256(keys.key(id)) : null;
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
        V2Authenticator next = new V2Authenticator(newKeys, newNodeId, skewMillis, replayCapacity, sourceShare,
                pendingJobKeys);
        boolean[] same = new boolean[256];
        for (int id = 0; id < 256; id++) {
            same[id] = keys.has(id) && newKeys.has(id) && java.util.Arrays.equals(keys.key(id), newKeys.key(id));
            if (same[id]) {
                next.replay[id] = replay[id];
            }
        }
        if (keys.has(JobCredential.JOB_KEY_ID) == newKeys.has(JobCredential.JOB_KEY_ID)
                && (same[JobCredential.JOB_KEY_ID] || !keys.has(JobCredential.JOB_KEY_ID))) {
            next.replay[JobCredential.JOB_KEY_ID] = replay[JobCredential.JOB_KEY_ID];
        }
        // a job key is the cluster key's: it stays while its credential's cluster key does
        for (int slot = 0; slot < jobKeys.slots(); slot++) {
            if (jobKeys.jobId(slot) != 0 && same[jobKeys.credential(slot).keyId()]) {
                next.jobKeys.put(jobKeys.credential(slot), jobKeys.mac(slot), jobKeys.until(slot));
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
     * named in the header's key id, and writes it after the payload. On a proxy, key id 0 signs
     * with the key of the header's job (a CREDENTIAL reply: of the credential checked last).
     *
     * @param buffer the datagram
     * @param offset absolute index of its first byte
     * @return the datagram's length with the MAC
     * @throws IllegalArgumentException when the key id names no key (key id 0: the job's key is not known)
     */
    public int sign(ByteBuffer buffer, int offset) {
        header.wrap(buffer, offset);
        HmacSha256 mac = macs[header.keyId()];
        if (mac == null && header.keyId() == JobCredential.JOB_KEY_ID) {
            if (header.operation() == V2HeaderDescriptor.OP_CREDENTIAL && credential != null
                    && credential.jobId() == header.jobId()) {
                mac = credentialMac;
            } else {
                int slot = jobKeys.find(header.jobId());
                mac = slot < 0 ? null : jobKeys.mac(slot);
            }
        }
        if (mac == null) {
            throw new IllegalArgumentException("keyId=" + header.keyId() + " is not configured" + (header.keyId()
                    == JobCredential.JOB_KEY_ID ? " for job " + Long.toHexString(header.jobId()) : ""));
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
            if (header.keyId() != JobCredential.JOB_KEY_ID) {
                return UNKNOWN_KEY;
            }
            credential = null;
            if (header.flags() == V2HeaderDescriptor.FLAG_MUNGE && header.operation() == OP_CREDENTIAL) {
                return MUNGE;
            }
            if (header.operation() == V2HeaderDescriptor.OP_CREDENTIAL) {
                mac = credentialKey(buffer);
                if (mac == null) {
                    return BAD_CREDENTIAL;
                }
            } else {
                int slot = jobKeys.find(header.jobId());
                if (slot < 0 || jobKeys.until(slot) < nowMillis) {
                    return NO_CREDENTIAL;
                }
                mac = jobKeys.mac(slot);
            }
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
     * The key a CREDENTIAL request of key id 0 is signed with: the job key of the credential in its
     * payload, when that credential verifies under a cluster key and names the header's job.
     */
    private HmacSha256 credentialKey(ByteBuffer buffer) {
        JobCredential c;
        try {
            c = JobCredential.decode(keys, buffer, header.payloadOffset(), header.payloadLength());
        } catch (IllegalArgumentException e) {
            return null;
        }
        if (c.jobId() != header.jobId()) {
            return null;
        }
        credential = c;
        credentialMac = new HmacSha256(c.jobKey(keys));
        return credentialMac;
    }

    /**
     * @return the credential of the CREDENTIAL request (key id 0) {@link #verify} checked last, when
     *         its MAC verified with the job key the credential derives; {@code null} after any other
     *         datagram of key id 0 and before any
     */
    public JobCredential credential() {
        return credential;
    }

    /**
     * Makes a job's key known, from a credential the caller found acceptable (its validity in time
     * and its user are the caller's to check, docs/protocol-v2.md 4.1): the job's datagrams of key
     * id 0 verify with it from now on. The key of a job not {@link #keepJob kept} is kept until the
     * credential expires (and the skew after): another credential of the same user for that job
     * keeps it longer.
     *
     * @param c         the credential, verified ({@link #credential()} or {@link JobCredential#decode})
     * @param nowMillis the current time
     * @return {@link #CREDENTIAL_ACCEPTED}; {@link #CREDENTIAL_OTHER_USER} when the table holds the key
     *         of another uid or gid for that job (nothing changes); {@link #CREDENTIAL_TABLE_FULL} when the
     *         job is new to the table and it holds its most unexpired keys of jobs not kept
     * @throws IllegalArgumentException when the credential's key id names no cluster key
     */
    public int acceptCredential(JobCredential c, long nowMillis) {
        return jobKeys.accept(c, keys, skewMillis, nowMillis, pendingJobKeys, false);
    }

    /**
     * As {@link #acceptCredential}, for a job the node has: the key is {@link #keepJob kept} at once,
     * whatever the credential's expiry and outside the bound of keys of jobs not kept.
     *
     * @return {@link #CREDENTIAL_ACCEPTED} or {@link #CREDENTIAL_OTHER_USER}
     */
    public int acceptCredentialOfKeptJob(JobCredential c, long nowMillis) {
        return jobKeys.accept(c, keys, skewMillis, nowMillis, pendingJobKeys, true);
    }

    /**
     * Keeps a job's key as long as the node has the job (it was created, or is had already): until
     * {@link #forgetJob}, whatever the credential's expiry, and outside the bound of
     * {@link #acceptCredential}.
     *
     * @param jobId the job
     * @return whether the table has its key
     */
    public boolean keepJob(long jobId) {
        int slot = jobKeys.find(jobId);
        if (slot >= 0) {
            jobKeys.until(slot, JobKeyTable.KEPT);
        }
        return slot >= 0;
    }

    /** Forgets a job's key (the node forgot the job, or it was created under a cluster key). */
    public void forgetJob(long jobId) {
        jobKeys.remove(jobId);
    }

    /**
     * @param jobId     a job
     * @param nowMillis the current time
     * @return whether the job's datagrams of key id 0 verify with a known key now
     */
    public boolean knowsJob(long jobId, long nowMillis) {
        int slot = jobKeys.find(jobId);
        return slot >= 0 && jobKeys.until(slot) >= nowMillis;
    }

    /** @return the credential whose job key is known for the job (maybe expired), or {@code null} */
    public JobCredential credentialOf(long jobId) {
        int slot = jobKeys.find(jobId);
        return slot < 0 ? null : jobKeys.credential(slot);
    }

    /** Forgets the expired keys of jobs not kept; @return the keys of jobs not kept that are left */
    public int purgeJobKeys(long nowMillis) {
        return jobKeys.removeExpired(nowMillis);
    }

    /** @return the job keys known, kept or not */
    public int jobKeyCount() {
        return jobKeys.size();
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
