package org.mpiproxy.api;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a launcher needs to start one rank.
 *
 * @param jobId       the job
 * @param rankId      the rank, &gt;= 1
 * @param worldSize   ranks in the job including rank 0 (the host)
 * @param coreId      0 for the proxy's own core, &gt;= 1 for another core
 * @param program     program name (a name, not a path: see {@link ProgramNames})
 * @param args        the program's own arguments
 * @param channelPath the rank's channel file, passed to the program
 * @param environment extra environment variables for the program
 * @param logDirectory directory for the rank's output files {@code rank-<rankId>.out} and
 *                     {@code rank-<rankId>.err}; created when missing
 * @param plain       {@code true}: run {@code PROGRAM ARGS...} as given, the rank's world in its
 *                    environment only (any program); {@code false}: the FreeNOS form
 *                    {@code PROGRAM --slave <channel> <rank> <size> ARGS...}
 * @param user        the user the rank runs as, from the job's credential (its ranks, channel,
 *                    FIFOs and logs are that user's), or {@code null}: the launcher's
 *                    {@code rank.user}, else the proxy's own user
 */
public record LaunchRequest(long jobId, int rankId, int worldSize, int coreId, String program,
                            List<String> args, Path channelPath, Map<String, String> environment,
                            Path logDirectory, boolean plain, RankIdentity user) {

    public LaunchRequest {
        Objects.requireNonNull(program, "program");
        Objects.requireNonNull(channelPath, "channelPath");
        Objects.requireNonNull(logDirectory, "logDirectory");
        args = List.copyOf(args);
        environment = Map.copyOf(environment);
    }

    /** A request of a job started under a cluster key ({@code user} null). */
    public LaunchRequest(long jobId, int rankId, int worldSize, int coreId, String program, List<String> args,
                         Path channelPath, Map<String, String> environment, Path logDirectory, boolean plain) {
        this(jobId, rankId, worldSize, coreId, program, args, channelPath, environment, logDirectory, plain, null);
    }

    /** A FreeNOS-form request ({@code plain} false). */
    public LaunchRequest(long jobId, int rankId, int worldSize, int coreId, String program, List<String> args,
                         Path channelPath, Map<String, String> environment, Path logDirectory) {
        this(jobId, rankId, worldSize, coreId, program, args, channelPath, environment, logDirectory, false);
    }
}
