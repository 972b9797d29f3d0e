package org.mpiproxy.proxy.internal;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Rate limit of v2 refusals (docs/protocol-v2.md 3.5): at most one per source address every
 * {@link #PER_SOURCE_NANOS} and at most {@link #GLOBAL_PER_SECOND} a second in all. The table of
 * sources is bounded: when it is full of sources refused within the interval, nothing more is
 * refused (fail closed). Receive thread only; not thread-safe.
 */
final class RefusalLimiter {

    /** Per source address (any port): one refusal per this interval. */
    static final long PER_SOURCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** All sources together: refusals per second (a token bucket of this size). */
    static final int GLOBAL_PER_SECOND = 64;
    /** Source addresses remembered at most. */
    static final int MAX_SOURCES = 1024;

    private final Map<InetAddress, Long> lastBySource = new HashMap<>();
    private double tokens = GLOBAL_PER_SECOND;
    private long refilledAt;
    private boolean started;

    /**
     * @param source the refused request's source address
     * @param now    {@link System#nanoTime()}
     * @return whether a refusal may be sent to it now (then it is counted against both limits)
     */
    boolean permit(InetAddress source, long now) {
        if (!started) {
            started = true;
            refilledAt = now;
        }
        tokens = Math.min(GLOBAL_PER_SECOND, tokens + (now - refilledAt) * (double) GLOBAL_PER_SECOND
                / TimeUnit.SECONDS.toNanos(1));
        refilledAt = now;
        if (tokens < 1) {
            return false;
        }
        Long last = lastBySource.get(source);
        if (last != null && now - last < PER_SOURCE_NANOS) {
            return false;
        }
        if (last == null && lastBySource.size() >= MAX_SOURCES && !purge(now)) {
            return false;
        }
        lastBySource.put(source, now);
        tokens -= 1;
        return true;
    }

    /** Forgets the sources whose interval is over; @return whether room was made. */
    private boolean purge(long now) {
        for (Iterator<Long> it = lastBySource.values().iterator(); it.hasNext();) {
            if (now - it.next() >= PER_SOURCE_NANOS) {
                it.remove();
            }
        }
        return lastBySource.size() < MAX_SOURCES;
    }
}
