package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A timer and its clock that move only when the test says: {@link #schedule(Runnable, long,
 * TimeUnit)} keeps the task, {@link #advance} moves the clock and runs, on the calling thread and
 * in order, every task that has come due. As a {@link LongSupplier} it is the nanosecond clock
 * the code under test measures with, so that its delays and its measurements agree.
 */
final class ManualTimer extends ScheduledThreadPoolExecutor implements LongSupplier {

    private final PriorityQueue<Task> tasks = new PriorityQueue<>();
    private long now = TimeUnit.HOURS.toNanos(1);
    private long order;

    ManualTimer() {
        super(1);
    }

    @Override
    public synchronized long getAsLong() {
        return now;
    }

    /** Moves the clock by {@code by}, running every task due by then on this thread. */
    void advance(Duration by) {
        long target;
        synchronized (this) {
            target = now + by.toNanos();
        }
        while (true) {
            Task next;
            synchronized (this) {
                next = tasks.peek();
                if (next == null || next.due > target) {
                    now = target;
                    return;
                }
                tasks.poll();
                now = Math.max(now, next.due);
            }
            if (!next.cancelled) {
                next.done = true;
                next.command.run();
            }
        }
    }

    @Override
    public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        Task task = new Task(now + unit.toNanos(Math.max(0, delay)), order++, command);
        tasks.add(task);
        return task;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not driven by the test");
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException("not driven by the test");
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException("not driven by the test");
    }

    private final class Task implements ScheduledFuture<Object> {
        final long due;
        final long seq;
        final Runnable command;
        volatile boolean cancelled;
        volatile boolean done;

        Task(long due, long seq, Runnable command) {
            this.due = due;
            this.seq = seq;
            this.command = command;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - getAsLong(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            Task o = (Task) other;
            return due != o.due ? Long.compare(due, o.due) : Long.compare(seq, o.seq);
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }
}
