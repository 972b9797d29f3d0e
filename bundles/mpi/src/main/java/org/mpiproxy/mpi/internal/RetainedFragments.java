package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;

import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * Copies of the SEND fragments a host sent to one rank and the proxy has not acknowledged yet,
 * for messages {@code send} returned from before their acknowledgement (eager sends): fragment
 * {@code sequence} in slot {@code sequence % slots}, the whole datagram as sent (signed) and when
 * it was signed, so that a retransmission soon after sends it as it is and a later one signs it
 * again. Sequences are consecutive; the oldest goes when the proxy acknowledges it.
 * Not thread-safe (the transport's lock).
 */
final class RetainedFragments {

    private final ByteBuffer data;
    private final int[] lengths;
    private final long[] signedAt;
    private final int slotSize;
    /** The first sequence still kept, and the one after the last. */
    private long from;
    private long end;

    /**
     * @param slots    fragments kept at most, &gt;= 1
     * @param slotSize the largest datagram
     */
    RetainedFragments(int slots, int slotSize) {
        this.data = ByteBuffer.allocate(slots * slotSize).order(V2HeaderDescriptor.BYTE_ORDER);
        this.lengths = new int[slots];
        this.signedAt = new long[slots];
        this.slotSize = slotSize;
    }

    int slots() {
        return lengths.length;
    }

    /** @return the sequence after the last fragment kept; the next one kept must have it */
    long end() {
        return end;
    }

    /** @return fragments kept */
    int size() {
        return (int) (end - from);
    }

    boolean isEmpty() {
        return end == from;
    }

    /**
     * Keeps fragment {@code sequence}: bytes {@code [0, length)} of {@code datagram}, signed at
     * {@code signedAtNanos} (the send streams' clock).
     *
     * @throws IllegalStateException when it is not the next sequence or no slot is free
     */
    void keep(long sequence, ByteBuffer datagram, int length, long signedAtNanos) {
        if (isEmpty()) {
            from = sequence;
            end = sequence;
        }
        if (sequence != end || size() == lengths.length || length > slotSize) {
            throw new IllegalStateException("fragment " + sequence + " cannot be kept: next " + end + ", "
                    + size() + " of " + lengths.length + " slots used, " + length + " bytes");
        }
        store((int) (sequence % lengths.length), datagram, length, signedAtNanos);
        end++;
    }

    /** Forgets every fragment before {@code acknowledged}. */
    void release(long acknowledged) {
        if (acknowledged >= end) {
            from = end;
        } else if (acknowledged > from) {
            from = acknowledged;
        }
    }

    /** Forgets every fragment from {@code sequence} on (the proxy refused it: none after it was stored). */
    void dropFrom(long sequence) {
        if (sequence < end) {
            end = Math.max(sequence, from);
        }
    }

    /** @return whether fragment {@code sequence} is kept */
    boolean holds(long sequence) {
        return sequence >= from && sequence < end;
    }

    /**
     * @return the message size fragment {@code sequence} states (its header's ack field: set on the
     *         first fragment of a message, 0 on the others)
     */
    long statedSize(long sequence) {
        return data.getLong(keptSlot(sequence) * slotSize + V2HeaderDescriptor.ACK_OFFSET);
    }

    /**
     * Copies fragment {@code sequence} to the start of {@code datagram}.
     *
     * @return its length in bytes
     */
    int copy(long sequence, ByteBuffer datagram) {
        int slot = keptSlot(sequence);
        datagram.put(0, data, slot * slotSize, lengths[slot]);
        return lengths[slot];
    }

    /** Fragment {@code sequence} was signed again: it is now the first {@code length} bytes of {@code datagram}. */
    void resigned(long sequence, int length, long signedAtNanos, ByteBuffer datagram) {
        store(keptSlot(sequence), datagram, length, signedAtNanos);
    }

    private void store(int slot, ByteBuffer datagram, int length, long signedAtNanos) {
        data.put(slot * slotSize, datagram, 0, length);
        lengths[slot] = length;
        signedAt[slot] = signedAtNanos;
    }

    /** @return when fragment {@code sequence} was signed, on the send streams' clock (nanoseconds) */
    long signedAt(long sequence) {
        return signedAt[keptSlot(sequence)];
    }

    /** @return the slot of fragment {@code sequence}, which must be kept */
    private int keptSlot(long sequence) {
        if (!holds(sequence)) {
            throw new IllegalStateException("fragment " + sequence + " is not kept (" + from + ".." + end + ")");
        }
        return (int) (sequence % lengths.length);
    }
}
