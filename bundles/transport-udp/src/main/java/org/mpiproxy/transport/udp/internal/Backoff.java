package org.mpiproxy.transport.udp.internal;

import java.io.IOException;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * Spin, then yield for a short while, then park with a growing timeout: nobody spins on an
 * idle socket. The yield phase lasts at least {@link #YIELD_NANOS}: a park costs a wake-up
 * of about 50 us here (the kernel's default timer slack), more than a rank usually needs to
 * answer, so the first wait for a rank's ring yields instead of sleeping. After
 * {@link #DEEP_IDLE_AFTER_NANOS} parked without work the wait grows to at most
 * {@link #DEEP_MAX_PARK_NANOS} and, given the selector, waits in {@code select}, so that a
 * datagram still wakes the thread at once: a RECV pending on a blocked rank then costs about
 * 125 wake-ups a second instead of 1000.
 */
final class Backoff {
    static final int SPINS = 20;
    static final int YIELDS = 10;
    static final long YIELD_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    static final long MIN_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(1);
    static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    static final long DEEP_IDLE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long DEEP_MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(8);
    static final long LONG_IDLE_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long LONG_MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(16);

    private final LongSupplier nanoClock;
    private int spins;
    private int yields;
    private long yieldStart;
    private long parkNanos = MIN_PARK_NANOS;
    private long parkedNanos;

    Backoff() {
        this(System::nanoTime);
    }

    /** @param nanoClock the clock the yield phase is measured on, as {@link System#nanoTime} */
    Backoff(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    void idle() {
        try {
            idle(null);
        } catch (IOException e) {
            throw new IllegalStateException(e); // not reached: no selector, no I/O
        }
    }

    /**
     * @param selector where to wait in the deep phase, {@code null} to park there too
     * @throws IOException when the selector fails
     */
    void idle(Selector selector) throws IOException {
        if (spins < SPINS) {
            spins++;
            Thread.onSpinWait();
        } else if (yields < YIELDS || nanoClock.getAsLong() - yieldStart < YIELD_NANOS) {
            if (yields++ == 0) {
                yieldStart = nanoClock.getAsLong();
            }
            Thread.yield();
        } else {
            if (selector != null && parkNanos > MAX_PARK_NANOS) {
                selector.select(TimeUnit.NANOSECONDS.toMillis(parkNanos));
                selector.selectedKeys().clear();
            } else {
                LockSupport.parkNanos(parkNanos);
            }
            if (parkedNanos < LONG_IDLE_AFTER_NANOS) {
                parkedNanos += parkNanos;
            }
            parkNanos = Math.min(parkNanos << 1, parkedNanos >= LONG_IDLE_AFTER_NANOS ? LONG_MAX_PARK_NANOS
                    : parkedNanos >= DEEP_IDLE_AFTER_NANOS ? DEEP_MAX_PARK_NANOS : MAX_PARK_NANOS);
        }
    }

    /** @return {@code true} when the next {@link #idle} waits a millisecond or more */
    boolean sleepsLongNext() {
        return spins >= SPINS && yields >= YIELDS && nanoClock.getAsLong() - yieldStart >= YIELD_NANOS
                && parkNanos >= MAX_PARK_NANOS;
    }

    void reset() {
        spins = 0;
        yields = 0;
        parkNanos = MIN_PARK_NANOS;
        parkedNanos = 0;
    }

    long parkNanos() {
        return parkNanos;
    }
}
