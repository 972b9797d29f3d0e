package org.mpiproxy.proxy.internal;

import java.util.concurrent.TimeUnit;

/**
 * Allows at most one log line per reason per interval; the lines in between are counted and the count
 * is reported with the next line. Checking is allocation-free, so a flood of bad datagrams costs
 * no garbage. Not thread-safe.
 *
 * @param <C> the reasons: a protocol's counters
 */
final class RateLimitedLog<C extends Enum<C>> {

    static final long DEFAULT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final long intervalNanos;
    private final long[] last;
    private final long[] suppressed;
    private final boolean[] seen;

    /**
     * @param type          the reasons' enum
     * @param intervalNanos the least time between two lines of one reason
     */
    RateLimitedLog(Class<C> type, long intervalNanos) {
        this.intervalNanos = intervalNanos;
        int n = type.getEnumConstants().length;
        this.last = new long[n];
        this.suppressed = new long[n];
        this.seen = new boolean[n];
    }

    /**
     * @return {@code true} when a line for {@code reason} may be written now; then
     *         {@link #takeSuppressed} tells how many were skipped since the last one
     */
    boolean permit(C reason) {
        int i = reason.ordinal();
        long now = System.nanoTime();
        if (seen[i] && now - last[i] < intervalNanos) {
            suppressed[i]++;
            return false;
        }
        seen[i] = true;
        last[i] = now;
        return true;
    }

    long takeSuppressed(C reason) {
        long n = suppressed[reason.ordinal()];
        suppressed[reason.ordinal()] = 0;
        return n;
    }
}
