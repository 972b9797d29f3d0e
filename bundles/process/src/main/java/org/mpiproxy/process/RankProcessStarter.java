package org.mpiproxy.process;

import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import java.util.concurrent.CompletableFuture;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.RankOutputListener;

/**
 * Spawns a rank's process, leading its own process group and session ({@link ProcessGroup}):
 * the proxy's environment plus the rank's variables, standard
 * input from {@code /dev/null}, standard output and error read through pipes by
 * {@link RankOutput} and appended line by line to {@code <logDirectory>/rank-<rankId>.out}
 * and {@code .err}. Stateless and thread-safe;
 * {@link #start} blocks for the time the operating system takes to spawn.
 */
public final class RankProcessStarter {

    private static final File NULL_INPUT = new File("/dev/null");

    private RankProcessStarter() {
    }

    /**
     * @param logDirectory the job's log directory
     * @param rankId       the rank
     * @return {@code <logDirectory>/rank-<rankId>.out}
     */
    public static Path outputFile(Path logDirectory, int rankId) {
        return logDirectory.resolve("rank-" + rankId + ".out");
    }

    /**
     * @param logDirectory the job's log directory
     * @param rankId       the rank
     * @return {@code <logDirectory>/rank-<rankId>.err}
     */
    public static Path errorFile(Path logDirectory, int rankId) {
        return logDirectory.resolve("rank-" + rankId + ".err");
    }

    /**
     * Starts a process.
     *
     * @param program      the program name, for error messages
     * @param argv         the complete command line (see {@link RankCommand#argv})
     * @param environment  variables added to the proxy's environment
     *                     (see {@link RankCommand#environment})
     * @param logDirectory directory of the output files; created when missing
     * @param rankId       the rank, naming the output files
     * @param coreId       the core the process runs on, reported by {@link SpawnedRankProcess#coreId()}
     * @return the running process
     * @throws LaunchException with MPI_ERR_IO when the log directory cannot be created or the
     *                         process cannot be spawned
     */
    public static SpawnedRankProcess start(String program, List<String> argv, Map<String, String> environment,
                                           Path logDirectory, int rankId, int coreId) throws LaunchException {
        return start(program, argv, environment, logDirectory, 0, rankId, coreId, OutputSettings.DEFAULT);
    }

    /**
     * Starts a process whose standard output and error are pipes read by {@link RankOutput}:
     * whole lines go to the log files (up to the cap) and to the listener.
     *
     * @param program      the program name, for error messages
     * @param argv         the complete command line (see {@link RankCommand#argv})
     * @param environment  variables added to the proxy's environment
     * @param logDirectory directory of the output files; created when missing
     * @param jobId        the job, for the listener
     * @param rankId       the rank, naming the output files
     * @param coreId       the core the process runs on
     * @param output       how output is captured
     * @return the running process; its exit completes once its output is drained
     * @throws LaunchException with MPI_ERR_IO when the log directory cannot be created or the
     *                         process cannot be spawned
     */
    public static SpawnedRankProcess start(String program, List<String> argv, Map<String, String> environment,
                                           Path logDirectory, long jobId, int rankId, int coreId,
                                           OutputSettings output) throws LaunchException {
        return start(program, argv, environment, logDirectory, jobId, rankId, coreId, output, null);
    }

    /**
     * As {@link #start(String, List, Map, Path, long, int, int, OutputSettings)}, in a clean
     * environment.
     *
     * @param program      the program name, for error messages
     * @param argv         the complete command line (see {@link RankCommand#argv})
     * @param environment  the rank's variables
     * @param logDirectory directory of the output files; created when missing
     * @param jobId        the job, for the listener
     * @param rankId       the rank, naming the output files
     * @param coreId       the core the process runs on
     * @param output       how output is captured
     * @param allowlist    variables of the proxy's environment passed on (see
     *                     {@link RankEnvironment}); {@code null} passes on all of them
     * @return the running process; its exit completes once its output is drained
     * @throws LaunchException with MPI_ERR_IO when the log directory cannot be created or the
     *                         process cannot be spawned
     */
    public static SpawnedRankProcess start(String program, List<String> argv, Map<String, String> environment,
                                           Path logDirectory, long jobId, int rankId, int coreId,
                                           OutputSettings output, List<String> allowlist) throws LaunchException {
        try {
            Files.createDirectories(logDirectory);
        } catch (IOException e) {
            throw new LaunchException("cannot create log directory " + logDirectory
                    + " for program '" + program + "': " + e, e);
        }
        // setsid would spawn fine and only then fail to exec: check the command first
        if (argv.isEmpty() || !isExecutable(argv.get(0))) {
            throw new LaunchException("cannot start program '" + program + "': "
                    + (argv.isEmpty() ? "empty command line" : argv.get(0) + " is not an executable file"));
        }
        ProcessBuilder builder = new ProcessBuilder(ProcessGroup.argv(argv));
        builder.redirectInput(Redirect.from(NULL_INPUT));
        builder.redirectOutput(Redirect.PIPE);
        builder.redirectError(Redirect.PIPE);
        try {
            // Rejects NUL characters and '=' in names with IllegalArgumentException.
            if (allowlist != null) {
                Map<String, String> clean = RankEnvironment.build(builder.environment(), allowlist, environment);
                builder.environment().clear();
                builder.environment().putAll(clean);
            } else {
                builder.environment().putAll(environment);
            }
            Process process = builder.start();
            CompletableFuture<Long> out = RankOutput.start(process.getInputStream(), outputFile(logDirectory, rankId),
                    output.capBytes(), output.raw(), jobId, rankId, RankOutputListener.Stream.STDOUT,
                    output.listener());
            CompletableFuture<Long> err = RankOutput.start(process.getErrorStream(), errorFile(logDirectory, rankId),
                    output.capBytes(), output.raw(), jobId, rankId, RankOutputListener.Stream.STDERR,
                    output.listener());
            return new SpawnedRankProcess(process, coreId, true, CompletableFuture.allOf(out, err));
        } catch (IOException | RuntimeException e) {
            throw new LaunchException("cannot start program '" + program + "': "
                    + e.getMessage(), e);
        }
    }

    /** @return whether {@code command} names an executable file, directly or through {@code PATH} */
    static boolean isExecutable(String command) {
        if (command.indexOf('/') >= 0) {
            Path file = Path.of(command);
            return Files.isRegularFile(file) && Files.isExecutable(file);
        }
        String path = System.getenv("PATH");
        for (String directory : (path == null ? "/usr/bin:/bin" : path).split(":")) {
            if (!directory.isEmpty()) {
                Path file = Path.of(directory, command);
                if (Files.isRegularFile(file) && Files.isExecutable(file)) {
                    return true;
                }
            }
        }
        return false;
    }
}
