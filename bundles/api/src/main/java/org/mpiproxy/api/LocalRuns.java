package org.mpiproxy.api;

import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * Runs {@code mpiproxy run} jobs inside this JVM for the front that a local user started
 * (docs/protocol-v2.md 4.4): the proxy's local socket hands such a connection to this service,
 * so that the proxy does not depend on the launcher. A run sees only what it is given: its
 * arguments, environment, working directory and signals, never this JVM's.
 */
public interface LocalRuns {

    /**
     * Who asked for the run, as the kernel and the front tell it.
     *
     * @param uid the peer's uid, from the kernel
     * @param gid the peer's gid, from the kernel
     * @param pid the front's process id: the process that stands for the launcher ({@code mpiproxy kill}
     *            signals it), as the front tells it
     */
    record Peer(long uid, long gid, long pid) {
    }

    /** Where a run's signals come from. */
    @FunctionalInterface
    interface Signals {
        /**
         * Starts delivering signals to {@code handler}; signals that arrived before are delivered
         * at once, in order. Called at most once per run.
         *
         * @param handler gets each signal's number (2 SIGINT, 15 SIGTERM); must return quickly
         */
        void listen(IntConsumer handler);
    }

    /**
     * Runs one job to its end, as {@code mpiproxy run ARGS...} would.
     *
     * @param args    the arguments after {@code mpiproxy}, {@code run} first
     * @param env     the front's environment
     * @param cwd     the front's working directory, absolute
     * @param peer    who asked
     * @param out     the front's standard output
     * @param err     the front's standard error
     * @param signals the signals the front caught
     * @return the exit status of {@code mpiproxy run}, 0-255
     * @throws InterruptedException     when the run's thread was interrupted
     * @throws IllegalArgumentException in one line, before anything ran, when this service does not
     *                                  run this job (another command, or a peer it does not serve)
     */
    int run(List<String> args, Map<String, String> env, Path cwd, Peer peer, OutputStream out, OutputStream err,
            Signals signals) throws InterruptedException;
}
