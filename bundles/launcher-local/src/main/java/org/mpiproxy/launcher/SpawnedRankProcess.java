package org.mpiproxy.launcher;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

import org.mpiproxy.api.RankProcess;

/**
 * A {@link RankProcess} over a {@link Process} this JVM spawned.
 * <p>
 * The exit status is {@link Process#exitValue()}, which on Linux is the exit code, or
 * 128 + signal number for a process ended by a signal. {@link #stop} signals the process
 * and the descendants it has at that moment (SIGTERM, then SIGKILL after the grace, on a
 * shared daemon timer thread). Thread-safe.
 */
public final class SpawnedRankProcess implements RankProcess {

    private final Process process;
    private final int coreId;
    private final CompletableFuture<Integer> exit;

    /**
     * @param process a started process
     * @param coreId  the core it runs on
     */
    public SpawnedRankProcess(Process process, int coreId) {
        this.process = Objects.requireNonNull(process, "process");
        this.coreId = coreId;
        this.exit = process.onExit().thenApply(Process::exitValue);
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
        Objects.requireNonNull(grace, "grace");
        List<ProcessHandle> tree = process.descendants().toList();
        process.destroy();
        tree.forEach(ProcessHandle::destroy);
        StopTimer.schedule(() -> kill(tree), grace.isNegative() ? Duration.ZERO : grace);
    }

    private void kill(List<ProcessHandle> earlierTree) {
        List<ProcessHandle> tree = process.descendants().toList();
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
        return "SpawnedRankProcess[pid=" + process.pid() + ", core=" + coreId + "]";
    }
}
