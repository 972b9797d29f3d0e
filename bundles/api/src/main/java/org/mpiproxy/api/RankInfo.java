package org.mpiproxy.api;

/**
 * A snapshot of one rank, for operators.
 *
 * @param rankId     the rank id
 * @param coreId     the core it was started on
 * @param program    the program name
 * @param pid        the process id, or -1 when it never started
 * @param state      the rank's state
 * @param exitStatus exit code or 128 + signal once exited, else -1
 * @param bytesIn    payload bytes delivered to the rank
 * @param bytesOut   payload bytes taken from the rank
 * @param held       bytes of SEND data held because the rank's ring was full
 * @param dropped    SEND datagrams dropped because the hold queue was full
 */
public record RankInfo(int rankId, int coreId, String program, long pid, State state, int exitStatus,
                       long bytesIn, long bytesOut, long held, long dropped) {

    /** Life cycle of a rank. */
    public enum State {
        /** the process runs */
        RUNNING,
        /** the process has ended; its exit status is known */
        EXITED,
        /** the host asked to terminate; waiting for the process to end */
        TERMINATING,
        /** the process could not be started */
        FAILED
    }
}
