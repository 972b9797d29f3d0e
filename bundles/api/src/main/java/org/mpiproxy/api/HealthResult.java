package org.mpiproxy.api;

import java.util.Objects;

/**
 * The result of one health check.
 *
 * @param check   the check's name, such as {@code udp.listening}
 * @param status  the outcome
 * @param message what was found, for operators
 */
public record HealthResult(String check, Status status, String message) {

    /** Outcome of a check, from good to bad. */
    public enum Status {
        /** the checked resource is usable */
        OK,
        /** usable now, but close to a limit */
        WARN,
        /** not usable: jobs will fail */
        CRITICAL
    }

    public HealthResult {
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(message, "message");
    }

    /**
     * @param results results of several checks
     * @return the worst status among them, {@link Status#OK} when there are none
     */
    public static Status worst(Iterable<HealthResult> results) {
        Status worst = Status.OK;
        for (HealthResult r : results) {
            if (r.status.compareTo(worst) > 0) {
                worst = r.status;
            }
        }
        return worst;
    }
}
