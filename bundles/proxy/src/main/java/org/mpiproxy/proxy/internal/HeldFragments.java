package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;

/**
 * SEND fragments of one rank that arrived past a hole (the fragment before them lost or late),
 * kept until the hole is filled so that the host resends only the hole, not everything after it.
 * Fragment {@code sequence} in slot {@code sequence % slots}; only the {@link #slots()} sequences
 * after the one expected are kept, the rest are dropped as before (the host sends them again).
 * Allocated with the first fragment held. Relay thread only.
 */
final class HeldFragments {

    /** Fragments held per rank at most. */
    static final int MAX_SLOTS = 64;
    /** Bytes held per rank at most (fewer slots for large datagrams); as much as a host of ours keeps in flight. */
    static final int MAX_BYTES = 2 << 20;

    private final ByteBuffer payloads;
    private final int slotSize;
    private final long[] sequences;
    private final int[] datatypes;
    private final int[] counts;
    private final int[] tagWords;
    private final long[] statedSizes;
    private final int[] lengths;
    private int held;

    /** @param slotSize the largest payload of a fragment */
    HeldFragments(int slotSize) {
        int slots = Math.max(1, Math.min(MAX_SLOTS, MAX_BYTES / Math.max(1, slotSize)));
        this.slotSize = slotSize;
        this.payloads = ByteBuffer.allocateDirect(slots * slotSize);
        this.sequences = new long[slots];
        java.util.Arrays.fill(sequences, -1);
        this.datatypes = new int[slots];
        this.counts = new int[slots];
        this.tagWords = new int[slots];
        this.statedSizes = new long[slots];
        this.lengths = new int[slots];
    }

    int slots() {
        return sequences.length;
    }

    /** @return fragments held */
    int size() {
        return held;
    }

    /**
     * Holds fragment {@code sequence}, which arrived while {@code expected} is the next to store.
     *
     * @return whether it is held (false: too far ahead, too large, or held already)
     */
    boolean hold(long sequence, long expected, int datatype, int count, int tagWord, long statedSize,
                 ByteBuffer src, int offset, int length) {
        if (sequence <= expected || sequence - expected > sequences.length || length > slotSize) {
            return false;
        }
        int slot = slot(sequence);
        if (sequences[slot] == sequence) {
            return false;
        }
        if (sequences[slot] < 0) {
            held++;
        }
        sequences[slot] = sequence;
        datatypes[slot] = datatype;
        counts[slot] = count;
        tagWords[slot] = tagWord;
        statedSizes[slot] = statedSize;
        lengths[slot] = length;
        payloads.put(slot * slotSize, src, offset, length);
        return true;
    }

    /** @return whether fragment {@code sequence} is held */
    boolean holds(long sequence) {
        return held > 0 && sequences[slot(sequence)] == sequence;
    }

    int datatype(long sequence) {
        return datatypes[slot(sequence)];
    }

    int count(long sequence) {
        return counts[slot(sequence)];
    }

    int tagWord(long sequence) {
        return tagWords[slot(sequence)];
    }

    long statedSize(long sequence) {
        return statedSizes[slot(sequence)];
    }

    int length(long sequence) {
        return lengths[slot(sequence)];
    }

    /** The buffer the payload of fragment {@code sequence} is in, at {@link #offset}. */
    ByteBuffer payloads() {
        return payloads;
    }

    int offset(long sequence) {
        return slot(sequence) * slotSize;
    }

    /** Forgets fragment {@code sequence} (stored, or refused). */
    void release(long sequence) {
        int slot = slot(sequence);
        if (sequences[slot] == sequence) {
            sequences[slot] = -1;
            held--;
        }
    }

    /** Forgets every fragment before {@code expected} (stored by a resend of the host's). */
    void releaseBefore(long expected) {
        if (held == 0) {
            return;
        }
        for (int i = 0; i < sequences.length; i++) {
            if (sequences[i] >= 0 && sequences[i] < expected) {
                sequences[i] = -1;
                held--;
            }
        }
    }

    /** Forgets everything (a refusal: the host sends again from the refused fragment). */
    void clear() {
        java.util.Arrays.fill(sequences, -1);
        held = 0;
    }

    private int slot(long sequence) {
        return (int) Long.remainderUnsigned(sequence, sequences.length);
    }
}
