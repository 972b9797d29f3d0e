package org.mpiproxy.api;

import java.time.Instant;
import java.util.List;

/**
 * A snapshot of one job, for operators.
 *
 * @param jobId    the job id
 * @param protocol "v1" or "v2"
 * @param owner    the host that owns the job, as {@code address:port}
 * @param started  when the first rank was requested
 * @param ranks    the job's ranks on this node, by rank id
 */
public record JobInfo(long jobId, String protocol, String owner, Instant started, List<RankInfo> ranks) {

    public JobInfo {
        ranks = List.copyOf(ranks);
    }
}
