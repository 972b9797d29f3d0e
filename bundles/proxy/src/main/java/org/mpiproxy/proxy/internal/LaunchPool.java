package org.mpiproxy.proxy.internal;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads that start ranks. A spawn mostly waits for the kernel (copying the page tables,
 * the child's exec), not for the CPU, so more spawns than cores overlap usefully: the pool has
 * {@link #DEFAULT_THREADS_PER_CORE} threads per core unless configured ({@code launch.threads}).
 * Its threads end after 30 s without launches.
 */
final class LaunchPool {

    /** Launch threads per core when {@code launch.threads} is 0. */
    static final int DEFAULT_THREADS_PER_CORE = 4;

    private LaunchPool() {
    }

    /**
     * @param configured {@code launch.threads}: 0 for the default, else at least 1
     * @param cores      the cores the JVM may use
     * @return the number of launch threads
     * @throws IllegalArgumentException when {@code configured} is negative
     */
    static int threads(int configured, int cores) {
        if (configured < 0) {
            throw new IllegalArgumentException("launch.threads=" + configured + " must be >= 0 (0: "
                    + DEFAULT_THREADS_PER_CORE + " per core)");
        }
        return configured > 0 ? configured : DEFAULT_THREADS_PER_CORE * Math.max(1, cores);
    }

    /**
     * @param threads     the most launches that run at once
     * @param namePrefix  prefix of the threads' names
     * @return a pool of daemon threads that end when idle
     */
    static ThreadPoolExecutor create(int threads, String namePrefix) {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemonThreads(namePrefix));
        executor.allowCoreThreadTimeOut(true);
        return executor;
    }

    /**
     * Changes how many launches run at once; running launches go on.
     *
     * @param pool    a pool of {@link #create}
     * @param threads the new number of threads, at least 1
     */
    static void resize(ThreadPoolExecutor pool, int threads) {
        if (threads > pool.getMaximumPoolSize()) {
            pool.setMaximumPoolSize(threads);
            pool.setCorePoolSize(threads);
        } else {
            pool.setCorePoolSize(threads);
            pool.setMaximumPoolSize(threads);
        }
    }

    /** @return a timer of one daemon thread whose cancelled tasks leave its queue at once */
    static java.util.concurrent.ScheduledThreadPoolExecutor timer(String namePrefix) {
        java.util.concurrent.ScheduledThreadPoolExecutor timer =
                new java.util.concurrent.ScheduledThreadPoolExecutor(1, daemonThreads(namePrefix));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** @return a factory of daemon threads named {@code namePrefix} and a counter */
    static java.util.concurrent.ThreadFactory daemonThreads(String namePrefix) {
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        return r -> {
            Thread t = new Thread(r, namePrefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
