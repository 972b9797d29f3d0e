package org.mpiproxy.proxy.internal;

import java.util.concurrent.Future;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankProcess;

/**
 * What every rank on this node is, whichever protocol its host speaks: where it runs, its channel
 * and process, and where it is in its life ({@link RankLifecycle} moves it along). The protocols'
 * ranks ({@link Rank}, {@link V2Rank}) add their own flow state. Relay thread only.
 */
abstract class LiveRank {

    final int rankId;
    final int coreId;
    final int worldSize;
    final String program;

    RankChannel channel;
    MessageRing toRank;
    MessageRing fromRank;
    RankProcess process;
    Rank.Phase phase = Rank.Phase.STARTING;
    int exitStatus = -1;
    /** The host asked for TERMINATE. */
    boolean terminateRequested;
    /** The host asked to stop the rank now (v2 TERMINATE with STOP). */
    boolean stopRequested;
    /** SIGTERM was sent (SIGKILL follows after the stop grace): at most once. */
    boolean stopped;
    /** Gone from its job: whatever arrives for it afterwards is ignored. */
    boolean removed;
    /** The EXEC reply's result, -1 while the launch runs. */
    int execResult = -1;
    String execReason;
    Future<?> terminateTimer;
    /** Why the rank's channel failed (a ring fault), {@code null} while it works; the rank is stopped. */
    String fault;
    /** Whether the rank is in its dispatcher's list of ranks with pending work. */
    boolean active;

    long bytesIn;
    long bytesOut;

    LiveRank(int rankId, int coreId, int worldSize, String program, RankChannel channel) {
        this.rankId = rankId;
        this.coreId = coreId;
        this.worldSize = worldSize;
        this.program = program;
        this.channel = channel;
        this.toRank = channel != null ? channel.toRank() : null;
        this.fromRank = channel != null ? channel.fromRank() : null;
    }

    /** @return the id of the rank's job */
    abstract long jobId();

    /** @return {@code true} when no process runs or will run: rings get no more data */
    final boolean isDone() {
        return phase == Rank.Phase.EXITED || phase == Rank.Phase.FAILED;
    }
}
