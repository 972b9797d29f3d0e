package org.mpiproxy.process;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** One daemon timer thread, shared by all processes, for the SIGKILL after a stop's grace and group clean-up at exit. */
final class StopTimer {

    private static final ScheduledThreadPoolExecutor TIMER = createTimer();

    private StopTimer() {
    }

    static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        long nanos;
        try {
            nanos = delay.toNanos();
        } catch (ArithmeticException e) {
            nanos = Long.MAX_VALUE;
        }
        return TIMER.schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    static void execute(Runnable task) {
        TIMER.execute(task);
    }

    private static ScheduledThreadPoolExecutor createTimer() {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "mpiproxy-rank-stop");
            thread.setDaemon(true);
            return thread;
        });
        // The thread ends when no kill is pending, so an uninstalled bundle leaves none behind.
        timer.setKeepAliveTime(5, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
