package org.mpiproxy.cli;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code mpiproxy run}: starts PROGRAM here as rank 0 with its world in the environment. */
@Command(name = "run", sortOptions = false, mixinStandardHelpOptions = true, showEndOfOptionsDelimiterInUsageHelp = true,
        description = {"Runs PROGRAM ARGS... on every slot as an MPI job: rank 0 here, ranks 1..N-1 started by the"
                + " nodes' proxies (over v2 any program: the launcher starts them; over v1 rank 0 must, with the"
                + " org.mpiproxy.mpi library). The job ends when every rank has; a failing rank stops it.",
            "Exit status: 0 when every rank exited 0; else the status of the rank that failed first (rank 0's when"
                    + " it failed; 1 when only unknown); 127 when a rank cannot be started; over v1, 1 when PROGRAM"
                    + " did not start ranks 1..N-1 (a plain program runs as rank 0 only); 124 on --timeout, 130"
                    + " on SIGINT, 143 on SIGTERM, 2 for bad usage."})
final class RunCommand implements Callable<Integer> {

    /** Environment variable: directory searched for PROGRAM names without a slash, before PATH. */
    static final String PROGRAMS_ENV = "MPIPROXY_PROGRAMS";

    @Option(names = {"-n", "-np", "--np"}, paramLabel = "N",
            description = "World size, rank 0 included, at least 1 (default: the hostfile's lines + 1 for FreeNOS"
                    + " hostfiles, else the number of slots). More ranks than slots need --oversubscribe.")
    Integer worldSize;

    @Option(names = "--oversubscribe",
            description = "Allows -n larger than the slots: the ranks wrap around the slots, several on one slot's"
                    + " core (default: refused, as Open MPI does).")
    boolean oversubscribe;

    @Mixin
    PlacementOptions placement;

    @Option(names = {"--ppn", "-ppn"}, paramLabel = "N",
            description = "Ranks per node, at least 1, replacing the nodes' slot counts.")
    Integer ranksPerNode;

    @Option(names = "--bind", paramLabel = "POLICY",
            description = "Core binding for node slots: none (every rank on core 0, the proxy's own) or core (a rank"
                    + " runs on the core of its slot's index on the node; needs the program's .lz4 image)."
                    + " FreeNOS hostfiles name their cores. Default: none.")
    String bind;

    @Option(names = "-bind-to", paramLabel = "core|none",
            description = "Hydra's spelling of --bind: core or none (Hydra's other levels are not supported).")
    String bindTo;

    @Option(names = {"-x", "--env"}, paramLabel = "VAR[=VALUE]",
            description = "Environment variable for every rank (repeatable); VAR alone passes this shell's value."
                    + " Over v1 it reaches rank 0 only: the proxies start ranks 1..N-1 with their own environment.")
    List<String> environment = new ArrayList<>();

    @Option(names = {"-genv", "-env"}, arity = "2", paramLabel = "NAME VALUE", hideParamSyntax = true,
            description = "Hydra's -genv NAME VALUE: the variable for every rank (repeatable), as -x NAME=VALUE."
                    + " -env, Hydra's per-executable form, is the same: a job runs one program.")
    List<String> genv = new ArrayList<>();

    @Option(names = "-genvlist", paramLabel = "NAME,...", split = ",", hideParamSyntax = true,
            description = "Hydra's -genvlist: these variables of this shell for every rank, as -x NAME each.")
    List<String> genvList = new ArrayList<>();

    @Option(names = "-genvall",
            description = "Hydra's -genvall: every variable of this shell but MPIPROXY_* for every rank, as --export"
                    + " ALL.")
    boolean genvAll;

    @Option(names = "-genvnone",
            description = "Hydra's -genvnone: no variable of this shell but those -x, -genv and -genvlist name (the"
                    + " default).")
    boolean genvNone;

