package org.mpiproxy.transport.udp.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.slf4j.LoggerFactory;

/**
 * Watches a transport's receive thread: its heartbeat (since when it is inside the handler), the
 * failures it survived, its deaths and restarts. Thread-safe: the receive thread writes the
 * heartbeat, any thread reads.
 * <p>
 * The loop survives every {@link Throwable} but a {@link VirtualMachineError}; of those it
 * survives {@link StackOverflowError} (the stack has unwound) and {@link InternalError}, which is
 * how the JVM reports a fault in a mapped file: a ring's page that a full file system (a full
 * channel base) cannot give. Anything else ends the thread; it is then reported dead at once and
 * restarted after a delay that doubles with each death in a row.
 */
public final class ReceiveSupervision {

    /** Runs a restart of a dead receive thread later. */
    @FunctionalInterface
    public interface Restarter {
        /**
         * @param restart    starts the receive thread again; any thread
         * @param delayNanos how long to wait first
         */
        void schedule(Runnable restart, long delayNanos);
    }

    /** Restarts on the JDK's shared delayed executor. */
    public static final Restarter DELAYED = (restart, delayNanos) ->
            CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS).execute(restart);

    /** Delay before the first restart after a death. */
    static final long FIRST_RESTART_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Longest delay before a restart, reached after deaths in a row. */
    static final long MAX_RESTART_DELAY_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** Window of the failure log: at most {@link #LOG_BURST} lines in each. */
    static final long LOG_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);
    static final int LOG_BURST = 10;

    private static final long OUTSIDE = Long.MIN_VALUE;

    private final LongSupplier nanoClock;
    private final Restarter restarter;
    private final Consumer<String> log;

    /** When the receive thread entered the handler, on {@link #nanoClock}; {@link #OUTSIDE} when not in it. */
    private volatile long passStart = OUTSIDE;
    private final LongAdder failures = new LongAdder();
    private final AtomicLong deaths = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();
    /** Why the receive thread is dead, {@code null} while it runs. */
    private volatile String death;
    /** Why it last died, {@code null} when it never did. */
    private volatile String lastDeath;

    /** Written under this. */
    private volatile int deathsInARow;
    private long windowStart;
    private int linesInWindow;
    private long suppressed;

    /** Production: {@link System#nanoTime}, restarts on {@link #DELAYED}, lines to the transport's log. */
    public ReceiveSupervision() {
        this(System::nanoTime, DELAYED, LoggerFactory.getLogger(UdpTransport.class)::warn);
    }

    /**
     * @param nanoClock the clock heartbeats and the failure log's windows are measured on
     * @param restarter runs the restart of a dead receive thread
     * @param log       gets each one-line failure or death
     */
    public ReceiveSupervision(LongSupplier nanoClock, Restarter restarter, Consumer<String> log) {
        this.nanoClock = nanoClock;
        this.restarter = restarter;
        this.log = log;
        this.windowStart = nanoClock.getAsLong() - LOG_WINDOW_NANOS;
    }

    /** @return whether the receive loop carries on after {@code t}; false for the errors that end it */
    static boolean survivable(Throwable t) {
        return !(t instanceof VirtualMachineError) || t instanceof StackOverflowError || t instanceof InternalError;
    }

    /** Receive thread: it enters the handler (one pass of its loop). */
    void enter() {
        passStart = nanoClock.getAsLong();
    }

    /** Receive thread: it left the handler. */
    void leave() {
        passStart = OUTSIDE;
    }

    /** Receive thread: a whole pass went through, so the next death waits the shortest delay again. */
    void served() {
        if (deathsInARow != 0) {
            synchronized (this) {
                deathsInARow = 0;
            }
        }
    }

    /**
     * Counts a failure the loop survived and logs it in one line (at most {@link #LOG_BURST} lines
     * per {@link #LOG_WINDOW_NANOS}, then how many were left out).
     *
     * @param where what failed: the handler on a datagram from whom, the handler's work, the socket
     * @param t     the failure
     */
    void failed(String where, Throwable t) {
        failures.increment();
        String line = "UDP receive loop: " + where + " failed: " + describe(t) + "; serving on";
        synchronized (this) {
            long now = nanoClock.getAsLong();
            if (now - windowStart >= LOG_WINDOW_NANOS) {
                windowStart = now;
                linesInWindow = 0;
                if (suppressed > 0) {
                    line += " (" + suppressed + " earlier failures not logged)";
                    suppressed = 0;
                }
            }
            if (linesInWindow >= LOG_BURST) {
                suppressed++;
                return;
            }
            linesInWindow++;
        }
        log.accept(line);
    }

    /**
     * The dying receive thread: reports it dead at once and schedules its restart.
     *
     * @param thread  the thread's name
     * @param t       what ended it
     * @param restart starts a new receive thread; {@code null} when none can start (the
     *                transport stops, its socket is closed)
     */
    void died(String thread, Throwable t, Runnable restart) {
        passStart = OUTSIDE;
        String cause = describe(t);
        deaths.incrementAndGet();
        lastDeath = cause;
        death = cause;
        if (restart == null) {
            log.accept("UDP receive loop: " + thread + " ended: " + cause);
            return;
        }
        long delay;
        synchronized (this) {
            delay = Math.min(MAX_RESTART_DELAY_NANOS, FIRST_RESTART_DELAY_NANOS << Math.min(deathsInARow, 20));
            deathsInARow++;
        }
        log.accept("UDP receive loop: " + thread + " died: " + cause + "; restarting it in "
                + TimeUnit.NANOSECONDS.toMillis(delay) + " ms");
        restarter.schedule(restart, delay);
    }

    /** A new receive thread runs. */
    void restarted() {
        restarts.incrementAndGet();
        death = null;
    }

    /** @return how long the receive thread has been inside the handler now, 0 when it is not in it */
    public long busyNanos() {
        long start = passStart;
        return start == OUTSIDE ? 0 : Math.max(0, nanoClock.getAsLong() - start);
    }

    /** @return why the receive thread is dead, {@code null} while it runs */
    public String death() {
        return death;
    }

    /** @return why the receive thread last died, {@code null} when it never did */
    public String lastDeath() {
        return lastDeath;
    }

    /** @return failures the loop survived */
    public long failures() {
        return failures.sum();
    }

    /** @return how often the receive thread died */
    public long deaths() {
        return deaths.get();
    }

    /** @return how often it was started again */
    public long restarts() {
        return restarts.get();
    }

    /** One line: the throwable and where it was thrown. */
    static String describe(Throwable t) {
        StackTraceElement[] trace = t.getStackTrace();
        return trace.length == 0 ? t.toString() : t + " at " + frame(trace[0]);
    }

    /** A frame as {@code class.method(File.java:line)}, without module or class loader. */
    static String frame(StackTraceElement e) {
        return e.getClassName() + "." + e.getMethodName() + "(" + e.getFileName() + ":" + e.getLineNumber() + ")";
    }
}
