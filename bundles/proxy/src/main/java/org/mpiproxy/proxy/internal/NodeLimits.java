package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.protocol.pmi.PmiLimits;

/**
 * What one job and one user may hold of a node, so that no job or user can exhaust it for the
 * others (docs/protocol-v2.md 5.1, 5.7): the live ranks of one job ({@code job.max.ranks}), the
 * live ranks of all jobs of one user together ({@code user.max.ranks}; jobs of cluster-key holders
 * are not a user's and are bounded per job only), and the PMI server's connections
 * ({@link PmiLimits}). A rank is live from its EXEC until its TERMINATE is answered: until then
 * it holds its channel, its output FIFOs and its log files.
 *
 * @param jobMaxRanks  most live ranks of one job on this node
 * @param userMaxRanks most live ranks of one user's jobs on this node, all together
 * @param pmi          the PMI server's bounds
 * @param environmentMaxBytes most bytes of one job's common environments ({@code exec.environment.max.bytes},
 *                            {@link V2JobEnvironments})
 */
record NodeLimits(int jobMaxRanks, int userMaxRanks, PmiLimits pmi, long environmentMaxBytes) {

    /** Default of {@code job.max.ranks}. */
    static final int DEFAULT_JOB_MAX_RANKS = 1024;
    /** Default of {@code user.max.ranks}. */
    static final int DEFAULT_USER_MAX_RANKS = 4096;
    /** The defaults. */
    static final NodeLimits DEFAULT = new NodeLimits(DEFAULT_JOB_MAX_RANKS, DEFAULT_USER_MAX_RANKS, PmiLimits.DEFAULT);
    /** The most {@code exec.environment.max.bytes} may be: one job's environments are held in memory. */
    static final long MAX_ENVIRONMENT_BYTES = 16L << 20;

    /** A new rank that a limit refuses: which limit, and the line its host and the log get. */
    record Refusal(V2Counter counter, String reason) {
    }

    NodeLimits {
        if (jobMaxRanks < 1) {
            throw new IllegalArgumentException("job.max.ranks=" + jobMaxRanks + " must be >= 1");
        }
        if (userMaxRanks < 1) {
            throw new IllegalArgumentException("user.max.ranks=" + userMaxRanks + " must be >= 1");
        }
        java.util.Objects.requireNonNull(pmi, "pmi");
        if (environmentMaxBytes < 0 || environmentMaxBytes > MAX_ENVIRONMENT_BYTES) {
            throw new IllegalArgumentException("exec.environment.max.bytes=" + environmentMaxBytes + " is not in 0.."
                    + MAX_ENVIRONMENT_BYTES);
        }
    }

    /** Limits with the default {@code exec.environment.max.bytes}. */
    NodeLimits(int jobMaxRanks, int userMaxRanks, PmiLimits pmi) {
        this(jobMaxRanks, userMaxRanks, pmi, V2JobEnvironments.DEFAULT_MAX_BYTES);
    }

    /**
     * @param config the proxy configuration
     * @return its limits
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static NodeLimits of(ProxyConfig config) {
        PmiLimits pmi = PmiLimits.of(config.pmi_max_connections_per_job(), config.pmi_max_connections_per_uid(),
                config.pmi_idle_seconds());
        return new NodeLimits(config.job_max_ranks(), config.user_max_ranks(), pmi,
                config.exec_environment_max_bytes());
    }

    /**
     * Whether one more rank may start on this node.
     *
     * @param jobs the node's v2 jobs
     * @param job  the rank's job, {@code null} when the rank would create it
     * @param user the job's user, {@code null} for a job of a cluster key
     * @return {@code null}, or which limit refuses it and why, in one line naming the limit's value
     */
    Refusal refusal(LongMap<V2Job> jobs, V2Job job, RankIdentity user) {
        int ofJob = job == null ? 0 : job.rankCount();
        if (ofJob >= jobMaxRanks) {
            return new Refusal(V2Counter.EXEC_JOB_MAX_RANKS, "job " + Job.hex(job.jobId) + " has " + ofJob
                    + " ranks on this node, job.max.ranks=" + jobMaxRanks);
        }
        if (user == null) {
            return null;
        }
        int ofUser = 0;
        for (V2Job other : jobs.values()) {
            if (other.user != null && other.user.uid() == user.uid()) {
                ofUser += other.rankCount();
            }
        }
        if (ofUser >= userMaxRanks) {
            return new Refusal(V2Counter.EXEC_USER_MAX_RANKS, "user " + user.uid() + " has " + ofUser
                    + " ranks on this node, user.max.ranks=" + userMaxRanks);
        }
        return null;
    }
}
