package org.mpiproxy.proxy.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Plain counters of one protocol, indexed by its counter enum; guarded by the dispatcher's lock.
 *
 * @param <C> the protocol's counters ({@link ProxyCounter}, {@link V2Counter})
 */
final class ProxyCounters<C extends Enum<C> & CounterKey> {

    private final C[] all;
    private final long[] values;

    /** @param type the protocol's counter enum */
    ProxyCounters(Class<C> type) {
        this.all = type.getEnumConstants();
        this.values = new long[all.length];
    }

    void increment(C counter) {
        values[counter.ordinal()]++;
    }

    void add(C counter, long delta) {
        values[counter.ordinal()] += delta;
    }

    long get(C counter) {
        return values[counter.ordinal()];
    }

    /** @param counts counts by name (a {@link #snapshot()}), added to these; unknown names are ignored */
    void addAll(Map<String, Long> counts) {
        for (C c : all) {
            Long v = counts.get(c.key());
            if (v != null) {
                values[c.ordinal()] += v;
            }
        }
    }

    Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (C c : all) {
            m.put(c.key(), values[c.ordinal()]);
        }
        return m;
    }
}
