package org.mpiproxy.proxy.internal;

/**
 * The v2 maximum message size ({@code v2.max.message.bytes}, docs/protocol-v2.md 5.2): a SEND
 * fragment is refused when the message it belongs to is larger than the maximum, either as
 * stated by its first fragment (the request's ack field carries the message's total bytes) or
 * as counted over the fragments stored so far.
 */
final class MessageSizeLimit {

    private MessageSizeLimit() {
    }

    /**
     * @param max      the maximum message size in bytes; 0 = no limit
     * @param stored   bytes of this message already stored (0: the fragment starts a message)
     * @param stated   the message's total bytes as stated by the fragment (0: not stated)
     * @param payload  the fragment's payload bytes
     * @return whether the fragment must be refused
     */
    static boolean exceeds(long max, long stored, long stated, int payload) {
        if (max <= 0) {
            return false;
        }
        if (stored == 0 && Long.compareUnsigned(stated, max) > 0) {
            return true;
        }
        return stored + payload > max;
    }

    /** @return the maximum as a reply argument (u32): saturated at 2^32-1 */
    static long argument(long max) {
        return Math.min(max, 0xFFFF_FFFFL);
    }
}
