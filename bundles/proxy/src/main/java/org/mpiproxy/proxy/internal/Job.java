package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankInfo;

/** A v1 job: every request from one host address and port. Relay thread only. */
final class Job {

    static final String PROTOCOL = "v1";

    final long jobId;
    final InetSocketAddress owner;
    final Instant started;
    final Path logDirectory;
    /** Supervision (see {@link JobSupervisor}): stop the other ranks when one fails. */
    boolean abortOnFailure = true;
    /** Why the job's ranks are being stopped, or {@code null}. */
    String stopReason;
    /** {@link System#nanoTime()} of the host's last request. */
    long lastHeardNanos;
    /** Whether the last rank is gone (the job is over). */
    boolean ended;
    java.util.concurrent.Future<?> timeoutTimer;
    java.util.concurrent.Future<?> silenceTimer;
    private Rank[] ranks = new Rank[8];
    private int rankCount;
    /** Snapshots of ranks already terminated, for operators. */
    private final List<RankInfo> finished = new ArrayList<>();

    Job(long jobId, InetSocketAddress owner, Instant started, Path logDirectory) {
        this.jobId = jobId;
        this.owner = owner;
        this.started = started;
        this.logDirectory = logDirectory;
    }

    /** @return the rank, or {@code null}; allocation-free */
    Rank rank(int rankId) {
        return rankId < ranks.length ? ranks[rankId] : null;
    }

    void put(Rank rank) {
        if (rank.rankId >= ranks.length) {
            Rank[] grown = new Rank[Math.max(rank.rankId + 1, ranks.length * 2)];
            System.arraycopy(ranks, 0, grown, 0, ranks.length);
            ranks = grown;
        }
        if (ranks[rank.rankId] == null) {
            rankCount++;
        }
        ranks[rank.rankId] = rank;
    }

    void remove(Rank rank) {
        if (rank.rankId < ranks.length && ranks[rank.rankId] == rank) {
            ranks[rank.rankId] = null;
            rankCount--;
            finished.add(rank.info());
        }
    }

    /**
     * @return whether a rank of the job failed, or the job is being stopped, and none of its
     *         ranks runs or is starting
     */
    boolean failedWithoutLiveRank() {
        boolean failed = stopReason != null;
        for (Rank r : ranks) {
            if (r != null) {
                if (!r.isDone()) {
                    return false;
                }
                failed |= r.phase == Rank.Phase.FAILED;
            }
        }
        return failed && rankCount > 0;
    }

    boolean isEmpty() {
        return rankCount == 0;
    }

    /** @return the live ranks, ordered by rank id (a new list) */
    List<Rank> ranks() {
        List<Rank> list = new ArrayList<>(rankCount);
        for (Rank r : ranks) {
            if (r != null) {
                list.add(r);
            }
        }
        return list;
    }

    static String hex(long jobId) {
        return String.format("%016x", jobId);
    }

    static String ownerText(InetSocketAddress owner) {
        return owner.getAddress().getHostAddress() + ":" + owner.getPort();
    }

    /** @return the descriptions of the ranks that were removed, oldest first */
    List<RankInfo> finished() {
        return finished;
    }

    JobInfo info() {
        List<RankInfo> all = new ArrayList<>(finished);
        for (Rank r : ranks) {
            if (r != null) {
                all.add(r.info());
            }
        }
        all.sort(Comparator.comparingInt(RankInfo::rankId));
        return new JobInfo(jobId, PROTOCOL, ownerText(owner), started, all);
    }
}
