package org.mpiproxy.process;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.RankProcess;

/**
 * A rank this JVM did not start: one a previous JVM of the node started and that outlived it
 * (a restart of the node under the node keeper, {@link KeeperFiles}). It is not this JVM's child,
 * so its exit is learnt from {@code /proc} (pid and start time) and its exact status from the
 * keeper that reaped it ({@code exit-<pid>-<start time>}). Its output is read on from its FIFOs
 * ({@link RankFifos}), continuing the lines the previous JVM had begun. {@link #stop} signals its
 * process group, and only while that very process (pid and start time) runs. Thread-safe.
 */
public final class AdoptedRankProcess implements RankProcess {

    /** The status reported when no keeper recorded the rank's end (it is then logged by the caller). */
    public static final int UNKNOWN_STATUS = 255;
    /** Longest wait, after the rank is seen gone, for its keeper's record. */
    private static final Duration RECORD_WAIT = Duration.ofSeconds(10);
    private static final long WATCH_MILLIS = 100;
    private static final ScheduledThreadPoolExecutor WATCH = watch();

    private final long pid;
    private final long startTime;
    private final int coreId;
    private final Path keepers;
    private final List<RankFifos.FifoInputStream> fifos = new ArrayList<>();
    private final List<CompletableFuture<Long>> output = new ArrayList<>();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private volatile boolean statusKnown = true;
    private long goneSince = -1;

    private AdoptedRankProcess(long pid, long startTime, int coreId, Path keepers) {
        this.pid = pid;
        this.startTime = startTime;
        this.coreId = coreId;
        this.keepers = keepers;
    }

    private static ScheduledThreadPoolExecutor watch() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "mpiproxy-adopted-ranks");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    /**
     * Takes a rank over.
     *
     * @param pid          its pid
     * @param startTime    its start time, field 22 of {@code /proc/<pid>/stat}, as recorded when it started
     * @param coreId       its core
     * @param keepers      the directory that holds the node keepers' directories
     * @param logDirectory its job's log directory (its log files)
     * @param fifos        the directory of its FIFOs ({@link RankFifos#directory})
     * @param jobId        its job
     * @param rankId       its rank
     * @param listener     receives its output lines, {@code null} for none
     * @param begun        the lines the previous JVM had begun, by {@link RankOutput#key}
     * @return the rank; its exit completes when it has ended and its output is read
     */
    public static AdoptedRankProcess adopt(long pid, long startTime, int coreId, Path keepers, Path logDirectory,
                                           Path fifos, long jobId, int rankId, RankOutputListener listener,
                                           Map<String, byte[]> begun) {
        AdoptedRankProcess rank = new AdoptedRankProcess(pid, startTime, coreId, keepers);
        for (RankOutputListener.Stream stream : RankOutputListener.Stream.values()) {
            Path fifo = RankFifos.path(fifos, rankId, stream);
            if (!Files.exists(fifo)) {
                continue;
            }
            try {
                InputStream in = RankFifos.openExisting(fifo);
                rank.fifos.add((RankFifos.FifoInputStream) in);
                Path file = stream == RankOutputListener.Stream.STDOUT
                        ? RankProcessStarter.outputFile(logDirectory, rankId)
                        : RankProcessStarter.errorFile(logDirectory, rankId);
                rank.output.add(RankOutput.resume(in, file, OutputSettings.DEFAULT_CAP_BYTES, false, jobId, rankId,
                        stream, listener, begun.get(RankOutput.key(jobId, rankId, stream))));
            } catch (IOException e) {
                // its output cannot be read on; its exit still can
            }
        }
        rank.check();
        return rank;
    }

    /** Every {@link #WATCH_MILLIS}: has the rank ended, and has its keeper recorded how? */
    private void check() {
        if (exit.isDone()) {
            return;
        }
        boolean runs;
        try {
            runs = ProcStat.isRunning(pid, startTime);
        } catch (IOException e) {
            runs = true;
        }
        if (!runs) {
            OptionalInt status = KeeperFiles.exitStatus(keepers, pid, startTime);
            long now = System.nanoTime();
            if (goneSince < 0) {
                goneSince = now;
            }
            if (status.isPresent() || now - goneSince > RECORD_WAIT.toNanos()) {
                statusKnown = status.isPresent();
                finish(status.orElse(UNKNOWN_STATUS));
                return;
            }
        }
        WATCH.schedule(this::check, WATCH_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void finish(int status) {
        // whatever the rank wrote is in its FIFOs: read it, then the streams end even if a
        // descendant still holds them
        fifos.forEach(RankFifos.FifoInputStream::endWhenEmpty);
        CompletableFuture.allOf(output.toArray(new CompletableFuture<?>[0]))
                .orTimeout(SpawnedRankProcess.OUTPUT_DRAIN_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                .whenCompleteAsync((v, e) -> {
                    ProcessGroup.kill(pid, Duration.ofSeconds(5));
                    exit.complete(status);
                }, StopTimer::execute);
    }

    /** @return whether the exit status is the rank's own (its keeper recorded it), once {@link #onExit()} completed */
    public boolean statusKnown() {
        return statusKnown;
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public int coreId() {
        return coreId;
    }

    @Override
    public boolean isAlive() {
        try {
            return !exit.isDone() && ProcStat.isRunning(pid, startTime);
        } catch (IOException e) {
            return !exit.isDone();
        }
    }

    @Override
    public CompletableFuture<Integer> onExit() {
        return exit.copy();
    }

    @Override
    public void stop(Duration grace) {
        if (!isAlive()) {
            return;
        }
        ProcessGroup.signal(pid, ProcessGroup.Signal.TERM);
        StopTimer.schedule(() -> {
            if (isAlive()) {
                ProcessGroup.signal(pid, ProcessGroup.Signal.KILL);
            }
        }, grace.isNegative() ? Duration.ZERO : grace);
    }

    @Override
    public String toString() {
        return "AdoptedRankProcess[pid=" + pid + ", core=" + coreId + "]";
    }
}
