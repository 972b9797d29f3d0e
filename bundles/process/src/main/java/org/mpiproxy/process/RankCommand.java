package org.mpiproxy.process;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.mpiproxy.api.LaunchRequest;

/**
 * The command line and environment of a rank, as pure functions of a {@link LaunchRequest}.
 * <p>
 * Command line: {@code <program> --slave <channel-file> <rankId> <worldSize> ARGS...} (the FreeNOS
 * form), or {@code <program> ARGS...} for a {@link LaunchRequest#plain() plain} request. The world
 * is always in the environment too, under our names and those MPICH and Open MPI programs read.
 * Stateless and thread-safe.
 */
public final class RankCommand {

    /** The option that tells a program it runs as a rank, followed by channel, rank, world size. */
    public static final String SLAVE_OPTION = "--slave";

    /** Environment variable: the rank's channel file. */
    public static final String ENV_CHANNEL = "MPIPROXY_CHANNEL";

    /** Environment variable: the rank id (decimal). */
    public static final String ENV_RANK = "MPIPROXY_RANK";

    /** Environment variable: the number of ranks in the job, host included (decimal). */
    public static final String ENV_WORLD_SIZE = "MPIPROXY_WORLD_SIZE";

    /** Environment variable: the number of ranks in the job (decimal), as {@link #ENV_WORLD_SIZE}. */
    public static final String ENV_SIZE = "MPIPROXY_SIZE";

    /** The rank and size under the names MPICH's PMI and Open MPI programs read. */
    public static final List<String> RANK_ALIASES = List.of("PMI_RANK", "OMPI_COMM_WORLD_RANK");
    /** See {@link #RANK_ALIASES}. */
    public static final List<String> SIZE_ALIASES = List.of("PMI_SIZE", "OMPI_COMM_WORLD_SIZE");

    /** Environment variable: the job id as 16 lower-case hex digits. */
    public static final String ENV_JOB_ID = "MPIPROXY_JOB_ID";

    /** Environment variable: the core the rank runs on (decimal, 0 = the proxy's core). */
    public static final String ENV_CORE = "MPIPROXY_CORE";

    /** Environment variable: the program name as requested (not its path). */
    public static final String ENV_PROGRAM = "MPIPROXY_PROGRAM";

    /** Environment variable: the proxy's process id (decimal), for the rank's lifeline. */
    public static final String ENV_PROXY_PID = "MPIPROXY_PROXY_PID";

    /**
     * Environment variable: the proxy's start time, field 22 of {@code /proc/<pid>/stat}
     * (decimal clock ticks after boot): with {@link #ENV_PROXY_PID} it names the proxy even
     * when its pid is reused. A rank whose proxy no longer runs should end.
     */
    public static final String ENV_PROXY_START = "MPIPROXY_PROXY_START";

    /** Environment variable: the Java installation programs should run with. */
    public static final String ENV_JAVA_HOME = "JAVA_HOME";

    private static final long SELF_PID = ProcessHandle.current().pid();
    private static final long SELF_START = selfStart();

    private RankCommand() {
    }