    @Option(names = "--export", paramLabel = "LIST",
            description = "Variables for every rank, as Slurm's --export: NONE (default: only -x), ALL (every"
                    + " variable of this shell but MPIPROXY_*; sent once per node when one EXEC cannot hold them), or"
                    + " VAR[=VALUE],... (ALL,VAR=VALUE,... adds to ALL).")
    String export;

    @Option(names = {"-wdir", "--wdir", "--chdir"}, paramLabel = "DIR",
            description = "The ranks' working directory (default: this one; a relative DIR is taken from here)."
                    + " Every rank starts in it where it is a directory, else in its user's home directory with"
                    + " one line on its standard error (ranks 1..N-1 get it as " + RankWorld.WORKING_DIRECTORY
                    + " in their EXEC).")
    Path workingDirectory;

    @Option(names = "--stage",
            description = "Copies PROGRAM (a file here) to every node first and runs that copy there: protocol v2"
                    + " STAGE, verified and cached on each node by its SHA-256, so a second run sends nothing."
                    + " Without it a node runs the file of PROGRAM's name from its own programs/ directory or"
                    + " program.path.")
    boolean stage;

    @Option(names = "--timeout", paramLabel = "SECONDS",
            description = "Stops the job after this many seconds (exit status 124). Default: no limit.")
    long timeoutSeconds;

    @Option(names = "--grace", paramLabel = "SECONDS", defaultValue = "5",
            description = "When stopping: seconds rank 0 gets between SIGTERM and SIGKILL (default: ${DEFAULT-VALUE}).")
    long graceSeconds;

    @Option(names = "--terminate-wait", paramLabel = "SECONDS", defaultValue = "60",
            description = "Seconds to wait for the proxies' TERMINATE replies when stopping ranks rank 0 left behind."
                    + " Over v2 a stopped job's ranks (--timeout, SIGINT, SIGTERM, rank 0 ended without finalizing)"
                    + " get SIGTERM at once and SIGKILL after the proxy's stop.grace.seconds; over v1, which has no"
                    + " such request, a proxy first waits its terminate.timeout.seconds. Default: ${DEFAULT-VALUE}.")
    long terminateWaitSeconds;

    @Option(names = "--tag-output", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Prefix every output line with [rank] (default: on).")
    boolean tagOutput;

    @Option(names = "--raw", description = "Pass output through untagged (same as --no-tag-output).")
    boolean raw;

    @Option(names = {"-l", "-prepend-rank"},
            description = "Hydra's -l and -prepend-rank: prefix every output line with [rank], as by default.")
    boolean prependRank;

    @Option(names = "--protocol", paramLabel = "v1|v2", defaultValue = "v2",
            description = "Wire protocol to the proxies (default: ${DEFAULT-VALUE}). v2 is authenticated and"
                    + " reliable and streams every rank's output here; v1 keeps ranks' output in the nodes' log files.")
    String protocol;

    @Option(names = "--key-file", paramLabel = "FILE",
            description = "The cluster's v2 key (the same file as every node's etc/mpiproxy.key). Default: $"
                    + V2Control.KEY_FILE_ENV + ", else ../etc/mpiproxy.key, else ~/.mpiproxy/key. Without a"
                    + " readable one the job runs as this user with a credential from the local proxy's socket ($"
                    + LauncherIdentity.SOCKET_ENV + ", else " + LauncherIdentity.DEFAULT_SOCKET + ").")
    Path keyFile;

    @Option(names = "--user", paramLabel = "UID:GID",
            description = "Runs ranks 1..N-1 as this user and group: the launcher makes the job's credential with the"
                    + " cluster key (valid 1 hour) and signs the job with its job key, as for a user without the key."
                    + " Needs the cluster key.")
    String user;

    @Option(names = "--job-file", paramLabel = "FILE",
            description = "Writes what 'mpiproxy status' and 'mpiproxy kill' need to find this job; when the job"
                    + " ends the file stays, rewritten (atomically) with the end: when, the exit status, each rank's"
                    + " exit status and the stop reason (timeout, SIGINT, SIGTERM; kill when 'mpiproxy kill' stopped it).")
    Path jobFile;

    @Option(names = {"-q", "--quiet"}, description = "Only errors and the failure summary.")
    boolean quiet;

    @Option(names = {"-v", "--verbose"}, description = "Shows where every rank runs and what the launcher does.")
    boolean verbose;

    @Parameters(index = "0", paramLabel = "PROGRAM", description = "The program: a path, a name in $" + PROGRAMS_ENV
            + ", or a name on PATH. The proxies start the file of the same name in their programs/ directory"
            + " (--stage: this file).")
    String program;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "The program's arguments.")
    List<String> args = new ArrayList<>();

