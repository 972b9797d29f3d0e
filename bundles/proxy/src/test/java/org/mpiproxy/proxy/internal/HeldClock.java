package org.mpiproxy.proxy.internal;

import java.util.function.LongSupplier;

/**
 * A nanosecond clock for the host library's SEND timers ({@code V2HostTransport#sendClock}): it
 * runs with the system's clock until {@link #hold} stops it, and from then on only
 * {@link #advance} moves it. A test thereby decides when a retransmit timeout or a hole probe
 * is due, instead of racing them against each other on a busy machine. It never goes back.
 */
final class HeldClock implements LongSupplier {

    private boolean holding;
    private long now;
    private long heldAt;

    /** @return a clock held from the start */
    static HeldClock held() {
        HeldClock clock = new HeldClock();
        clock.hold();
        return clock;
    }

    /** Stops the clock where it is; a clock already held stays as it is. */
    synchronized void hold() {
        if (!holding) {
            now = Math.max(now, System.nanoTime());
            heldAt = now;
            holding = true;
        }
    }

    /** Moves the held clock on by {@code nanos}. */
    synchronized void advance(long nanos) {
        if (!holding) {
            throw new IllegalStateException("the clock runs: hold it first");
        }
        now += nanos;
    }

    /** @return how far the clock was moved since it was held */
    synchronized long advanced() {
        return holding ? now - heldAt : 0;
    }

    @Override
    public synchronized long getAsLong() {
        if (!holding) {
            now = Math.max(now, System.nanoTime());
        }
        return now;
    }
}
