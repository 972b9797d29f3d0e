package org.mpiproxy.proxy.internal;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a starting proxy serves yet: once the channel manager (after its start-up sweep) and a
 * launcher for core 0 are bound, or when the start-up wait is over without them; at once when it
 * took over a previous revision's jobs (the node was serving a moment ago). Datagrams before that
 * get no answer, as if the port were not open yet, and are counted. Later absences, such as a
 * launcher being updated, are answered with errors rather than silence. Receive thread only, but
 * {@link #droppedBeforeReady} may be read by any.
 */
final class StartupGate {

    private static final Logger LOG = LoggerFactory.getLogger(ProxyComponent.class);

    private final long startedNanos = System.nanoTime();
    private final long waitNanos;
    private final BooleanSupplier hasChannels;
    private final BooleanSupplier hasLocalLauncher;
    private volatile boolean ready;
    private volatile long beforeReady;

    /**
     * @param waitNanos        {@code startup.wait.seconds}
     * @param hasChannels      whether a channel manager is bound
     * @param hasLocalLauncher whether a launcher serves core 0
     * @param readyNow         serve at once (jobs were taken over)
     */
    StartupGate(long waitNanos, BooleanSupplier hasChannels, BooleanSupplier hasLocalLauncher, boolean readyNow) {
        this.waitNanos = waitNanos;
        this.hasChannels = hasChannels;
        this.hasLocalLauncher = hasLocalLauncher;
        this.ready = readyNow;
    }

    /** @return whether this datagram is served; one that is not is counted */
    boolean admits() {
        if (ready || becameReady()) {
            return true;
        }
        beforeReady++;
        return false;
    }

    private boolean becameReady() {
        boolean channels = hasChannels.getAsBoolean();
        boolean complete = channels && hasLocalLauncher.getAsBoolean();
        if (!complete && System.nanoTime() - startedNanos < waitNanos) {
            return false;
        }
        ready = true;
        if (complete) {
            LOG.info("serving requests ({} datagrams dropped while starting)", beforeReady);
        } else {
            LOG.warn("serving requests without {} after waiting {} s for it ({} datagrams dropped while starting)",
                    channels ? "a launcher for core 0" : "a channel manager", TimeUnit.NANOSECONDS.toSeconds(waitNanos),
                    beforeReady);
        }
        return true;
    }

    /** @return whether the start-up wait is over */
    boolean waitedLongEnough() {
        return System.nanoTime() - startedNanos >= waitNanos;
    }

    /** Counts a datagram not served while the proxy starts. */
    void dropped() {
        beforeReady++;
    }

    /** @return datagrams dropped before the proxy served */
    long droppedBeforeReady() {
        return beforeReady;
    }
}
