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
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankOutputListener;

/**
 * Spawns a rank's process, leading its own process group and session ({@link ProcessGroup}):
 * the proxy's environment plus the rank's variables, standard
 * input from {@code /dev/null}, standard output and error read through pipes (FIFOs on a node run
 * under the node keeper, {@link RankFifos}) by {@link RankOutput} and appended line by line to {@code <logDirectory>/rank-<rankId>.out}
 * and {@code .err}, readable by their owner only ({@link RankLogFiles}). Stateless and thread-safe;
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
        return start(program, argv, environment, logDirectory, jobId, rankId, coreId, output, allowlist, -1, null);
    }

    /**
     * As {@link #start(String, List, Map, Path, long, int, int, OutputSettings, List)}, pinned to a
     * CPU and as another user when asked. With {@link NativeSpawn} (glibc's {@code posix_spawnp},
     * the default on Linux) the rank costs one {@code exec}: its session comes from a spawn
     * attribute, its CPU from the spawning thread's affinity; only a rank user adds the
     * {@code setpriv} exec. Without it, {@code ProcessBuilder} runs {@code setsid}, {@code setpriv}
     * and {@code taskset} in front of the program, as before.
     *
     * @param program      the program name, for error messages
     * @param argv         the program's command line (see {@link RankCommand#argv})
     * @param environment  the rank's variables
     * @param logDirectory directory of the output files; created when missing
     * @param jobId        the job, for the listener
     * @param rankId       the rank, naming the output files
     * @param coreId       the core the process runs on, as reported
     * @param output       how output is captured
     * @param allowlist    variables of the proxy's environment passed on; {@code null} passes on all
     * @param cpu          the CPU to pin the rank to, -1 for none
     * @param user         {uid, gid} to run as, {@code null} for the proxy's user
     * @return the running process, leading its own session and process group
     * @throws LaunchException with MPI_ERR_IO when the log directory cannot be created or the
     *                         process cannot be spawned
     */
    public static SpawnedRankProcess start(String program, List<String> argv, Map<String, String> environment,
                                           Path logDirectory, long jobId, int rankId, int coreId,
                                           OutputSettings output, List<String> allowlist, int cpu, long[] user)
            throws LaunchException {
        return start(program, argv, environment, logDirectory, jobId, rankId, coreId, output, allowlist, cpu, user,
                null);
    }

    /**
     * As {@link #start(String, List, Map, Path, long, int, int, OutputSettings, List, int, long[])},
     * for a rank of a job started under a job credential (docs/protocol-v2.md 4.1) when
     * {@code jobUser} is given: the rank runs as that user instead of {@code rankUser}, with the
     * supplementary groups of the node's user database ({@link RankCommand#asUser(RankIdentity, List)}),
     * and its log directory and files ({@link RankLogFiles#directory(Path, RankIdentity)}), FIFOs
     * ({@link RankFifos}) and channel (its file and job directory, {@value RankCommand#ENV_CHANNEL})
     * become that user's, readable by nobody else.
     *
     * @param rankUser {uid, gid} of {@code rank.user}, {@code null} for the proxy's user
     * @param jobUser  the request's user, checked by {@link RankUser#requested}; {@code null} for none
     * @return the running process, leading its own session and process group
     * @throws LaunchException with MPI_ERR_IO when the log directory or channel cannot be made the
     *                         user's, or the process cannot be spawned
     */
    public static SpawnedRankProcess start(String program, List<String> argv, Map<String, String> environment,
                                           Path logDirectory, long jobId, int rankId, int coreId,
                                           OutputSettings output, List<String> allowlist, int cpu, long[] rankUser,
                                           RankIdentity jobUser) throws LaunchException {
        long[] user = jobUser != null ? new long[] {jobUser.uid(), jobUser.gid()} : rankUser;
        try {
            RankLogFiles.directory(logDirectory, jobUser);
        } catch (IOException e) {
            throw new LaunchException("cannot create log directory " + logDirectory
                    + " for program '" + program + "': " + (e.getMessage() != null ? e.getMessage() : e), e);
        }
        String channel = environment.get(RankCommand.ENV_CHANNEL);
        if (jobUser != null && channel != null && !channel.isBlank()) {
            try {
                UserFiles.giveChannel(Path.of(channel), jobUser);
            } catch (IOException | RuntimeException e) {
                throw new LaunchException("cannot give the channel of program '" + program + "' to " + jobUser
                        + ": " + e.getMessage(), e);
            }
        }
        // setsid would spawn fine and only then fail to exec: check the command first
        if (argv.isEmpty() || !isExecutable(argv.get(0))) {
            throw new LaunchException("cannot start program '" + program + "': "
                    + (argv.isEmpty() ? "empty command line" : argv.get(0) + " is not an executable file"));
        }
        RankWorkingDirectory.Choice where = RankWorkingDirectory.choose(environment, rankId, user);
        List<String> inPlace = where.command(argv);
        Process process;
        try {
            NativeSpawn spawn = nativeSpawn();
            if (spawn != null) {
                List<String> lines = environmentLines(allowlist, environment);
                List<String> command = inPlace;
                if (user != null) {
                    // setpriv runs as root until it drops the privileges: the loader's variables wait
                    List<String> moved = new java.util.ArrayList<>();
                    lines = LoaderVariables.moveAside(lines, moved);
                    command = asUser(user, jobUser, LoaderVariables.restoring(moved, inPlace));
                }
                if (fifos()) {
                    // under the node keeper the rank outlives the JVM: its output must too
                    Path fifos = RankFifos.directory(logDirectory, channel);
                    process = spawn.spawn(command, lines, cpu, where.directory(),
                            RankFifos.path(fifos, rankId, RankOutputListener.Stream.STDOUT),
                            RankFifos.path(fifos, rankId, RankOutputListener.Stream.STDERR), jobUser);
                } else {
                    process = spawn.spawn(command, lines, cpu, where.directory(), null, null);
                }
            } else {
                process = startBuilder(inPlace, cpu, user, jobUser, allowlist, environment, where.directory());
            }
        } catch (IOException | RuntimeException e) {
            throw new LaunchException("cannot start program '" + program + "': "
                    + e.getMessage(), e);
        }
        CompletableFuture<Long> out = RankOutput.start(process.getInputStream(), outputFile(logDirectory, rankId),
                output.capBytes(), output.raw(), jobId, rankId, RankOutputListener.Stream.STDOUT,
                output.listener());
        CompletableFuture<Long> err = RankOutput.start(process.getErrorStream(), errorFile(logDirectory, rankId),
                output.capBytes(), output.raw(), jobId, rankId, RankOutputListener.Stream.STDERR,
                output.listener());
        return new SpawnedRankProcess(process, coreId, true, CompletableFuture.allOf(out, err));
    }

    /**
     * @return how ranks are spawned here, for the log: {@code posix_spawnp}, or {@code ProcessBuilder}
     *         with the reason the native path is not used
     */
    public static String spawnMethod() {
        if (nativeSpawn() != null) {
            return "posix_spawnp (one exec per rank)";
        }
        String why;
        try {
            why = NativeSpawn.instance().unavailableReason();
        } catch (LinkageError e) {
            why = "JNA cannot be loaded: " + e;
        }
        return "ProcessBuilder with setsid and taskset (" + why + ")";
    }

    /**
     * @return whether ranks' output goes through FIFOs ({@link RankFifos}): on a node run under the
     *         node keeper ({@link KeeperFiles#own()}), unless {@value #FIFO_PROPERTY} says otherwise
     */
    static boolean fifos() {
        String forced = System.getProperty(FIFO_PROPERTY, "").trim();
        return RankFifos.available() && !"false".equalsIgnoreCase(forced)
                && (KeeperFiles.own() != null || "true".equalsIgnoreCase(forced));
    }

    /**
     * System property: {@code false} turns the FIFOs off (output through pipes, which end with the
     * JVM), {@code true} uses them without a keeper.
     */
    public static final String FIFO_PROPERTY = "mpiproxy.output.fifo";

    /** @return the native spawner, or {@code null} when it cannot be used (JNA missing included) */
    static NativeSpawn nativeSpawn() {
        try {
            return NativeSpawn.ifAvailable();
        } catch (LinkageError e) {
            return null;
        }
    }

    /** @return the command run as {@code jobUser} when given, else as {@code user} */
    private static List<String> asUser(long[] user, RankIdentity jobUser, List<String> argv) {
        return jobUser != null ? RankCommand.asUser(jobUser, argv) : RankCommand.asUser(user, argv);
    }

    private static Process startBuilder(List<String> argv, int cpu, long[] user, RankIdentity jobUser,
                                        List<String> allowlist, Map<String, String> environment, Path directory)
            throws IOException {
        ProcessBuilder builder = new ProcessBuilder();
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        builder.redirectInput(Redirect.from(NULL_INPUT));
        builder.redirectOutput(Redirect.PIPE);
        builder.redirectError(Redirect.PIPE);
        // Rejects NUL characters and '=' in names with IllegalArgumentException.
        if (allowlist != null) {
            Map<String, String> clean = RankEnvironment.build(builder.environment(), allowlist, environment);
            builder.environment().clear();
            builder.environment().putAll(clean);
        } else {
            builder.environment().putAll(environment);
        }
        List<String> command = argv;
        if (user != null) {
            List<String> moved = new java.util.ArrayList<>();
            LoaderVariables.moveAside(builder.environment(), moved);
            command = asUser(user, jobUser, LoaderVariables.restoring(moved, argv));
        }
        builder.command(ProcessGroup.argv(cpu < 0 ? command : RankCommand.pinned(cpu, command)));
        return builder.start();
    }

    /**
     * @return the rank's whole environment as {@code NAME=value} lines: the proxy's (all of it, or
     *         the allowlisted part) with the rank's variables over it
     * @throws IllegalArgumentException for a name with {@code '='} or a NUL anywhere, as
     *                                  {@code ProcessBuilder} refuses them
     */
    static List<String> environmentLines(List<String> allowlist, Map<String, String> environment) {
        Map<String, String> all;
        if (allowlist != null) {
            all = RankEnvironment.build(System.getenv(), allowlist, environment);
        } else {
            all = new java.util.LinkedHashMap<>(System.getenv());
            all.putAll(environment);
        }
        List<String> lines = new java.util.ArrayList<>(all.size());
        for (Map.Entry<String, String> e : all.entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0 || value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("invalid environment variable: '" + name.replace("\0", "\\0")
                        + "'");
            }
            lines.add(name + "=" + value);
        }
        return lines;
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
