package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.mpiproxy.api.Doorbell;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a starting proxy serves yet: once the channel manager (after its start-up sweep) and a
 * launcher for core 0 are bound, or when the start-up wait is over without them. Datagrams before
 * that get no answer, as if the port were not open yet, and are counted. A proxy that took over a
 * previous revision's jobs (the node was serving a moment ago) serves those jobs at once and only
 * holds back EXECs the same way: the launchers of a refreshed node bind a moment after the proxy,
 * and an EXEC that came before them would otherwise be refused for want of a launcher. Senders
 * resend an unanswered EXEC. Later absences, such as a launcher being updated, are answered with
 * errors rather than silence. Receive thread only, but {@link #droppedBeforeReady} may be read by any.
 */
final class StartupGate {

    private static final Logger LOG = LoggerFactory.getLogger(ProxyComponent.class);

    private final LongSupplier nanoClock;
    private final long startedNanos;
    private final long waitNanos;
    private final BooleanSupplier hasChannels;
    private final BooleanSupplier hasLocalLauncher;
    private final boolean resuming;
    private volatile boolean ready;
    private volatile long beforeReady;

    /**
     * @param waitNanos        {@code startup.wait.seconds}
     * @param hasChannels      whether a channel manager is bound
     * @param hasLocalLauncher whether a launcher serves core 0
     * @param tookOver         jobs were taken over: serve them at once, hold back only EXECs
     */
    StartupGate(long waitNanos, BooleanSupplier hasChannels, BooleanSupplier hasLocalLauncher, boolean tookOver) {
        this(waitNanos, hasChannels, hasLocalLauncher, tookOver, System::nanoTime);
    }

    StartupGate(long waitNanos, BooleanSupplier hasChannels, BooleanSupplier hasLocalLauncher, boolean tookOver,
                LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
        this.startedNanos = nanoClock.getAsLong();
        this.waitNanos = waitNanos;
        this.hasChannels = hasChannels;
        this.hasLocalLauncher = hasLocalLauncher;
        this.resuming = tookOver;
    }

    /** @return whether this datagram is served; one that is not is counted */
    boolean admits(ByteBuffer datagram) {
        if (ready || becameReady()) {
            return true;
        }
        if (resuming && !isExec(datagram)) {
            return true;
        }
        beforeReady++;
        return false;
    }

    private boolean becameReady() {
        boolean channels = hasChannels.getAsBoolean();
        boolean complete = channels && hasLocalLauncher.getAsBoolean();
        if (!complete && !waitedLongEnough()) {
            return false;
        }
        ready = true;
        String what = resuming ? "EXEC requests" : "requests";
        if (complete) {
            LOG.info("serving {} ({} datagrams dropped while starting)", what, beforeReady);
        } else {
            LOG.warn("serving {} without {} after waiting {} s for it ({} datagrams dropped while starting)", what,
                    channels ? "a launcher for core 0" : "a channel manager", TimeUnit.NANOSECONDS.toSeconds(waitNanos),
                    beforeReady);
        }
        return true;
    }

    /** @return whether the datagram is a v1 or v2 EXEC (by its operation alone: nothing is verified here) */
    static boolean isExec(ByteBuffer datagram) {
        int at = datagram.position();
        if (!datagram.hasRemaining()) {
            return false;
        }
        if ((datagram.get(at) & 0xff) == V2HeaderDescriptor.MAGIC) {
            return datagram.remaining() > V2HeaderDescriptor.OPERATION_OFFSET
                    && (datagram.get(at + V2HeaderDescriptor.OPERATION_OFFSET) & 0xff) == V2HeaderDescriptor.OP_EXEC;
        }
        return (datagram.get(at + V1HeaderDescriptor.OPERATION_OFFSET) & 0xff) == V1HeaderDescriptor.OP_EXEC
                && !Doorbell.isDoorbell(datagram);
    }

    /** @return whether the start-up wait is over */
    boolean waitedLongEnough() {
        return nanoClock.getAsLong() - startedNanos >= waitNanos;
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
