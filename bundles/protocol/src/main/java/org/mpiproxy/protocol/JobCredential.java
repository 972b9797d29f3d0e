package org.mpiproxy.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * A job credential (docs/protocol-v2.md 4.1): a proxy's statement, under a cluster key, that the
 * user {@code uid}/{@code gid} may run job {@code jobId} until {@code expiresMillis}. A proxy issues
 * one to a user the kernel named (its local socket) and hands it over with the job's key
 * ({@link #jobKey}), which signs that job's v2 datagrams under key id {@link #JOB_KEY_ID}; any proxy
 * of the cluster derives the same job key from the credential and the cluster key, so the user
 * never holds a cluster key. Immutable and thread-safe.
 *
 * @param keyId         the cluster key that signs the credential and derives the job key (1..255)
 * @param uid           the user the job's ranks run as
 * @param gid           the group the job's ranks run as
 * @param jobId         the job; never 0
 * @param issuedMillis  when it was made, milliseconds since the epoch
 * @param expiresMillis after this, no node accepts it for a job it does not already have
 * @param issuerNodeId  the node that issued it ({@link NodeIds#of})
 * @param nonce         random
 */
public record JobCredential(int keyId, long uid, long gid, long jobId, long issuedMillis, long expiresMillis,
                            long issuerNodeId, long nonce) {

    /** The key id under which a job's datagrams are signed with its job key. */
    public static final int JOB_KEY_ID = 0;
    /** Bytes of an encoded credential, its MAC included. */
    public static final int LENGTH = 88;
    /** Bytes covered by the MAC. */
    public static final int SIGNED_LENGTH = 56;
    /** The only version. */
    public static final int VERSION = 1;

    private static final byte[] CREDENTIAL_LABEL = "mpiproxy-credential-1".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] JOB_KEY_LABEL = "mpiproxy-job-key-1".getBytes(StandardCharsets.US_ASCII);
    private static final long MAX_ID = 0xFFFF_FFFFL;

    /**
     * @throws IllegalArgumentException when the key id is not 1..255, the uid or gid not an unsigned
     *                                  32-bit number, the job id 0 or the credential expires before it was issued
     */
    public JobCredential {
        if (keyId < 1 || keyId > 255) {
            throw new IllegalArgumentException("credential key id " + keyId + " is not 1..255");
        }
        if (uid < 0 || uid > MAX_ID || gid < 0 || gid > MAX_ID) {
            throw new IllegalArgumentException("credential uid " + uid + " or gid " + gid + " is not 0.." + MAX_ID);
        }
        if (jobId == 0) {
            throw new IllegalArgumentException("a credential names a job id other than 0");
        }
        if (expiresMillis < issuedMillis) {
            throw new IllegalArgumentException("credential expires (" + expiresMillis + ") before it was issued ("
                    + issuedMillis + ")");
        }
    }

    /**
     * @param keys  the cluster keys; the key with this credential's key id signs it
     * @return the 88 bytes: the fields of docs/protocol-v2.md 4.1, then the MAC
     * @throws IllegalArgumentException when the key id names no key
     */
    public byte[] encode(ClusterKeys keys) {
        ByteBuffer out = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        out.put((byte) VERSION).put((byte) keyId).putShort((short) 0)
                .putInt((int) uid).putInt((int) gid).putInt(0)
                .putLong(jobId).putLong(issuedMillis).putLong(expiresMillis).putLong(issuerNodeId).putLong(nonce);
        byte[] bytes = out.array();
        byte[] mac = mac(key(keys, keyId), bytes);
        System.arraycopy(mac, 0, bytes, SIGNED_LENGTH, mac.length);
        return bytes;
    }

    /**
     * Reads and checks a credential: its length, version, reserved fields, key id and MAC (in
     * constant time). Whether it is still valid at some time is the caller's to check.
     *
     * @param keys   the cluster keys
     * @param buffer the bytes, little-endian
     * @param offset absolute index of the first byte
     * @param length bytes available
     * @return the credential
     * @throws IllegalArgumentException with one line saying what is wrong
     */
    public static JobCredential decode(ClusterKeys keys, ByteBuffer buffer, int offset, int length) {
        if (length != LENGTH) {
            throw new IllegalArgumentException("a credential has " + LENGTH + " bytes, not " + length);
        }
        byte[] bytes = new byte[LENGTH];
        buffer.get(offset, bytes);
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int version = in.get(0) & 0xFF;
        if (version != VERSION) {
            throw new IllegalArgumentException("credential version " + version + " is not " + VERSION);
        }
        int keyId = in.get(1) & 0xFF;
        if (keyId == JOB_KEY_ID || !keys.has(keyId)) {
            throw new IllegalArgumentException("credential key id " + keyId + " names no cluster key");
        }
        byte[] expected = mac(keys.key(keyId), bytes);
        byte[] received = java.util.Arrays.copyOfRange(bytes, SIGNED_LENGTH, LENGTH);
        if (!MessageDigest.isEqual(expected, received)) {
            throw new IllegalArgumentException("credential MAC does not match");
        }
        if (in.getShort(2) != 0 || in.getInt(12) != 0) {
            throw new IllegalArgumentException("credential reserved fields are not 0");
        }
        return new JobCredential(keyId, in.getInt(4) & MAX_ID, in.getInt(8) & MAX_ID, in.getLong(16),
                in.getLong(24), in.getLong(32), in.getLong(40), in.getLong(48));
    }

    /** @see #decode(ClusterKeys, ByteBuffer, int, int) */
    public static JobCredential decode(ClusterKeys keys, byte[] bytes) {
        return decode(keys, ByteBuffer.wrap(bytes), 0, bytes.length);
    }

    /**
     * @param keys the cluster keys
     * @return the job key: HMAC-SHA256 under the cluster key over {@code "mpiproxy-job-key-1"},
     *         the job id (u64), uid and gid (u32), little-endian (docs/protocol-v2.md 4.1). It depends
     *         on job, user and cluster key only: every credential of one user for one job gives the same key
     */
    public byte[] jobKey(ClusterKeys keys) {
        return jobKey(key(keys, keyId), jobId, uid, gid);
    }

    /**
     * @param nowMillis  the current time
     * @param skewMillis the clock difference allowed between nodes
     * @return {@code null} when a node may accept it now for a new job, else why not (one line)
     */
    public String invalidAt(long nowMillis, long skewMillis) {
        if (issuedMillis > nowMillis + skewMillis) {
            return "credential issued in the future (" + (issuedMillis - nowMillis) + " ms ahead)";
        }
        if (nowMillis > expiresMillis + skewMillis) {
            return "credential expired " + (nowMillis - expiresMillis) + " ms ago";
        }
        return null;
    }

    /** @return the job key as one keys object for a host: key id {@link #JOB_KEY_ID}, signing with it */
    public static ClusterKeys hostKeys(byte[] jobKey) {
        return ClusterKeys.ofJobKey(jobKey);
    }

    /** @return the job id as 16 lower-case hexadecimal digits */
    public String jobIdHex() {
        return HexFormat.of().toHexDigits(jobId);
    }

    static byte[] jobKey(byte[] clusterKey, long jobId, long uid, long gid) {
        ByteBuffer input = ByteBuffer.allocate(JOB_KEY_LABEL.length + 16).order(ByteOrder.LITTLE_ENDIAN);
        input.put(JOB_KEY_LABEL).putLong(jobId).putInt((int) uid).putInt((int) gid);
        return hmac(clusterKey, input.array());
    }

    private static byte[] mac(byte[] clusterKey, byte[] credential) {
        byte[] input = new byte[CREDENTIAL_LABEL.length + SIGNED_LENGTH];
        System.arraycopy(CREDENTIAL_LABEL, 0, input, 0, CREDENTIAL_LABEL.length);
        System.arraycopy(credential, 0, input, CREDENTIAL_LABEL.length, SIGNED_LENGTH);
        return hmac(clusterKey, input);
    }

    private static byte[] hmac(byte[] key, byte[] input) {
        HmacSha256 mac = new HmacSha256(key);
        mac.update(ByteBuffer.wrap(input), 0, input.length);
        byte[] tag = new byte[HmacSha256.LENGTH];
        mac.tag(tag, 0);
        return tag;
    }

    private static byte[] key(ClusterKeys keys, int keyId) {
        if (keyId == JOB_KEY_ID || !keys.has(keyId)) {
            throw new IllegalArgumentException("key id " + keyId + " names no cluster key");
        }
        return keys.key(keyId);
    }
}
