package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;

import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.mpi.internal.ChannelRankTransport;

/**
 * A launcher whose ranks are threads of the test's JVM working on the real channel files the
 * proxy made: for tests of the proxy over real UDP and real rings without processes.
 */
final class ThreadRanks {

    /** What a rank thread does with its channel; {@link ChannelRankTransport#finish()} follows. */
    interface Body {
        void run(ChannelRankTransport rank, LaunchRequest request);
    }

    private ThreadRanks() {
    }

    /**
     * @param body what every rank does
     * @return a launcher whose ranks exit 0 when their body returns, 99 when it throws
     */
    static ProcessLauncher launcher(Body body) {
        return launcher(body, request -> 0);
    }

    /**
     * @param body     what every rank does
     * @param exitCode a rank's exit status when its body returns; 99 when it throws
     * @return the launcher
     */
    static ProcessLauncher launcher(Body body, ToIntFunction<LaunchRequest> exitCode) {
        return request -> {
            ThreadRank process = new ThreadRank();
            Thread t = new Thread(() -> {
                try {
                    ChannelRankTransport rank = ChannelRankTransport.map(request.channelPath());
                    body.run(rank, request);
                    rank.finish();
                    process.exit.complete(exitCode.applyAsInt(request));
                } catch (RuntimeException e) {
                    e.printStackTrace();
                    process.exit.complete(99);
                }
            }, "rank-" + request.rankId());
            t.setDaemon(true);
            t.start();
            return process;
        };
    }

    /** A rank that is a thread: stopping it only records status 143. */
    static final class ThreadRank implements RankProcess {
        final CompletableFuture<Integer> exit = new CompletableFuture<>();

        @Override
        public long pid() {
            return 1;
        }

        @Override
        public int coreId() {
            return 0;
        }

        @Override
        public boolean isAlive() {
            return !exit.isDone();
        }

        @Override
        public CompletableFuture<Integer> onExit() {
            return exit;
        }

        @Override
        public void stop(Duration grace) {
            exit.complete(143);
        }
    }
}
