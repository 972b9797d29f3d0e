package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankInfo;

/** One rank of a v1 job on this node: its queued work besides what every rank has. Relay thread only. */
final class Rank extends LiveRank {

    /** Life cycle; {@link RankInfo.State} is what operators see. */
    enum Phase { STARTING, RUNNING, TERMINATING, EXITED, FAILED }

    /** Most RECV requests queued per rank. */
    static final int MAX_PENDING_RECVS = 1024;

    final Job job;

    final HeldSends held = new HeldSends();
    final PendingRecvQueue recvs = new PendingRecvQueue(MAX_PENDING_RECVS);
    long dropped;

    Rank(Job job, int rankId, int coreId, int worldSize, String program, RankChannel channel) {
        super(rankId, coreId, worldSize, program, channel);
        this.job = job;
    }

    @Override
    long jobId() {
        return job.jobId;
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
