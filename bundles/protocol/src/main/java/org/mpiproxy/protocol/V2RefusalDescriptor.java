package org.mpiproxy.protocol;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * The v2 refusal (docs/protocol-v2.md 3.5): the one unauthenticated datagram a proxy sends, in
 * answer to a request that did not verify or that it could not remember (its replay cache is
 * full) or that names a job whose job key it does not know, so that its sender learns quickly why
 * it is not answered. 16 bytes, little-endian, smaller than any v2 request (104 bytes at least):
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+---------------+---------------+
 * |  magic 0xB2   | operation 0   | flags REPLY   |    key id     |
 * +---------------+---------------+---------------+---------------+
 * |         reason (u16)          |         reserved (0)          |
 * +-------------------------------+-------------------------------+
 * |                the request's nonce (u64)                      |
 * |                                                               |
 * +---------------------------------------------------------------+
 * </pre>
 * The key id and nonce are the refused request's, so its sender can match the refusal to a
 * request it sent; the refusal carries nothing of the proxy's own. Static methods over
 * absolute indices, little-endian whatever the buffer's order. Thread-safe.
 */
public final class V2RefusalDescriptor {

    /** The operation code of a refusal: no request has it. */
    public static final int OP_REFUSAL = 0;
    public static final int REASON_OFFSET = 4;
    public static final int NONCE_OFFSET = 8;
    /** The refusal's exact length. */
    public static final int LENGTH = 16;

    /** The proxy has no key with the request's key id, or the MAC does not match: the keys differ. */
    public static final int REASON_NOT_VERIFIED = 1;
    /** Authentic, but for another node id: the sender's name of the node is not the node's {@code node.name}. */
    public static final int REASON_WRONG_NODE = 2;
    /** Authentic, but its timestamp is older than the skew allows: the sender's clock is behind. */
    public static final int REASON_STALE = 3;
    /** Authentic, but its timestamp is further ahead than the skew allows: the sender's clock is ahead. */
    public static final int REASON_FUTURE = 4;
    /**
     * Authentic and new, but the proxy's replay cache for the key, or the sender's share of it, is
     * full of unexpired nonces: nothing was done. The one refusal a sender retries, after a back-off
     * ({@link #isRetryable}).
     */
    public static final int REASON_BUSY = 5;
    /**
     * A request signed with a job key (key id 0) for a job whose key the proxy does not know: the
     * sender presents its credential (CREDENTIAL, docs/protocol-v2.md 5.9) and sends the request again.
     */
    public static final int REASON_NO_CREDENTIAL = 6;

