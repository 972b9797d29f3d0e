package org.mpiproxy.proxy.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Validated settings of the proxy.
 *
 * @param logDirectory     directory below which each job gets {@code job-<id>/rank-<r>.out|.err}
 * @param holdLimitBytes   most SEND payload bytes held per rank while its ring is full
 * @param terminateTimeout how long TERMINATE waits for a rank to exit before stopping it
 * @param stopGrace        time between SIGTERM and SIGKILL when stopping a rank
 */
record ProxySettings(Path logDirectory, long holdLimitBytes, Duration terminateTimeout, Duration stopGrace) {

    ProxySettings {
        Objects.requireNonNull(logDirectory, "logDirectory");
        if (holdLimitBytes < 0) {
            throw new IllegalArgumentException("hold.limit.bytes=" + holdLimitBytes + " must be >= 0");
        }
        if (terminateTimeout.isNegative()) {
            throw new IllegalArgumentException("terminate.timeout.seconds=" + terminateTimeout.toSeconds()
                    + " must be >= 0");
        }
        if (stopGrace.isNegative()) {
            throw new IllegalArgumentException("stop.grace.seconds=" + stopGrace.toSeconds() + " must be >= 0");
        }
    }

    /**
     * @param configured the configured directory, empty for the default
     * @return the configured directory, or {@code ${karaf.data}/mpiproxy/logs} (falling back to
     *         the working directory when {@code karaf.data} is unset)
     */
    static Path resolveLogDirectory(String configured) {
        if (configured != null && !configured.isBlank()) {
            try {
                return Path.of(configured.trim());
            } catch (java.nio.file.InvalidPathException e) {
                throw new IllegalArgumentException("log.directory=" + configured + " is not a valid path: "
                        + e.getReason(), e);
            }
        }
        String data = System.getProperty("karaf.data");
        if (data == null || data.isBlank()) {
            data = System.getProperty("user.dir");
        }
        return Path.of(data, "mpiproxy", "logs");
    }
}
