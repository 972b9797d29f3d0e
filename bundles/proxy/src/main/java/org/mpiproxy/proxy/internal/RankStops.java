package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops that end what they say they end, when the JVM ends right after them: a rank's SIGKILL
 * after the stop grace comes from this JVM's timer, so a stop at Karaf's shutdown waits for the
 * ranks' exits (the grace and {@link #EXIT_WAIT} at most) instead of leaving a rank that ignores
 * SIGTERM to outlive the JVM. The thread that stops the proxy.
 */
final class RankStops {

    /** Beyond the stop grace, how long a stop waits for the ranks' exits. */
    static final Duration EXIT_WAIT = Duration.ofSeconds(15);

    private static final Logger LOG = LoggerFactory.getLogger(RankStops.class);

    private RankStops() {
    }

    /**
     * Stops every rank and closes the protocols ({@link ProtocolFront#close()}), then waits for
     * the ranks that ran to end.
     */
    static void closeAndWait(ProtocolFront front, Duration grace) {
        List<CompletableFuture<?>> exits = new ArrayList<>();
        for (JobInfo job : front.jobs()) {
            for (RankInfo rank : job.ranks()) {
                if (rank.pid() > 0 && (rank.state() == RankInfo.State.RUNNING
                        || rank.state() == RankInfo.State.TERMINATING)) {
                    ProcessHandle.of(rank.pid()).ifPresent(p -> exits.add(p.onExit()));
                }
            }
        }
        front.close();
        await(exits, grace);
    }

    /**
     * Stops ranks through their handed-over handles ({@link RankHandOver#stopAll}) and waits for
     * their exit futures.
     *
     * @param ranks exported ranks, with their {@code stop} and {@code exit}
     */
    static void stopAndWait(List<Map<String, Object>> ranks, Duration grace) {
        RankHandOver.stopAll(Map.of("ranks", ranks), grace);
        List<CompletableFuture<?>> exits = new ArrayList<>();
        for (Map<String, Object> rank : ranks) {
            if (rank.get("exit") instanceof CompletableFuture<?> exit) {
                exits.add(exit);
            }
        }
        await(exits, grace);
    }

    private static void await(List<CompletableFuture<?>> exits, Duration grace) {
        List<CompletableFuture<?>> ended = new ArrayList<>();
        for (CompletableFuture<?> exit : exits) {
            // ended either way: a failed exit future must not end the wait for the others
            ended.add(exit.handle((status, failure) -> null));
        }
        Duration wait = grace.plus(EXIT_WAIT);
        try {
            CompletableFuture.allOf(ended.toArray(new CompletableFuture<?>[0])).get(wait.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            long running = ended.stream().filter(f -> !f.isDone()).count();
            if (running > 0) {
                LOG.error("{} rank(s) still running {} s after their stop; they outlive this JVM", running,
                        wait.toSeconds());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
