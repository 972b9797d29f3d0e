package org.mpiproxy.proxy.internal;

import java.time.Duration;

/**
 * Validated settings of job supervision. v1 jobs take them from the proxy's configuration;
 * a protocol that names them per job overrides them for that job.
 *
 * @param abortOnFailure when a rank fails (exits non-zero, or cannot be started), stop the
 *                       job's other ranks
 * @param jobTimeout     stop every rank of a job this long after it was created; zero = never
 * @param hostSilence    stop every rank of a job whose host has sent nothing for this long;
 *                       zero = never
 */
record SupervisionSettings(boolean abortOnFailure, Duration jobTimeout, Duration hostSilence) {

    /** Abort on failure, no timeout, no silence limit. */
    static final SupervisionSettings DEFAULT = new SupervisionSettings(true, Duration.ZERO, Duration.ZERO);

    SupervisionSettings {
        if (jobTimeout.isNegative()) {
            throw new IllegalArgumentException("job.timeout.seconds=" + jobTimeout.toSeconds() + " must be >= 0");
        }
        if (hostSilence.isNegative()) {
            throw new IllegalArgumentException("host.silence.seconds=" + hostSilence.toSeconds() + " must be >= 0");
        }
    }
}
