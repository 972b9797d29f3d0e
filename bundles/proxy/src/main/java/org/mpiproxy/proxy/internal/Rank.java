package org.mpiproxy.proxy.internal;

import java.util.concurrent.Future;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.api.RankProcess;

/** One rank of a job on this node: its channel, process and queued work. Relay thread only. */
final class Rank {

    /** Life cycle; {@link RankInfo.State} is what operators see. */
    enum Phase { STARTING, RUNNING, TERMINATING, EXITED, FAILED }

    /** Most RECV requests queued per rank. */
    static final int MAX_PENDING_RECVS = 1024;

    final Job job;
    final int rankId;
    final int coreId;
    final int worldSize;
    final String program;

    RankChannel channel;
    MessageRing toRank;
    MessageRing fromRank;
    RankProcess process;
    Phase phase = Phase.STARTING;
    int exitStatus = -1;
    boolean terminateRequested;
    boolean removed;
    /** The EXEC reply's result, -1 while the launch runs. */
    int execResult = -1;
    String execReason;
    Future<?> terminateTimer;

    final HeldSends held = new HeldSends();
    final PendingRecvQueue recvs = new PendingRecvQueue(MAX_PENDING_RECVS);
    /** Whether the rank is in the dispatcher's list of ranks with pending work. */
    boolean active;

    long bytesIn;
    long bytesOut;
    long dropped;

    Rank(Job job, int rankId, int coreId, int worldSize, String program, RankChannel channel) {
        this.job = job;
        this.rankId = rankId;
        this.coreId = coreId;
        this.worldSize = worldSize;
        this.program = program;
        this.channel = channel;
        this.toRank = channel.toRank();
        this.fromRank = channel.fromRank();
    }

    /** @return {@code true} when no process runs or will run: rings get no more data */
    boolean isDone() {
        return phase == Phase.EXITED || phase == Phase.FAILED;
    }

    boolean hasPendingWork() {
        return !held.isEmpty() || !recvs.isEmpty();
    }

    RankInfo info() {
        RankInfo.State state = state(phase, terminateRequested);
        long pid = process != null ? process.pid() : -1;
        return new RankInfo(rankId, coreId, program, pid, state, exitStatus, bytesIn, bytesOut, held.heldBytes(),
                dropped);
    }

    /**
     * @param phase              a rank's phase
     * @param terminateRequested whether its host asked for TERMINATE
     * @return what operators see of it
     */
    static RankInfo.State state(Phase phase, boolean terminateRequested) {
        switch (phase) {
            case EXITED:
                return RankInfo.State.EXITED;
            case FAILED:
                return RankInfo.State.FAILED;
            case TERMINATING:
                return RankInfo.State.TERMINATING;
            default:
                return terminateRequested ? RankInfo.State.TERMINATING : RankInfo.State.RUNNING;
        }
    }
}