    private static long selfStart() {
        try {
            return ProcStat.read(SELF_PID).map(ProcStat::startTime).orElse(-1L);
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    /**
     * Builds the rank's command line.
     *
     * @param executable the file to run (argv[0]), usually a real path
     * @param request    the rank to start
     * @return an unmodifiable list {@code executable --slave channel rank world args...}, or
     *         {@code executable args...} for a plain request
     */
    public static List<String> argv(String executable, LaunchRequest request) {
        Objects.requireNonNull(executable, "executable");
        List<String> argv = new ArrayList<>(5 + request.args().size());
        argv.add(executable);
        if (request.plain()) {
            argv.addAll(request.args());
            return Collections.unmodifiableList(argv);
        }
        argv.add(SLAVE_OPTION);
        argv.add(request.channelPath().toString());
        argv.add(Integer.toString(request.rankId()));
        argv.add(Integer.toString(request.worldSize()));
        argv.addAll(request.args());
        return Collections.unmodifiableList(argv);
    }

    /**
     * Builds the variables added to the proxy's environment for a rank.
     * <p>
     * The request's own variables come first; {@code JAVA_HOME} is set to {@code javaHome}
     * unless the request names one, and the {@code MPIPROXY_*} variables (and the rank and size
     * under their MPICH and Open MPI names) always win, so a host cannot point a rank at another
     * rank's channel.
     *
     * @param request  the rank to start
     * @param javaHome the proxy's {@code java.home}; {@code null} or empty leaves
     *                 {@code JAVA_HOME} alone
     * @return an unmodifiable, ordered map of variables to add
     */
    public static Map<String, String> environment(LaunchRequest request, String javaHome) {
        Map<String, String> env = new LinkedHashMap<>(request.environment());
        if (javaHome != null && !javaHome.isEmpty()) {
            env.putIfAbsent(ENV_JAVA_HOME, javaHome);
        }
        env.put(ENV_CHANNEL, request.channelPath().toString());
        env.put(ENV_RANK, Integer.toString(request.rankId()));
        env.put(ENV_WORLD_SIZE, Integer.toString(request.worldSize()));
        env.put(ENV_SIZE, Integer.toString(request.worldSize()));
        for (String alias : RANK_ALIASES) {
            env.put(alias, Integer.toString(request.rankId()));
        }
        for (String alias : SIZE_ALIASES) {
            env.put(alias, Integer.toString(request.worldSize()));
        }
        env.put(ENV_JOB_ID, jobIdHex(request.jobId()));
        env.put(ENV_CORE, Integer.toString(request.coreId()));
        env.put(ENV_PROGRAM, request.program());
        env.put(ENV_PROXY_PID, Long.toString(SELF_PID));
        if (SELF_START >= 0) {
            env.put(ENV_PROXY_START, Long.toString(SELF_START));
        }
        java.nio.file.Path keeper = KeeperFiles.own();
        if (keeper != null) {
            // the lifeline waits the keeper's window for a proxy that takes the job over
            env.put(KeeperFiles.DIR_ENV, keeper.toString());
        } else {
            env.remove(KeeperFiles.DIR_ENV);
        }
        return Collections.unmodifiableMap(env);
    }

    /**
     * @param user {uid, gid} the rank runs as
     * @param argv the rank's command line
     * @return {@code setpriv --reuid=<uid> --regid=<gid> --clear-groups argv...}: util-linux
     *         {@code setpriv} drops to that user and execs the command in place (same pid)
     */
    public static List<String> asUser(long[] user, List<String> argv) {
        List<String> command = new ArrayList<>(argv.size() + 4);
        command.add("setpriv");
        command.add("--reuid=" + user[0]);
        command.add("--regid=" + user[1]);
        command.add("--clear-groups");
        command.addAll(argv);
        return Collections.unmodifiableList(command);
    }

    /**
     * @param user the user of a job started under a job credential (docs/protocol-v2.md 4.1)
     * @param argv the rank's command line
     * @return {@code setpriv --reuid=<uid> --regid=<gid> --init-groups argv...} when the node's user
     *         database has the uid ({@link RankUser#known}: its supplementary groups), else with
     *         {@code --clear-groups} (none), which {@code setpriv --init-groups} would refuse
     */
    public static List<String> asUser(org.mpiproxy.api.RankIdentity user, List<String> argv) {
        return asUser(user, RankUser.known(user.uid()), argv);
    }

    /**
     * As {@link #asUser(org.mpiproxy.api.RankIdentity, List)}.
     *
     * @param known whether the node's user database has the uid
     */
    static List<String> asUser(org.mpiproxy.api.RankIdentity user, boolean known, List<String> argv) {
        List<String> command = new ArrayList<>(argv.size() + 4);
        command.add("setpriv");
        command.add("--reuid=" + user.uid());
        command.add("--regid=" + user.gid());
        command.add(known ? "--init-groups" : "--clear-groups");
        command.addAll(argv);
        return Collections.unmodifiableList(command);
    }

    /**
     * @param cpu  the CPU to run on
     * @param argv a command line
     * @return {@code taskset -c <cpu> argv...} (unmodifiable): util-linux {@code taskset} pins
     *         itself and execs the command in place (same pid); only for spawning without
     *         {@link NativeSpawn}, which pins without an exec
     */
    public static List<String> pinned(int cpu, List<String> argv) {
        List<String> pinned = new ArrayList<>(argv.size() + 3);
        pinned.add("taskset");
        pinned.add("-c");
        pinned.add(Integer.toString(cpu));
        pinned.addAll(argv);
        return Collections.unmodifiableList(pinned);
    }

    /**
     * @param value {@code <uid>:<gid>} (numeric), or empty
     * @return {uid, gid}, or {@code null} for empty
     * @throws IllegalArgumentException when malformed, naming {@code rank.user}
     */
    public static long[] parseUser(String value) {
        return org.mpiproxy.api.config.UidGid.parse("rank.user", value);
    }

    /**
     * @param jobId a job id
     * @return the id as exactly 16 lower-case hex digits (two's complement for negatives)
     */
    public static String jobIdHex(long jobId) {
        String hex = Long.toHexString(jobId);
        return "0".repeat(16 - hex.length()) + hex;
    }
}