    private final Launch launch;

    /**
     * Everything a run takes from its caller: environment, streams, clock, working directory,
     * home, signals and the process that stands for the launcher. The standalone launcher passes
     * this JVM's own; a run inside the proxy (docs/protocol-v2.md 4.4) its front's, so that two
     * runs in one JVM never see each other's.
     *
     * @param clock       nanoseconds as {@link System#nanoTime}: the job's {@code --timeout} runs on it
     * @param cwd         the working directory, absolute: relative paths of the command line are taken from it
     * @param home        the user's home directory
     * @param signals     the SIGINT (2) and SIGTERM (15) the run gets
     * @param launcherPid the process {@code mpiproxy kill} signals to stop the run (the job file's launcher)
     * @param ownProcess  the run is this JVM's own: rank 0 starts from this JVM's environment and writes
     *                    to its standard streams itself with {@code --raw}; else rank 0 starts from
     *                    {@code env} and its output goes through {@code out} and {@code err}
     */
    record Launch(Map<String, String> env, PrintStream out, PrintStream err, java.util.function.LongSupplier clock,
                  Path cwd, Path home, org.mpiproxy.api.LocalRuns.Signals signals, long launcherPid,
                  boolean ownProcess) {
        Launch(Map<String, String> env, PrintStream out, PrintStream err) {
            this(env, out, err, System::nanoTime);
        }

        /** This JVM's own run: its working directory, home, signals and pid. */
        Launch(Map<String, String> env, PrintStream out, PrintStream err, java.util.function.LongSupplier clock) {
            this(env, out, err, clock, Path.of("").toAbsolutePath(), Path.of(System.getProperty("user.home")),
                    SignalTrap::listen, ProcessHandle.current().pid(), true);
        }

        /** @return {@code path} taken from the run's working directory; {@code null} stays {@code null} */
        Path resolve(Path path) {
            return path == null ? null : cwd.resolve(path);
        }
    }

    RunCommand(Launch launch) {
        this.launch = launch;
    }

