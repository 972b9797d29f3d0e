package org.mpiproxy.channel.shm;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Idle strategy for loops that poll rings: after work it returns at once; when idle it spins a
 * few times with {@link Thread#onSpinWait()}, then yields a few times and for at least
 * {@code minYieldNanos} (100 µs by default: a park costs a timer wake-up of about 50 µs here,
 * more than the other side of a ring usually needs to answer), then parks for a time
 * that doubles from {@code minParkNanos} (1 µs) up to {@code maxParkNanos} (1 ms by default).
 * Once it has parked for {@code deepIdleAfterNanos} in total without work (50 ms by default), the
 * park time keeps doubling up to {@code deepMaxParkNanos} (8 ms by default), and after
 * {@code longIdleAfterNanos} (1 s by default) up to {@code longMaxParkNanos} (16 ms by default):
 * a loop that waits a long time wakes up about 60 times a second instead of 1000, at the price of
 * answering up to 8 ms late after a wait of 50 ms, and up to 16 ms late after a wait of a second
 * or more (at most 1.6% of the wait). It never busy-loops forever.
 * <p>
 * Not thread-safe: each polling thread owns one instance.
 */
public final class BackoffIdler {

    /** Default number of spins before yielding. */
    public static final int DEFAULT_MAX_SPINS = 20;

    /** Default number of yields before parking. */
    public static final int DEFAULT_MAX_YIELDS = 5;

    /** Default shortest time spent yielding before the first park: 100 µs. */
    public static final long DEFAULT_MIN_YIELD_NANOS = 100_000L;

    /** Default first park time: 1 µs. */
    public static final long DEFAULT_MIN_PARK_NANOS = 1_000L;

    /** Default longest park time: 1 ms. */
    public static final long DEFAULT_MAX_PARK_NANOS = 1_000_000L;

    /** Default time parked without work after which the park time may grow further: 50 ms. */
    public static final long DEFAULT_DEEP_IDLE_AFTER_NANOS = 50_000_000L;

    /** Default longest park time after a long wait: 8 ms. */
    public static final long DEFAULT_DEEP_MAX_PARK_NANOS = 8_000_000L;

    /** Default time parked without work after which the park time may grow once more: 1 s. */
    public static final long DEFAULT_LONG_IDLE_AFTER_NANOS = 1_000_000_000L;

    /** Default longest park time after a wait of {@link #DEFAULT_LONG_IDLE_AFTER_NANOS}: 16 ms. */
    public static final long DEFAULT_LONG_MAX_PARK_NANOS = 16_000_000L;

    private static final long MAX_DEEP_IDLE_AFTER_NANOS = 3_600_000_000_000L;

    private final LongSupplier nanoClock;
    private final int maxSpins;
    private final int maxYields;
    private final long minParkNanos;
    private final long maxParkNanos;
    private final long deepIdleAfterNanos;
    private final long deepMaxParkNanos;
    private final long longIdleAfterNanos;
    private final long longMaxParkNanos;
    private final long minYieldNanos;

    private int spins;
    private long yieldStart;
    private int yields;
    private long parkNanos;
    private long parkedNanos;

    /** An idler with the default limits, including the deep and long phases after a long wait. */
    public BackoffIdler() {
        this(DEFAULT_MAX_SPINS, DEFAULT_MAX_YIELDS, DEFAULT_MIN_YIELD_NANOS, DEFAULT_MIN_PARK_NANOS,
            DEFAULT_MAX_PARK_NANOS, DEFAULT_DEEP_IDLE_AFTER_NANOS, DEFAULT_DEEP_MAX_PARK_NANOS,
            DEFAULT_LONG_IDLE_AFTER_NANOS, DEFAULT_LONG_MAX_PARK_NANOS);
    }

    /**
     * @param maxParkNanos longest park time, &gt;= {@link #DEFAULT_MIN_PARK_NANOS}
     * @throws IllegalArgumentException when out of range
     */
    public BackoffIdler(long maxParkNanos) {
        this(DEFAULT_MAX_SPINS, DEFAULT_MAX_YIELDS, DEFAULT_MIN_PARK_NANOS, maxParkNanos);
    }

    /**
     * @param maxSpins     spins before yielding, &gt;= 0
     * @param maxYields    yields before parking, &gt;= 0
     * @param minParkNanos first park time, &gt;= 1
     * @param maxParkNanos longest park time, &gt;= {@code minParkNanos}; no minimum yield time, no
     *                     deep phase
     * @throws IllegalArgumentException when out of range
     */
    public BackoffIdler(int maxSpins, int maxYields, long minParkNanos, long maxParkNanos) {
        this(maxSpins, maxYields, 0L, minParkNanos, maxParkNanos, 0L, maxParkNanos);
    }

    /**
     * @param maxSpins           spins before yielding, &gt;= 0
     * @param maxYields          yields before parking, &gt;= 0
     * @param minYieldNanos      shortest time yielding before parking, &gt;= 0 (0: just
     *                           {@code maxYields} yields)
     * @param minParkNanos       first park time, &gt;= 1
     * @param maxParkNanos       longest park time until the deep phase, &gt;= {@code minParkNanos}
     * @param deepIdleAfterNanos total park time without work after which the deep phase starts,
     *                           0 .. one hour
     * @param deepMaxParkNanos   longest park time in the deep phase, &gt;= {@code maxParkNanos}; no
     *                           long phase
     * @throws IllegalArgumentException when out of range
     */
    public BackoffIdler(int maxSpins, int maxYields, long minYieldNanos, long minParkNanos, long maxParkNanos,
            long deepIdleAfterNanos, long deepMaxParkNanos) {
        this(maxSpins, maxYields, minYieldNanos, minParkNanos, maxParkNanos, deepIdleAfterNanos, deepMaxParkNanos,
            deepIdleAfterNanos, deepMaxParkNanos);
    }

    /**
     * @param maxSpins           spins before yielding, &gt;= 0
     * @param maxYields          yields before parking, &gt;= 0
     * @param minYieldNanos      shortest time yielding before parking, &gt;= 0 (0: just
     *                           {@code maxYields} yields)
     * @param minParkNanos       first park time, &gt;= 1
     * @param maxParkNanos       longest park time until the deep phase, &gt;= {@code minParkNanos}
     * @param deepIdleAfterNanos total park time without work after which the deep phase starts,
     *                           0 .. one hour
     * @param deepMaxParkNanos   longest park time in the deep phase, &gt;= {@code maxParkNanos}
     * @param longIdleAfterNanos total park time without work after which the long phase starts,
     *                           {@code deepIdleAfterNanos} .. one hour
     * @param longMaxParkNanos   longest park time in the long phase, &gt;= {@code deepMaxParkNanos}
     * @throws IllegalArgumentException when out of range
     */
    public BackoffIdler(int maxSpins, int maxYields, long minYieldNanos, long minParkNanos, long maxParkNanos,
            long deepIdleAfterNanos, long deepMaxParkNanos, long longIdleAfterNanos, long longMaxParkNanos) {
        this(System::nanoTime, maxSpins, maxYields, minYieldNanos, minParkNanos, maxParkNanos, deepIdleAfterNanos,
            deepMaxParkNanos, longIdleAfterNanos, longMaxParkNanos);
    }

    /**
     * As the public constructor with nine limits, with the clock the minimum yield time is
     * measured on, so that a test drives it.
     *
     * @param nanoClock nanoseconds as {@link System#nanoTime}
     */
    BackoffIdler(LongSupplier nanoClock, int maxSpins, int maxYields, long minYieldNanos, long minParkNanos,
            long maxParkNanos, long deepIdleAfterNanos, long deepMaxParkNanos, long longIdleAfterNanos,
            long longMaxParkNanos) {
        if (maxSpins < 0 || maxYields < 0 || minYieldNanos < 0 || minParkNanos < 1 || maxParkNanos < minParkNanos
                || deepIdleAfterNanos < 0 || deepIdleAfterNanos > MAX_DEEP_IDLE_AFTER_NANOS
                || deepMaxParkNanos < maxParkNanos || longIdleAfterNanos < deepIdleAfterNanos
                || longIdleAfterNanos > MAX_DEEP_IDLE_AFTER_NANOS || longMaxParkNanos < deepMaxParkNanos) {
            throw new IllegalArgumentException("invalid idler: maxSpins=" + maxSpins + " maxYields=" + maxYields
                + " minYieldNanos=" + minYieldNanos + " minParkNanos=" + minParkNanos + " maxParkNanos=" + maxParkNanos + " deepIdleAfterNanos="
                + deepIdleAfterNanos + " deepMaxParkNanos=" + deepMaxParkNanos + " longIdleAfterNanos="
                + longIdleAfterNanos + " longMaxParkNanos=" + longMaxParkNanos);
        }
        this.nanoClock = nanoClock;
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
        this.deepIdleAfterNanos = deepIdleAfterNanos;
        this.deepMaxParkNanos = deepMaxParkNanos;
        this.longIdleAfterNanos = longIdleAfterNanos;
        this.longMaxParkNanos = longMaxParkNanos;
        this.minYieldNanos = minYieldNanos;
        reset();
    }

    /**
     * Idles after a duty cycle.
     *
     * @param workCount work done in the cycle: &gt; 0 resets the back-off and returns at once,
     *                  otherwise the idler backs off one step
     */
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    /** Backs off one step: spin, yield or park. */
    public void idle() {
        if (spins < maxSpins) {
            spins++;
            Thread.onSpinWait();
        } else if (yields < maxYields || minYieldNanos > 0 && nanoClock.getAsLong() - yieldStart < minYieldNanos) {
            if (yields++ == 0 && minYieldNanos > 0) {
                yieldStart = nanoClock.getAsLong();
            }
            Thread.yield();
        } else {
            LockSupport.parkNanos(parkNanos);
            if (parkedNanos < longIdleAfterNanos) {
                parkedNanos += Math.min(parkNanos, longIdleAfterNanos);
            }
            long cap = parkedNanos >= longIdleAfterNanos ? longMaxParkNanos
                : parkedNanos >= deepIdleAfterNanos ? deepMaxParkNanos : maxParkNanos;
            parkNanos = parkNanos > cap >> 1 ? cap : parkNanos << 1;
        }
    }

    /**
     * @return {@code true} when the next {@link #idle} parks for at least the longest park time
     *         before the deep phase (a caller may sleep on something else instead, and leave the
     *         back-off where it is)
     */
    public boolean sleepsLongNext() {
        return spins >= maxSpins && yields >= maxYields
            && (minYieldNanos == 0 || nanoClock.getAsLong() - yieldStart >= minYieldNanos) && parkNanos >= maxParkNanos;
    }

    /** Starts the next back-off from spinning again. */
    public void reset() {
        spins = 0;
        yields = 0;
        parkNanos = minParkNanos;
        parkedNanos = 0;
    }

    /** @return the park time of the next parking step */
    public long nextParkNanos() {
        return parkNanos;
    }

    /** @return the longest park time before the deep phase */
    public long maxParkNanos() {
        return maxParkNanos;
    }

    /** @return the longest park time in the deep phase, after a long wait */
    public long deepMaxParkNanos() {
        return deepMaxParkNanos;
    }

    /** @return the longest park time in the long phase, after a very long wait */
    public long longMaxParkNanos() {
        return longMaxParkNanos;
    }

    @Override
    public String toString() {
        return "BackoffIdler[maxSpins=" + maxSpins + ", maxYields=" + maxYields + ", minYieldNanos=" + minYieldNanos
            + ", minParkNanos=" + minParkNanos
            + ", maxParkNanos=" + maxParkNanos + ", deepIdleAfterNanos=" + deepIdleAfterNanos
            + ", deepMaxParkNanos=" + deepMaxParkNanos + ", longIdleAfterNanos=" + longIdleAfterNanos
            + ", longMaxParkNanos=" + longMaxParkNanos + "]";
    }
}
