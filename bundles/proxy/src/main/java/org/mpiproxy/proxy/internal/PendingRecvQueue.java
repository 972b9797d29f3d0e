package org.mpiproxy.proxy.internal;

/**
 * FIFO of a rank's pending RECV requests, each {datatype, elements still to send}, packed into
 * longs in a growable ring so queuing allocates nothing in a steady state. The reply goes to the
 * job's owner, so the source is not stored. Relay thread only.
 */
final class PendingRecvQueue {

    private static final long REMAINING_MASK = 0xffff_ffffL;

    private final int maxRequests;
    private long[] entries = new long[4];
    private int head;
    private int size;

    /** @param maxRequests most requests queued at once */
    PendingRecvQueue(int maxRequests) {
        this.maxRequests = maxRequests;
    }

    /**
     * @param datatype the datatype code
     * @param count    elements requested, 1 .. 2^32-1
     * @return {@code false} when the queue is full
     */
    boolean offer(int datatype, long count) {
        if (size == maxRequests) {
            return false;
        }
        if (size == entries.length) {
            long[] grown = new long[entries.length * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = entries[(head + i) & (entries.length - 1)];
            }
            entries = grown;
            head = 0;
        }
        entries[(head + size) & (entries.length - 1)] = ((long) datatype << 32) | (count & REMAINING_MASK);
        size++;
        return true;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    int headDatatype() {
        return (int) (entries[head] >>> 32);
    }

    long headRemaining() {
        return entries[head] & REMAINING_MASK;
    }

    /** Records that {@code n} elements of the head request were sent; pops it when complete. */
    void consume(long n) {
        long remaining = headRemaining() - n;
        if (remaining <= 0) {
            pop();
        } else {
            entries[head] = (entries[head] & ~REMAINING_MASK) | remaining;
        }
    }

    void pop() {
        head = (head + 1) & (entries.length - 1);
        size--;
    }

    void clear() {
        head = 0;
        size = 0;
    }

    /** @return the queued requests in order, each {@code datatype << 32 | remaining count}, for a hand-over */
    long[] export() {
        long[] out = new long[size];
        for (int i = 0; i < size; i++) {
            out[i] = entries[(head + i) & (entries.length - 1)];
        }
        return out;
    }

    /** @param exported what {@link #export} gave: queued again, after what is queued already */
    void restore(long[] exported) {
        for (long e : exported) {
            offer((int) (e >>> 32), e & REMAINING_MASK);
        }
    }
}
