package org.mpiproxy.protocol;

/**
 * Remembers the nonces of accepted requests for a time window, in bounded memory and without
 * allocation: an open-addressing hash set of longs plus a FIFO of insertion times. Entries
 * expire {@code retentionMillis} after they were added. When the cache is full of unexpired
 * entries, {@link #add} refuses (fail closed). Not thread-safe.
 */
public final class ReplayCache {

    /** {@link #add}: the nonce was new and is now remembered. */
    public static final int ADDED = 0;
    /** {@link #add}: the nonce was seen within the window. */
    public static final int REPLAYED = 1;
    /** {@link #add}: the cache holds {@code capacity} unexpired nonces; nothing was added. */
    public static final int FULL = 2;

    private final int capacity;
    private final long retentionMillis;
    private final long[] table;
    private final boolean[] used;
    private final int mask;
    private final long[] fifoNonce;
    private final long[] fifoTime;
    private int fifoHead;
    private int size;

    /**
     * @param capacity        most nonces remembered at once, &gt;= 1
     * @param retentionMillis how long a nonce is remembered
     */
    public ReplayCache(int capacity, long retentionMillis) {
        if (capacity < 1 || capacity > (1 << 28)) {
            throw new IllegalArgumentException("capacity=" + capacity + " must be in 1.." + (1 << 28));
        }
        this.capacity = capacity;
        this.retentionMillis = retentionMillis;
        int slots = Integer.highestOneBit(capacity * 2 - 1) << 1;
        this.table = new long[slots];
        this.used = new boolean[slots];
        this.mask = slots - 1;
        this.fifoNonce = new long[capacity];
        this.fifoTime = new long[capacity];
    }

    /**
     * @param nonce     the request's nonce
     * @param nowMillis the current time
     * @return {@link #ADDED}, {@link #REPLAYED} or {@link #FULL}
     */
    public int add(long nonce, long nowMillis) {
        expire(nowMillis);
        int slot = find(nonce);
        if (used[slot]) {
            return REPLAYED;
        }
        if (size == capacity) {
            return FULL;
        }
        used[slot] = true;
        table[slot] = nonce;
        int tail = (fifoHead + size) % capacity;
        fifoNonce[tail] = nonce;
        fifoTime[tail] = nowMillis;
        size++;
        return ADDED;
    }

    /**
     * @param nonce a nonce
     * @return {@code true} when it is remembered
     */
    public boolean contains(long nonce) {
        return used[find(nonce)];
    }

    /** @return nonces remembered now (expired ones leave at the next {@link #add}) */
    public int size() {
        return size;
    }

    private void expire(long nowMillis) {
        while (size > 0 && nowMillis - fifoTime[fifoHead] >= retentionMillis) {
            remove(fifoNonce[fifoHead]);
            fifoHead = (fifoHead + 1) % capacity;
            size--;
        }
    }

    private int find(long nonce) {
        int slot = hash(nonce) & mask;
        while (used[slot] && table[slot] != nonce) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }

    /** Linear-probing deletion with backward shift, so no tombstones accumulate. */
    private void remove(long nonce) {
        int hole = find(nonce);
        if (!used[hole]) {
            return;
        }
        used[hole] = false;
        int slot = (hole + 1) & mask;
        while (used[slot]) {
            int home = hash(table[slot]) & mask;
            // move the entry into the hole when its home is not cyclically within (hole, slot]
            boolean stays = hole <= slot ? hole < home && home <= slot : hole < home || home <= slot;
            if (!stays) {
                table[hole] = table[slot];
                used[hole] = true;
                used[slot] = false;
                hole = slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    private static int hash(long nonce) {
        long h = nonce * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
