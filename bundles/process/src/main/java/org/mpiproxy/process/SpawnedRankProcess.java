package org.mpiproxy.process;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

import org.mpiproxy.api.RankProcess;

/**
 * A {@link RankProcess} over a {@link Process} this JVM spawned.
 * <p>
 * The exit status is {@link Process#exitValue()}, which on Linux is the exit code, or
 * 128 + signal number for a process ended by a signal. {@link #stop} signals the process
 * and the descendants it has at that moment (SIGTERM, then SIGKILL after the grace, on a
 * shared daemon timer thread). When the process leads its own process group (started through
 * {@link ProcessGroup#argv}), every signal also goes to the whole group, so grandchildren
 * whose parent has already ended are reached too, and when the process ends, whatever is left
 * of its group is killed before {@link #onExit()} completes: nothing a rank started outlives
 * it unless it made its own session. Thread-safe.
 */
public final class SpawnedRankProcess implements RankProcess {

    static {
        // A rank outlives a refresh of this bundle: the next revision of the proxy takes its
        // process over, and a refreshed bundle's class loader loads no class any more. What the
        // exit and stop() run is loaded and initialized now, while this revision's wiring is valid.
        preload(ProcessGroup.class, ProcessGroup.Signal.class, StopTimer.class, ProcStat.class, Kill.class,
                RankProcessStarter.class);
    }

    /** Longest wait, at the rank's exit, for the rest of its group to die. */
    private static final Duration GROUP_KILL_WAIT = Duration.ofSeconds(5);

    /** Longest wait, at the rank's exit, for its output to be drained. */
    public static final Duration OUTPUT_DRAIN_WAIT = Duration.ofSeconds(5);

    private final Process process;
    private final int coreId;
    private final boolean ownGroup;
    private final CompletableFuture<Integer> exit;
    /**
     * Set once the process has ended and its group was found empty: no process of the rank can
     * appear any more (only members fork into a group), so stopping it signals nothing.
     */
    private volatile boolean groupGone;

    /**
     * A process in its parent's process group: only the process and its descendants are signalled.
     *
     * @param process a started process
     * @param coreId  the core it runs on
     */
    public SpawnedRankProcess(Process process, int coreId) {
        this(process, coreId, false);
    }

    /**
     * @param process  a started process
     * @param coreId   the core it runs on
     * @param ownGroup {@code true} when the process leads its own process group (its pid is the
     *                 group id), as {@link ProcessGroup#argv} arranges
     */
    public SpawnedRankProcess(Process process, int coreId, boolean ownGroup) {
        this(process, coreId, ownGroup, CompletableFuture.completedFuture(null));
    }

    /**
     * @param process  a started process
     * @param coreId   the core it runs on
     * @param ownGroup {@code true} when the process leads its own process group
     * @param output   completes when the process's output has been drained; the exit is
     *                 reported after it (waiting at most {@link #OUTPUT_DRAIN_WAIT})
     */
    public SpawnedRankProcess(Process process, int coreId, boolean ownGroup, CompletableFuture<?> output) {
        this.process = Objects.requireNonNull(process, "process");
        this.coreId = coreId;
        this.ownGroup = ownGroup;
        this.exit = process.onExit().thenApplyAsync(p -> {
            if (ownGroup) {
                groupGone = ProcessGroup.kill(p.pid(), GROUP_KILL_WAIT);
            }
            try {
                output.get(OUTPUT_DRAIN_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // the exit status matters more than the last bytes of output
            }
            return p.exitValue();
        }, StopTimer::execute);
    }

    /** @return {@code true} when the process leads its own process group */
    public boolean ownGroup() {
        return ownGroup;
    }

    @Override
    public long pid() {
        return process.pid();
    }

    @Override
    public int coreId() {
        return coreId;
    }

    @Override
    public boolean isAlive() {
        return process.isAlive();
    }

    /**
     * {@inheritDoc}
     * <p>
     * Each call returns a new future, so a caller that cancels or completes it affects
     * nobody else.
     */
    @Override
    public CompletableFuture<Integer> onExit() {
        return exit.copy();
    }

    /**
     * {@inheritDoc}
     * <p>
     * Descendants are taken at the SIGTERM and again at the SIGKILL, so children that
     * outlive the process (re-parented) are still killed when they ignore SIGTERM.
     * A negative grace counts as zero.
     */
    @Override
    public void stop(Duration grace) {
        Kill kill = term(grace);
        if (kill != null) {
            StopTimer.schedule(kill, kill.grace);
        }
    }

    /**
     * As {@link #stop(Duration)}, with what runs the SIGKILL once the grace has passed: a test
     * runs it when it chooses instead of waiting.
     *
     * @param grace the grace
     * @param timer runs the task (the SIGKILL) once the delay (the grace) has passed
     */
    void stop(Duration grace, BiConsumer<Runnable, Duration> timer) {
        Kill kill = term(grace);
        if (kill != null) {
            timer.accept(kill, kill.grace);
        }
    }

    /** @return after the SIGTERM, the SIGKILL for the end of the grace; {@code null} when nothing is left to signal */
    private Kill term(Duration grace) {
        Objects.requireNonNull(grace, "grace");
        if (groupGone) {
            // ended with its whole group: spawning kill and scanning /proc would find nothing
            return null;
        }
        List<ProcessHandle> tree = process.descendants().toList();
        if (ownGroup) {
            ProcessGroup.signal(process.pid(), ProcessGroup.Signal.TERM);
        }
        process.destroy();
        tree.forEach(ProcessHandle::destroy);
        return new Kill(tree, grace.isNegative() ? Duration.ZERO : grace);
    }

    /** The SIGKILL after the grace; a class of its own so that it is loaded with this one. */
    private final class Kill implements Runnable {
        private final List<ProcessHandle> earlierTree;
        private final Duration grace;

        Kill(List<ProcessHandle> earlierTree, Duration grace) {
            this.earlierTree = earlierTree;
            this.grace = grace;
        }

        @Override
        public void run() {
            kill(earlierTree);
        }
    }

    private static void preload(Class<?>... types) {
        for (Class<?> type : types) {
            try {
                Class.forName(type.getName(), true, type.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                // loaded when first used, as without this
            }
        }
    }

    private void kill(List<ProcessHandle> earlierTree) {
        if (groupGone) {
            // the group is empty; descendants that left it may still run
            for (ProcessHandle handle : earlierTree) {
                if (handle.isAlive()) {
                    handle.destroyForcibly();
                }
            }
            return;
        }
        List<ProcessHandle> tree = process.descendants().toList();
        if (ownGroup) {
            ProcessGroup.signal(process.pid(), ProcessGroup.Signal.KILL);
        }
        process.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle handle : earlierTree) {
            if (handle.isAlive()) {
                handle.destroyForcibly();
            }
        }
    }

    @Override
    public String toString() {
        return "SpawnedRankProcess[pid=" + process.pid() + ", core=" + coreId + ", ownGroup=" + ownGroup + "]";
    }
}
