package org.mpiproxy.proxy.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/** Plain counters indexed by {@link ProxyCounter}; guarded by the dispatcher's lock. */
final class ProxyCounters {

    private static final ProxyCounter[] ALL = ProxyCounter.values();

    private final long[] values = new long[ALL.length];

    void increment(ProxyCounter counter) {
        values[counter.ordinal()]++;
    }

    void add(ProxyCounter counter, long delta) {
        values[counter.ordinal()] += delta;
    }

    long get(ProxyCounter counter) {
        return values[counter.ordinal()];
    }

    Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (ProxyCounter c : ALL) {
            m.put(c.key(), values[c.ordinal()]);
        }
        return m;
    }
}