    private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class,
            V2HeaderDescriptor.BYTE_ORDER);
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class,
            V2HeaderDescriptor.BYTE_ORDER);

    private V2RefusalDescriptor() {
    }

    /**
     * @param authResult a refusal of {@link V2Authenticator#verify}
     * @return the refusal reason a proxy sends for it, or 0 when it sends none (malformed, replayed:
     *         see docs/protocol-v2.md 3.5)
     */
    public static int reasonOf(int authResult) {
        switch (authResult) {
            case V2Authenticator.UNKNOWN_KEY:
            case V2Authenticator.BAD_MAC:
            case V2Authenticator.BAD_CREDENTIAL:
                return REASON_NOT_VERIFIED;
            case V2Authenticator.NO_CREDENTIAL:
                return REASON_NO_CREDENTIAL;
            case V2Authenticator.WRONG_NODE:
                return REASON_WRONG_NODE;
            case V2Authenticator.STALE:
                return REASON_STALE;
            case V2Authenticator.FUTURE:
                return REASON_FUTURE;
            case V2Authenticator.REPLAY_CACHE_FULL:
            case V2Authenticator.REPLAY_SOURCE_FULL:
                return REASON_BUSY;
            default:
                return 0;
        }
    }

    /**
     * Writes a refusal of the request at {@code requestOffset} of {@code request}.
     *
     * @param request       the refused request (at least the 72-byte header)
     * @param requestOffset where it starts
     * @param reason        one of the {@code REASON_*} codes
     * @param out           a buffer of at least {@link #LENGTH} bytes from {@code offset}
     * @param offset        where the refusal starts
     * @return {@link #LENGTH}
     */
    public static int put(ByteBuffer request, int requestOffset, int reason, ByteBuffer out, int offset) {
        out.put(offset, (byte) V2HeaderDescriptor.MAGIC);
        out.put(offset + V2HeaderDescriptor.OPERATION_OFFSET, (byte) OP_REFUSAL);
        out.put(offset + V2HeaderDescriptor.FLAGS_OFFSET, (byte) V2HeaderDescriptor.FLAG_REPLY);
        out.put(offset + V2HeaderDescriptor.KEY_ID_OFFSET, request.get(requestOffset + V2HeaderDescriptor.KEY_ID_OFFSET));
        SHORT.set(out, offset + REASON_OFFSET, (short) reason);
        SHORT.set(out, offset + REASON_OFFSET + 2, (short) 0);
        LONG.set(out, offset + NONCE_OFFSET, (long) LONG.get(request, requestOffset + V2HeaderDescriptor.NONCE_OFFSET));
        return LENGTH;
    }

    /**
     * @param buffer a buffer
     * @param offset where the datagram starts
     * @param length its length as received
     * @return whether it is a well-formed refusal (length, magic, operation, flags, reserved bits)
     */
    public static boolean isRefusal(ByteBuffer buffer, int offset, int length) {
        return length == LENGTH && (buffer.get(offset) & 0xff) == V2HeaderDescriptor.MAGIC
                && buffer.get(offset + V2HeaderDescriptor.OPERATION_OFFSET) == OP_REFUSAL
                && buffer.get(offset + V2HeaderDescriptor.FLAGS_OFFSET) == V2HeaderDescriptor.FLAG_REPLY
                && (short) SHORT.get(buffer, offset + REASON_OFFSET + 2) == 0;
    }

    /** @return the refusal's reason code */
    public static int reason(ByteBuffer buffer, int offset) {
        return (short) SHORT.get(buffer, offset + REASON_OFFSET) & 0xffff;
    }

    /** @return the refused request's key id */
    public static int keyId(ByteBuffer buffer, int offset) {
        return buffer.get(offset + V2HeaderDescriptor.KEY_ID_OFFSET) & 0xff;
    }

    /** @return the refused request's nonce */
    public static long nonce(ByteBuffer buffer, int offset) {
        return (long) LONG.get(buffer, offset + NONCE_OFFSET);
    }

    /**
     * @param reason a refusal's reason code
     * @return whether the sender should send the request again after a back-off ({@link #REASON_BUSY})
     *         rather than give up: the other reasons do not go away by themselves
     */
    public static boolean isRetryable(int reason) {
        return reason == REASON_BUSY;
    }

    /**
     * @param reason a refusal's reason code
     * @param keyId  the refused request's key id
     * @return what it means to the request's sender, in words
     */
    public static String describe(int reason, int keyId) {
        switch (reason) {
            case REASON_NOT_VERIFIED:
                return "authentication failed: the proxy could not verify a request signed with key id " + keyId
                        + " (its cluster key differs from this one's, or it has no key " + keyId + ")";
            case REASON_WRONG_NODE:
                return "authentication failed: the request was for another node (the proxy's node.name is not the"
                        + " name or address used here)";
            case REASON_STALE:
                return "authentication failed: the request was too old for the proxy's clock (this clock is behind"
                        + " by more than the allowed skew)";
            case REASON_FUTURE:
                return "authentication failed: the request was too far in the future for the proxy's clock (this"
                        + " clock is ahead by more than the allowed skew)";
            case REASON_BUSY:
                return "the proxy is busy: its replay cache is full (too many requests from this address, or under"
                        + " key " + keyId + ", within the replay window); nothing was done, the request may be sent"
                        + " again later";
            case REASON_NO_CREDENTIAL:
                return "the proxy does not know the job key of this job: present the job's credential (CREDENTIAL)"
                        + " and send the request again";
            default:
                return "authentication failed (refusal reason " + reason + ")";
        }
    }
}
