package org.mpiproxy.process;

import java.util.Map;

import org.mpiproxy.api.RankOutputListener;

/**
 * How a rank's output is captured.
 *
 * @param listener receives every line; {@code null} for none
 * @param capBytes most bytes kept per stream in the rank's log file
 * @param raw      pass text on as it arrives (for prompts without newline) instead of whole lines
 */
public record OutputSettings(RankOutputListener listener, long capBytes, boolean raw) {

    /** Default cap of a rank's log file per stream: 64 MiB. */
    public static final long DEFAULT_CAP_BYTES = 64L << 20;

    /** Environment variable a job sets to {@code raw} to get raw output. */
    public static final String ENV_OUTPUT = "MPIPROXY_OUTPUT";

    /** No listener, the default cap, whole lines. */
    public static final OutputSettings DEFAULT = new OutputSettings(null, DEFAULT_CAP_BYTES, false);

    public OutputSettings {
        if (capBytes < 0) {
            throw new IllegalArgumentException("capBytes=" + capBytes + " must be >= 0");
        }
    }

    /**
     * @param listener    receives every line; {@code null} for none
     * @param capBytes    the cap per stream
     * @param environment the job's requested environment: {@code MPIPROXY_OUTPUT=raw} asks for raw mode
     * @return the settings for that rank
     */
    public static OutputSettings of(RankOutputListener listener, long capBytes, Map<String, String> environment) {
        return new OutputSettings(listener, capBytes, "raw".equals(environment.get(ENV_OUTPUT)));
    }
}
