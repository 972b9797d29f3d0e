package org.mpiproxy.channel.shm;

import java.util.concurrent.locks.LockSupport;

/**
 * Idle strategy for loops that poll rings: after work it returns at once; when idle it spins a
 * few times with {@link Thread#onSpinWait()}, then yields a few times, then parks for a time
 * that doubles from {@code minParkNanos} (1 µs) up to {@code maxParkNanos} (1 ms by default).
 * It never busy-loops forever: an idle loop ends up parked at most {@code maxParkNanos} at a time.
 * <p>
 * Not thread-safe: each polling thread owns one instance.
 */
public final class BackoffIdler {

    /** Default number of spins before yielding. */
    public static final int DEFAULT_MAX_SPINS = 20;

    /** Default number of yields before parking. */
    public static final int DEFAULT_MAX_YIELDS = 5;

    /** Default first park time: 1 µs. */
    public static final long DEFAULT_MIN_PARK_NANOS = 1_000L;

    /** Default longest park time: 1 ms. */
    public static final long DEFAULT_MAX_PARK_NANOS = 1_000_000L;

    private final int maxSpins;
    private final int maxYields;
    private final long minParkNanos;
    private final long maxParkNanos;

    private int spins;
    private int yields;
    private long parkNanos;

    /** An idler with the default limits. */
    public BackoffIdler() {
        this(DEFAULT_MAX_SPINS, DEFAULT_MAX_YIELDS, DEFAULT_MIN_PARK_NANOS, DEFAULT_MAX_PARK_NANOS);
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
     * @param maxParkNanos longest park time, &gt;= {@code minParkNanos}
     * @throws IllegalArgumentException when out of range
     */
    public BackoffIdler(int maxSpins, int maxYields, long minParkNanos, long maxParkNanos) {
        if (maxSpins < 0 || maxYields < 0 || minParkNanos < 1 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("invalid idler: maxSpins=" + maxSpins + " maxYields=" + maxYields
                + " minParkNanos=" + minParkNanos + " maxParkNanos=" + maxParkNanos);
        }
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
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
        } else if (yields < maxYields) {
            yields++;
            Thread.yield();
        } else {
            LockSupport.parkNanos(parkNanos);
            parkNanos = parkNanos > maxParkNanos >> 1 ? maxParkNanos : parkNanos << 1;
        }
    }

    /** Starts the next back-off from spinning again. */
    public void reset() {
        spins = 0;
        yields = 0;
        parkNanos = minParkNanos;
    }

    /** @return the park time of the next parking step */
    public long nextParkNanos() {
        return parkNanos;
    }

    /** @return the longest park time */
    public long maxParkNanos() {
        return maxParkNanos;
    }

    @Override
    public String toString() {
        return "BackoffIdler[maxSpins=" + maxSpins + ", maxYields=" + maxYields + ", minParkNanos=" + minParkNanos
            + ", maxParkNanos=" + maxParkNanos + "]";
    }
}
