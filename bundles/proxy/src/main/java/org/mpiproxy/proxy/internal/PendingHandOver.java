package org.mpiproxy.proxy.internal;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * What a previous revision of the proxy handed over ({@link HandOver}), until this revision has
 * taken all of it over. The take-over runs once, on whichever thread comes first: the one that
 * binds the channel manager, or the receive thread once the start-up wait is over. The state
 * stays pending until the take-over has ended, so that the receive thread serves no datagram
 * while the jobs are half taken over: a request for a job not yet there would be answered
 * "unknown job", and a host ends its stream to that rank on such an answer to a SEND, silently,
 * while it waits for data (the fragment is never sent again). Thread-safe.
 */
final class PendingHandOver {

    private final AtomicReference<Map<String, Object>> state = new AtomicReference<>();
    private final AtomicBoolean claimed = new AtomicBoolean();

    /** @param handedOver what the previous revision left, or {@code null} for nothing; once, at the start */
    void set(Map<String, Object> handedOver) {
        state.set(handedOver);
    }

    /** @return the state while it is not completely taken over, else {@code null} */
    Map<String, Object> get() {
        return state.get();
    }

    /** @return whether datagrams wait: something was handed over and its take-over has not ended */
    boolean pending() {
        return state.get() != null;
    }

    /**
     * Takes the state over, unless another thread does or did: returns at once then (the state is
     * still {@link #pending} while that thread is at it).
     *
     * @param adopt takes the state over; the state is no longer pending once it returns or throws
     */
    void takeOver(Consumer<Map<String, Object>> adopt) {
        Map<String, Object> s = state.get();
        if (s == null || !claimed.compareAndSet(false, true)) {
            return;
        }
        try {
            adopt.accept(s);
        } finally {
            state.set(null);
        }
    }
}
