package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankInfo;

/** A v2 job: a host-chosen job id, its ranks on this node and the outcome of finished ranks. Relay thread only. */
final class V2Job {

    static final String PROTOCOL = "v2";

    /** The TERMINATE reply of a finished rank, repeated for a repeated TERMINATE. */
    record Finished(int result, long exitStatus, int core, RankInfo info) {
    }

    final long jobId;
    final Instant started;
    final Path logDirectory;
    /** Where replies go: the source of the job's first EXEC (a spoofed source cannot redirect them). */
    final InetSocketAddress owner;
    /**
     * Where the job's OUTPUT goes and its acknowledgements come from: the owner, or another port
     * on the owner's address named by the first EXEC (a launcher's, docs/protocol-v2.md 5.1).
     */
    final InetSocketAddress outputTo;
    /** The key id of the job's latest request; replies are signed with it. */
    int keyId;
    /**
     * Whose the job is (docs/protocol-v2.md 4.1): the user of the credential whose job key created it,
     * whom its ranks run as; {@code null} for a job created under a cluster key.
     */
    final RankIdentity user;
    private final Map<Integer, V2Rank> ranks = new HashMap<>();
    final Map<Integer, Finished> finished = new HashMap<>();
    /** Nanos when the last rank finished; 0 while ranks live. */
    long emptySince;

    V2Job(long jobId, InetSocketAddress owner, int keyId, Instant started, Path logDirectory) {
        this(jobId, owner, 0, keyId, started, logDirectory);
    }

    /**
     * @param outputPort the port on the owner's address that receives OUTPUT; 0: the owner's
     */
    V2Job(long jobId, InetSocketAddress owner, int outputPort, int keyId, Instant started, Path logDirectory) {
        this(jobId, owner, outputPort, keyId, started, logDirectory, null);
    }

    /**
     * @param outputPort the port on the owner's address that receives OUTPUT; 0: the owner's
     * @param user       the job's user, {@code null} for a job created under a cluster key
     */
    V2Job(long jobId, InetSocketAddress owner, int outputPort, int keyId, Instant started, Path logDirectory,
          RankIdentity user) {
        this.jobId = jobId;
        this.user = user;
        this.owner = owner;
        this.outputTo = outputPort == 0 || outputPort == owner.getPort() ? owner
                : new InetSocketAddress(owner.getAddress(), outputPort);
        this.keyId = keyId;
        this.started = started;
        this.logDirectory = logDirectory;
    }

    V2Rank rank(long rankId) {
        return rankId >= 0 && rankId <= Integer.MAX_VALUE ? ranks.get((int) rankId) : null;
    }

    void put(V2Rank rank) {
        ranks.put(rank.rankId, rank);
        emptySince = 0;
    }

    void remove(V2Rank rank, Finished outcome) {
        if (ranks.remove(rank.rankId, rank)) {
            finished.put(rank.rankId, outcome);
        }
    }

    boolean isEmpty() {
        return ranks.isEmpty();
    }

    /** @return the live ranks: from their EXEC until their TERMINATE was answered */
    int rankCount() {
        return ranks.size();
    }

    List<V2Rank> ranks() {
        List<V2Rank> list = new ArrayList<>(ranks.values());
        list.sort(Comparator.comparingInt(r -> r.rankId));
        return list;
    }

    JobInfo info() {
        List<RankInfo> all = new ArrayList<>();
        for (Finished f : finished.values()) {
            all.add(f.info());
        }
        for (V2Rank r : ranks.values()) {
            all.add(r.info());
        }
        all.sort(Comparator.comparingInt(RankInfo::rankId));
        return new JobInfo(jobId, PROTOCOL, Job.ownerText(owner), started, all);
    }
}