    /** A usage problem: one line on standard error, exit status 2. */
    static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message, null, false, false);
        }
    }

    @Override
    public Integer call() throws Exception {
        JobRunner.Settings settings;
        try {
            settings = settings();
        } catch (Usage e) {
            launch.err().println("mpiproxy: " + e.getMessage());
            return 2;
        }
        if (verbose && placement.local(launch.env()::get)) {
            launch.err().println("mpiproxy: no --hosts, --hostfile or Slurm allocation: the job runs on this node,"
                    + " its proxy at " + PlacementOptions.LOCAL_NODE + ":" + placement.port + " with "
                    + PlacementOptions.localNode().slots() + " slots (its cores)");
        }
        return new JobRunner(settings, launch).run();
    }

    /**
     * @return what the command line asks for, checked, with its ranks placed
     * @throws Usage for bad usage
     */
    JobRunner.Settings settings() throws Usage {
        if (!protocol.equals("v1") && !protocol.equals("v2")) {
            throw new Usage("--protocol " + protocol + ": expected v1 or v2");
        }
        if (keyFile != null && protocol.equals("v1")) {
            throw new Usage("--key-file applies to --protocol v2 only; v1 has no authentication");
        }
        if (user != null && protocol.equals("v1")) {
            throw new Usage("--user applies to --protocol v2 only; v1 has no credentials");
        }
        boolean bindCores = bindCores();
        if (worldSize != null && worldSize < 1 || ranksPerNode != null && ranksPerNode < 1) {
            throw new Usage(worldSize != null && worldSize < 1 ? "-n " + worldSize + ": a world has at"
                    + " least 1 rank (rank 0); leave -n out for one rank per slot" : "--ppn " + ranksPerNode
                    + ": a node runs at least 1 rank; leave --ppn out for the nodes' slot counts");
        }
        if (timeoutSeconds < 0 || graceSeconds < 0 || terminateWaitSeconds < 0) {
            throw new Usage("--timeout, --grace and --terminate-wait take numbers >= 0");
        }
        if (prependRank && (raw || !tagOutput)) {
            throw new Usage("-l tags every line with its rank, " + (raw ? "--raw" : "--no-tag-output")
                    + " leaves the tags out: give one of them");
        }
        Map<String, String> extra = environment();
        placement.resolveFiles(launch::resolve);
        List<Placement> ranks;
        try {
            ranks = placement.plan(launch.env()::get, worldSize == null ? 0 : worldSize,
                    ranksPerNode == null ? 0 : ranksPerNode, bindCores, oversubscribe);
        } catch (IllegalArgumentException e) {
            throw new Usage(e.getMessage());
        } catch (java.io.IOException e) {
            throw new Usage("cannot read " + e.getMessage());
        }
        LauncherIdentity identity = null;
        String keySpec = null;
        if (protocol.equals("v2")) {
            try {
                // without a key or a local proxy, MUNGE vouches for the user to the job's first node (4.3)
                List<Path> defaults = LauncherIdentity.defaultKeyFiles(launch.cwd(), launch.home());
                identity = LauncherIdentity.forNewJob(launch.resolve(keyFile), launch.env(), user, defaults,
                        ranks.isEmpty() ? null : ranks.get(0));
                keySpec = LauncherIdentity.keySpec(launch.resolve(keyFile), launch.env(), defaults);
            } catch (IllegalArgumentException e) {
                throw new Usage(e.getMessage());
            }
        }
        String executable = resolveProgram(program, launch.env());
        if (stage && executable.contains("/")) {
            // the file copied to the nodes is this one, whatever directory rank 0 starts in
            executable = launch.resolve(Path.of(executable)).toString();
        }
        if (stage && (!protocol.equals("v2") || !Files.isRegularFile(Path.of(executable)))) {
            throw new Usage("--stage " + program + ": " + (!protocol.equals("v2") ? "staging needs --protocol v2"
                    : "no such file here to copy to the nodes"));
        }
        return new JobRunner.Settings(executable, List.copyOf(args), ranks, extra,
                tagOutput && !raw, timeoutSeconds == 0 ? null : Duration.ofSeconds(timeoutSeconds),
                Duration.ofSeconds(graceSeconds), Duration.ofSeconds(terminateWaitSeconds), launch.resolve(jobFile),
                quiet ? -1 : verbose ? 1 : 0, protocol, keySpec, stage, workingDirectory(launch.env()),
                workingDirectory != null, identity);
    }

    /** @return whether ranks are bound to their slots' cores: {@code --bind} or Hydra's {@code -bind-to} */
    private boolean bindCores() throws Usage {
        if (bind != null && !bind.equals("none") && !bind.equals("core")) {
            throw new Usage("--bind " + bind + ": expected none or core");
        }
        if (bindTo != null && !bindTo.equals("none") && !bindTo.equals("core")) {
            throw new Usage("-bind-to " + bindTo + ": expected core or none (a rank on its slot's core, or every"
                    + " rank on core 0; Hydra's other levels are not supported)");
        }
        if (bind != null && bindTo != null && !bind.equals(bindTo)) {
            throw new Usage("--bind " + bind + " and -bind-to " + bindTo + " disagree: give one of them");
        }
        return "core".equals(bindTo != null ? bindTo : bind);
    }

    /**
     * The variables of every rank, later ones winning: this shell's ({@code --export ALL},
     * {@code -genvall}), those {@code --export} lists, {@code -genvlist}, {@code -x}, then the
     * values {@code -genv}/{@code -env} give.
     */
    private Map<String, String> environment() throws Usage {
        boolean all = genvAll;
        List<String> variables = new ArrayList<>();
        if (export != null) {
            for (String e : export.split(",")) {
                if (e.equals("ALL")) {
                    all = true;
                } else if (!e.equals("NONE") && !e.isEmpty()) {
                    variables.add(e);
                }
            }
        }
        if (genvNone && all) {
            throw new Usage("-genvnone passes none of this shell's variables, " + (genvAll ? "-genvall" : "--export ALL")
                    + " all of them: give one of them");
        }
        Map<String, String> extra = new LinkedHashMap<>();
        if (all) {
            launch.env().forEach((name, value) -> {
                if (!processManagers(name) && org.mpiproxy.protocol.ExecCommand.isVariableName(name)
                        && value.indexOf('\0') < 0) {
                    extra.put(name, value);
                }
            });
        }
        for (String name : genvList) {
            if (!name.isEmpty()) {
                put(extra, "-genvlist", name, null);
            }
        }
        variables.addAll(environment);
        for (String e : variables) {
            int eq = e.indexOf('=');
            put(extra, "-x", eq < 0 ? e : e.substring(0, eq), eq < 0 ? null : e.substring(eq + 1));
        }
        for (int i = 0; i + 1 < genv.size(); i += 2) {
            put(extra, "-genv", genv.get(i), genv.get(i + 1));
        }
        return extra;
    }

    /** Adds a variable; {@code value} {@code null} takes this shell's. */
    private void put(Map<String, String> extra, String option, String name, String value) throws Usage {
        if (!org.mpiproxy.protocol.ExecCommand.isVariableName(name)) {
            throw new Usage(option + " " + name + (value == null || !option.equals("-x") ? "" : "=" + value) + ": '"
                    + name + "' is not a variable name");
        }
        if (value == null) {
            value = launch.env().get(name);
            if (value == null) {
                throw new Usage(option + " " + name + ": not set here; give -x " + name + "=VALUE");
            }
        }
        if (value.indexOf('\0') >= 0) {
            throw new Usage(option + " " + name + ": the value holds a NUL character");
        }
        extra.put(name, value);
    }

    /**
     * @return the ranks' working directory, absolute: {@code -wdir} (a relative one from here),
     *         else this one, named as the shell names it ({@code $PWD}, when that is this
     *         directory: the name a link gives it is more likely the same on the other nodes)
     */
    Path workingDirectory(Map<String, String> env) {
        Path here = launch.cwd();
        String pwd = env.get("PWD");
        if (pwd != null && pwd.startsWith("/")) {
            try {
                if (Files.isSameFile(Path.of(pwd), here)) {
                    here = Path.of(pwd);
                }
            } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
                // not this directory: keep its real name
            }
        }
        return workingDirectory == null ? here : here.resolve(workingDirectory).normalize();
    }

    static String resolveProgram(String program, Map<String, String> env) {
        if (program.contains("/")) {
            return program;
        }
        String dir = env.get(PROGRAMS_ENV);
        if (dir != null && !dir.isBlank()) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return program;
    }

    /**
     * @return whether the variable is one a process manager sets for its own ranks: ours
     *         ({@code MPIPROXY_*}), PMI's ({@code PMI_FD}, {@code PMI_RANK}, ... of a launcher that
     *         itself runs under Hydra or Slurm) and PMIx's or Open MPI's, but not their MCA
     *         parameters, which users set: {@code -genvall} passes everything else
     */
    static boolean processManagers(String name) {
        return name.startsWith("MPIPROXY_") || name.startsWith("PMI_")
                || name.startsWith("PMIX_") && !name.startsWith("PMIX_MCA_")
                || name.startsWith("OMPI_") && !name.startsWith("OMPI_MCA_");
    }
}
