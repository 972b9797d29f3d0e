package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for a state the test cannot be told of otherwise: the verdict is the state, and the
 * ceiling (a minute unless given) only stops a wait for what never comes.
 */
final class Await {

    static final Duration CEILING = Duration.ofMinutes(1);

    private Await() {
    }

    /** Waits until {@code condition} holds, failing with {@code what} at the ceiling. */
    static void until(BooleanSupplier condition, String what) {
        until(condition, CEILING, what);
    }

    /** Waits until {@code condition} holds, failing with {@code what} after {@code ceiling}. */
    static void until(BooleanSupplier condition, Duration ceiling, String what) {
        long deadline = System.nanoTime() + ceiling.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + ceiling.toSeconds() + " s: " + what);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
