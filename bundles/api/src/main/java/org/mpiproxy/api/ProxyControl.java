package org.mpiproxy.api;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Operator actions on the proxy's jobs (shell commands, JMX): signal ranks, find their output,
 * start a job from this node, ask whether the node is healthy.
 * <p>
 * Thread-safe; every method may block for a short time (process spawns, file system checks).
 */
@ProviderType
public interface ProxyControl {

    /**
     * Sends a signal to the running ranks of a job.
     *
     * @param jobId  the job
     * @param rankId the rank, or 0 for every running rank of the job
     * @param signal the signal's name without {@code SIG}: TERM, KILL, INT, HUP, QUIT, USR1, USR2
     * @return the ids of the ranks that were signalled, ascending (empty when none ran)
     * @throws IllegalArgumentException when the job or rank is unknown or the signal is not supported
     */
    List<Integer> signal(long jobId, int rankId, String signal);

    /**
     * @param jobId  the job
     * @param rankId the rank
     * @param stderr {@code true} for the standard error file, else standard output
     * @return the file the rank's output goes to (it may not exist yet)
     * @throws IllegalArgumentException when the job or rank is unknown
     */
    Path outputFile(long jobId, int rankId, boolean stderr);

    /**
     * Starts a job whose host is this node: ranks 1..{@code cores.size()} of
     * {@code program args}, rank r on {@code cores.get(r - 1)}. Returns once every rank's start
     * was answered; when every rank has ended, the job is terminated and its files removed.
     *
     * @param program the program's name in the program directory
     * @param args    its arguments
     * @param cores   one core id per rank, at least one
     * @return the new job, as it stands after the launches
     * @throws IllegalArgumentException when the program name, arguments or cores are invalid,
     *                                  or the proxy refused a rank (the message says why)
     * @throws IOException              when the proxy cannot be reached
     */
    JobInfo exec(String program, List<String> args, List<Integer> cores) throws IOException;

    /** @return the names of the programs ranks may run, sorted */
    List<String> programs();

    /** @return the node's health, one result per check, each check once */
    List<HealthResult> health();
}
