package org.mpiproxy.proxy.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Values by a {@code long} key without boxing it: the v2 path looks a job up by its 64-bit id for
 * every datagram, and {@code HashMap<Long, ...>} would allocate a {@code Long} each time. Open
 * addressing with linear probing, deletion by shifting back; grows at half full. Not thread-safe.
 *
 * @param <V> the values; never {@code null}
 */
final class LongMap<V> {

    private static final int FIRST_CAPACITY = 16;

    private long[] keys;
    private Object[] values;
    private int size;

    LongMap() {
        keys = new long[FIRST_CAPACITY];
        values = new Object[FIRST_CAPACITY];
    }

    /** @return the value of {@code key}, or {@code null} */
    @SuppressWarnings("unchecked")
    V get(long key) {
        int mask = keys.length - 1;
        for (int i = index(key, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                return (V) values[i];
            }
        }
        return null;
    }

    /** @return the value {@code key} had, or {@code null} */
    @SuppressWarnings("unchecked")
    V put(long key, V value) {
        Objects.requireNonNull(value, "value");
        if (2 * (size + 1) > keys.length) {
            grow();
        }
        int mask = keys.length - 1;
        int i = index(key, mask);
        for (; values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                V previous = (V) values[i];
                values[i] = value;
                return previous;
            }
        }
        keys[i] = key;
        values[i] = value;
        size++;
        return null;
    }

    /** @return the value {@code key} had, or {@code null} */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        int mask = keys.length - 1;
        for (int i = index(key, mask); values[i] != null; i = (i + 1) & mask) {
            if (keys[i] == key) {
                V previous = (V) values[i];
                removeAt(i);
                return previous;
            }
        }
        return null;
    }

    /**
     * Removes every value {@code test} accepts. A removal may shift a later entry into the slot
     * just tested, so the slot is tested again; an entry shifted from before the start of the scan
     * may be tested twice, which a predicate without side effects does not mind.
     */
    @SuppressWarnings("unchecked")
    void removeIf(Predicate<? super V> test) {
        for (int i = 0; i < values.length; ) {
            Object v = values[i];
            if (v != null && test.test((V) v)) {
                removeAt(i);
            } else {
                i++;
            }
        }
    }

    /** @return the values now, in no particular order; a copy */
    @SuppressWarnings("unchecked")
    List<V> values() {
        List<V> list = new ArrayList<>(size);
        for (Object v : values) {
            if (v != null) {
                list.add((V) v);
            }
        }
        return list;
    }

    int size() {
        return size;
    }

    void clear() {
        Arrays.fill(values, null);
        size = 0;
    }

    /** Empties slot {@code i} and moves later entries of its probe run back so that every key stays reachable. */
    private void removeAt(int i) {
        int mask = keys.length - 1;
        values[i] = null;
        size--;
        int gap = i;
        for (int j = (i + 1) & mask; values[j] != null; j = (j + 1) & mask) {
            int home = index(keys[j], mask);
            // the entry at j may fill the gap when its home is not within (gap, j]
            boolean between = gap <= j ? gap < home && home <= j : gap < home || home <= j;
            if (!between) {
                keys[gap] = keys[j];
                values[gap] = values[j];
                values[j] = null;
                gap = j;
            }
        }
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        int mask = keys.length - 1;
        for (int k = 0; k < oldKeys.length; k++) {
            if (oldValues[k] != null) {
                int i = index(oldKeys[k], mask);
                while (values[i] != null) {
                    i = (i + 1) & mask;
                }
                keys[i] = oldKeys[k];
                values[i] = oldValues[k];
            }
        }
    }

    private static int index(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32)) & mask;
    }
}
