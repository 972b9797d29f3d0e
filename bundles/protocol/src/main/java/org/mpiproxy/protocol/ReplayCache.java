package org.mpiproxy.protocol;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * Remembers the nonces of accepted requests for a time window, in bounded memory and without
 * allocation: an open-addressing hash set of longs plus a FIFO of insertion times. Entries
 * expire {@code retentionMillis} after they were added. Each nonce is added for a source (see
 * {@link #sourceOf}), and no source holds more than its share of the cache, so one source cannot
 * fill it for the others. When the cache, or the source's share, is full of unexpired entries,
 * {@link #add} refuses (fail closed) and adds nothing. Not thread-safe.
 */
public final class ReplayCache {

    /** {@link #add}: the nonce was new and is now remembered. */
    public static final int ADDED = 0;
    /** {@link #add}: the nonce was seen within the window. */
    public static final int REPLAYED = 1;
    /** {@link #add}: the cache holds {@code capacity} unexpired nonces; nothing was added. */
    public static final int FULL = 2;
    /** {@link #add}: the source holds its share of unexpired nonces; nothing was added. */
    public static final int SOURCE_FULL = 3;
    /** The source of nonces added without one: they share one share. */
    public static final long NO_SOURCE = 0;

    private final int capacity;
    private final int sourceShare;
    private final long retentionMillis;
    private final LongTable nonces;
    private final LongTable sources;
    private final long[] fifoNonce;
    private final long[] fifoSource;
    private final long[] fifoTime;
    private int fifoHead;
    private int size;

    /**
     * A cache without a bound per source (a source may fill it).
     *
     * @param capacity        most nonces remembered at once, &gt;= 1
     * @param retentionMillis how long a nonce is remembered
     */
    public ReplayCache(int capacity, long retentionMillis) {
        this(capacity, capacity, retentionMillis);
    }

    /**
     * @param capacity        most nonces remembered at once, 1 .. 2^28
     * @param sourceShare     most nonces remembered at once for one source, &gt;= 1 (more than
     *                        {@code capacity} is {@code capacity})
     * @param retentionMillis how long a nonce is remembered
     * @throws IllegalArgumentException when a bound is out of range
     */
    public ReplayCache(int capacity, int sourceShare, long retentionMillis) {
        if (capacity < 1 || capacity > (1 << 28)) {
            throw new IllegalArgumentException("capacity=" + capacity + " must be in 1.." + (1 << 28));
        }
        if (sourceShare < 1) {
            throw new IllegalArgumentException("sourceShare=" + sourceShare + " must be >= 1");
        }
        this.capacity = capacity;
        this.sourceShare = Math.min(sourceShare, capacity);
        this.retentionMillis = retentionMillis;
        int slots = Integer.highestOneBit(capacity * 2 - 1) << 1;
        this.nonces = new LongTable(slots, false);
        // at most one source per nonce; far fewer in practice, but a full table must never happen
        this.sources = new LongTable(slots, true);
        this.fifoNonce = new long[capacity];
        this.fifoSource = new long[capacity];
        this.fifoTime = new long[capacity];
    }

    /**
     * Adds a nonce of {@link #NO_SOURCE}.
     *
     * @param nonce     the request's nonce
     * @param nowMillis the current time
     * @return {@link #ADDED}, {@link #REPLAYED}, {@link #FULL} or {@link #SOURCE_FULL}
     */
    public int add(long nonce, long nowMillis) {
        return add(nonce, NO_SOURCE, nowMillis);
    }

    /**
     * @param nonce     the request's nonce
     * @param source    its source ({@link #sourceOf})
     * @param nowMillis the current time
     * @return {@link #ADDED}, {@link #REPLAYED} (whatever the source that added it), {@link #FULL} (for
     *         every source) or {@link #SOURCE_FULL} (for this one)
     */
    public int add(long nonce, long source, long nowMillis) {
        expire(nowMillis);
        int slot = nonces.find(nonce);
        if (nonces.used[slot]) {
            return REPLAYED;
        }
        if (size == capacity) {
            return FULL;
        }
        int sourceSlot = sources.find(source);
        int held = sources.used[sourceSlot] ? sources.counts[sourceSlot] : 0;
        if (held >= sourceShare) {
            return SOURCE_FULL;
        }
        nonces.put(slot, nonce);
        if (held == 0) {
            sources.put(sourceSlot, source);
        }
        sources.counts[sourceSlot] = held + 1;
        int tail = (fifoHead + size) % capacity;
        fifoNonce[tail] = nonce;
        fifoSource[tail] = source;
        fifoTime[tail] = nowMillis;
        size++;
        return ADDED;
    }

    /**
     * @param nonce a nonce
     * @return {@code true} when it is remembered
     */
    public boolean contains(long nonce) {
        return nonces.used[nonces.find(nonce)];
    }

    /** @return nonces remembered now (expired ones leave at the next {@link #add}) */
    public int size() {
        return size;
    }

    /**
     * @param source a source ({@link #sourceOf})
     * @return the nonces remembered now for it (expired ones leave at the next {@link #add})
     */
    public int sizeOf(long source) {
        int slot = sources.find(source);
        return sources.used[slot] ? sources.counts[slot] : 0;
    }

    /** @return the most nonces remembered at once */
    public int capacity() {
        return capacity;
    }

    /** @return the most nonces remembered at once for one source */
    public int sourceShare() {
        return sourceShare;
    }

    /**
     * The source a request's nonce is counted for: an IPv4 address, or the /64 prefix of an IPv6
     * address (the part of it a network hands out whole to one host). Allocates the address's
     * bytes; requests that skip the replay cache never get here.
     *
     * @param address the request's source address; {@code null}: {@link #NO_SOURCE}
     * @return a value that is equal for addresses that count as one source
     */
    public static long sourceOf(InetAddress address) {
        if (address == null) {
            return NO_SOURCE;
        }
        byte[] a = address.getAddress();
        long value = 0;
        int bytes = address instanceof Inet4Address ? 4 : 8;
        for (int i = 0; i < bytes; i++) {
            value = value << 8 | (a[i] & 0xff);
        }
        // IPv4 above 2^32 and below 2^33: no IPv6 prefix in use starts with 31 zero bits and a one
        return bytes == 4 ? value | 1L << 32 : value;
    }

    private void expire(long nowMillis) {
        while (size > 0 && nowMillis - fifoTime[fifoHead] >= retentionMillis) {
            nonces.remove(fifoNonce[fifoHead]);
            int sourceSlot = sources.find(fifoSource[fifoHead]);
            if (--sources.counts[sourceSlot] == 0) {
                sources.remove(fifoSource[fifoHead]);
            }
            fifoHead = (fifoHead + 1) % capacity;
            size--;
        }
    }

    private static int hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** An open-addressing set of longs, with a count per entry when asked; at most half full. */
    private static final class LongTable {
        final long[] keys;
        final boolean[] used;
        final int[] counts;
        final int mask;

        LongTable(int slots, boolean counted) {
            this.keys = new long[slots];
            this.used = new boolean[slots];
            this.counts = counted ? new int[slots] : null;
            this.mask = slots - 1;
        }

        /** @return the key's slot, or the free slot where it would go */
        int find(long key) {
            int slot = hash(key) & mask;
            while (used[slot] && keys[slot] != key) {
                slot = (slot + 1) & mask;
            }
            return slot;
        }

        void put(int slot, long key) {
            used[slot] = true;
            keys[slot] = key;
        }

        /** Linear-probing deletion with backward shift, so no tombstones accumulate. */
        void remove(long key) {
            int hole = find(key);
            if (!used[hole]) {
                return;
            }
            used[hole] = false;
            int slot = (hole + 1) & mask;
            while (used[slot]) {
                int home = hash(keys[slot]) & mask;
                // move the entry into the hole when its home is not cyclically within (hole, slot]
                boolean stays = hole <= slot ? hole < home && home <= slot : hole < home || home <= slot;
                if (!stays) {
                    keys[hole] = keys[slot];
                    if (counts != null) {
                        counts[hole] = counts[slot];
                    }
                    used[hole] = true;
                    used[slot] = false;
                    hole = slot;
                }
                slot = (slot + 1) & mask;
            }
        }
    }
}
