package org.mpiproxy.protocol.pmi;

import java.util.concurrent.TimeUnit;

/**
 * How much of a node's PMI server one job and one user may hold (docs/protocol-v2.md 5.7): the
 * connections of one job, those of one uid (all its jobs together), and how long an identified
 * connection may stay idle. A connection that has not named its rank yet is bounded apart: it
 * has {@code 10 s} to do so, and at most {@code 256} such wait at once, shared fairly among the
 * uids that own them ({@link PmiWaitingPool}).
 *
 * @param perJob    most identified connections of one job; one more is closed when it names its id
 * @param perUid    most identified connections of one uid
 * @param idleNanos an identified connection that neither sent nor was sent anything this long, and
 *                  does not wait in a fence, is closed; 0: never (ranks sit idle between fences for hours)
 */
public record PmiLimits(int perJob, int perUid, long idleNanos) {

    /** Default of {@code pmi.max.connections.per.job}. */
    public static final int DEFAULT_PER_JOB = 1024;
    /** Default of {@code pmi.max.connections.per.uid}. */
    public static final int DEFAULT_PER_UID = 4096;
    /** The defaults: 1024 per job, 4096 per uid, never idle. */
    public static final PmiLimits DEFAULT = new PmiLimits(DEFAULT_PER_JOB, DEFAULT_PER_UID, 0);

    /**
     * @throws IllegalArgumentException naming the configuration key of a bad value
     */
    public PmiLimits {
        if (perJob < 1) {
            throw new IllegalArgumentException("pmi.max.connections.per.job=" + perJob + " must be >= 1");
        }
        if (perUid < 1) {
            throw new IllegalArgumentException("pmi.max.connections.per.uid=" + perUid + " must be >= 1");
        }
        if (idleNanos < 0) {
            throw new IllegalArgumentException("pmi.idle.seconds=" + TimeUnit.NANOSECONDS.toSeconds(idleNanos)
                    + " must be >= 0 (0: never)");
        }
    }

    /**
     * @param idleSeconds {@code pmi.idle.seconds}, 0 for never
     * @return the limits of these settings
     * @throws IllegalArgumentException naming the configuration key of a bad value
     */
    public static PmiLimits of(int perJob, int perUid, long idleSeconds) {
        if (idleSeconds < 0) {
            throw new IllegalArgumentException("pmi.idle.seconds=" + idleSeconds + " must be >= 0 (0: never)");
        }
        return new PmiLimits(perJob, perUid, TimeUnit.SECONDS.toNanos(idleSeconds));
    }

    /**
     * Whether a connection that proved to be a rank of the job, from {@code uid}, may be served.
     *
     * @param jobId      the rank's job
     * @param ofJob      identified connections of the job now
     * @param uid        the uid the connection and the rank belong to
     * @param ofUid      identified connections of that uid now
     * @return {@code null}, or why not (one line naming the setting and its value)
     */
    String refusal(long jobId, int ofJob, long uid, int ofUid) {
        if (ofJob >= perJob) {
            return "job " + PmiServer.hex(jobId) + " has " + ofJob + " PMI connections on this node,"
                    + " pmi.max.connections.per.job=" + perJob;
        }
        if (ofUid >= perUid) {
            return "uid " + uid + " has " + ofUid + " PMI connections on this node, pmi.max.connections.per.uid="
                    + perUid;
        }
        return null;
    }

    /**
     * @param sinceActive nanoseconds since the identified connection last sent or was sent something
     * @param waiting     whether the server owes it an answer (it waits in a fence)
     * @return whether it has been idle too long and is closed
     */
    boolean idle(long sinceActive, boolean waiting) {
        return idleNanos > 0 && !waiting && sinceActive > idleNanos;
    }
}
