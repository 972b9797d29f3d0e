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

    @Option(names = "--ppn", paramLabel = "N",
            description = "Ranks per node, at least 1, replacing the nodes' slot counts.")
    Integer ranksPerNode;

    @Option(names = "--bind", paramLabel = "POLICY", defaultValue = "none",
            description = "Core binding for node slots: none (every rank on core 0, the proxy's own) or core (a rank"
                    + " runs on the core of its slot's index on the node; needs the program's .lz4 image)."
                    + " FreeNOS hostfiles name their cores. Default: ${DEFAULT-VALUE}.")
    String bind;

    @Option(names = {"-x", "--env"}, paramLabel = "VAR[=VALUE]",
            description = "Environment variable for every rank (repeatable); VAR alone passes this shell's value."
                    + " Over v1 it reaches rank 0 only: the proxies start ranks 1..N-1 with their own environment.")
    List<String> environment = new ArrayList<>();

    @Option(names = "--export", paramLabel = "LIST",
            description = "Variables for every rank, as Slurm's --export: NONE (default: only -x), ALL (every"
                    + " variable of this shell but MPIPROXY_*; one EXEC datagram must hold them), or"
                    + " VAR[=VALUE],... (ALL,VAR=VALUE,... adds to ALL).")
    String export;

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

    @Option(names = "--protocol", paramLabel = "v1|v2", defaultValue = "v2",
            description = "Wire protocol to the proxies (default: ${DEFAULT-VALUE}). v2 is authenticated and"
                    + " reliable and streams every rank's output here; v1 keeps ranks' output in the nodes' log files.")
    String protocol;

    @Option(names = "--key-file", paramLabel = "FILE",
            description = "The cluster's v2 key (the same file as every node's etc/mpiproxy.key). Default: $"
                    + V2Control.KEY_FILE_ENV + ", else ../etc/mpiproxy.key, else ~/.mpiproxy/key.")
    Path keyFile;

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
            + ", or a name on PATH. The proxies start the file of the same name in their programs/ directory.")
    String program;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "The program's arguments.")
    List<String> args = new ArrayList<>();

    private final Launch launch;

    /** The process environment and streams, replaceable in tests. */
    record Launch(Map<String, String> env, PrintStream out, PrintStream err) {
    }

    RunCommand(Launch launch) {
        this.launch = launch;
    }

    @Override
    public Integer call() throws Exception {
        PrintStream err = launch.err();
        if (!protocol.equals("v1") && !protocol.equals("v2")) {
            err.println("mpiproxy: --protocol " + protocol + ": expected v1 or v2");
            return 2;
        }
        if (keyFile != null && protocol.equals("v1")) {
            err.println("mpiproxy: --key-file applies to --protocol v2 only; v1 has no authentication");
            return 2;
        }
        String keySpec = null;
        if (protocol.equals("v2")) {
            try {
                keySpec = V2Control.keySpec(keyFile, launch.env());
                V2Control.keys(keySpec);
            } catch (IllegalArgumentException e) {
                err.println("mpiproxy: " + e.getMessage());
                return 2;
            }
        }
        if (!bind.equals("none") && !bind.equals("core")) {
            err.println("mpiproxy: --bind " + bind + ": expected none or core");
            return 2;
        }
        if (worldSize != null && worldSize < 1 || ranksPerNode != null && ranksPerNode < 1) {
            err.println("mpiproxy: " + (worldSize != null && worldSize < 1 ? "-n " + worldSize + ": a world has at"
                    + " least 1 rank (rank 0); leave -n out for one rank per slot" : "--ppn " + ranksPerNode
                    + ": a node runs at least 1 rank; leave --ppn out for the nodes' slot counts"));
            return 2;
        }
        if (timeoutSeconds < 0 || graceSeconds < 0 || terminateWaitSeconds < 0) {
            err.println("mpiproxy: --timeout, --grace and --terminate-wait take numbers >= 0");
            return 2;
        }
        Map<String, String> extra = new LinkedHashMap<>();
        List<String> variables = new ArrayList<>();
        if (export != null) {
            for (String e : export.split(",")) {
                if (e.equals("ALL")) {
                    launch.env().forEach((name, value) -> {
                        if (!name.startsWith("MPIPROXY_") && org.mpiproxy.protocol.ExecCommand.isVariableName(name)) {
                            extra.put(name, value);
                        }
                    });
                } else if (!e.equals("NONE") && !e.isEmpty()) {
                    variables.add(e);
                }
            }
        }
        variables.addAll(environment);
        for (String e : variables) {
            int eq = e.indexOf('=');
            String name = eq < 0 ? e : e.substring(0, eq);
            if (!org.mpiproxy.protocol.ExecCommand.isVariableName(name)) {
                err.println("mpiproxy: -x " + e + ": '" + name + "' is not a variable name");
                return 2;
            }
            String value = eq < 0 ? launch.env().get(name) : e.substring(eq + 1);
            if (value == null) {
                err.println("mpiproxy: -x " + name + ": not set here; give -x " + name + "=VALUE");
                return 2;
            }
            if (value.indexOf('\0') >= 0) {
                err.println("mpiproxy: -x " + name + ": the value holds a NUL character");
                return 2;
            }
            extra.put(name, value);
        }
        List<Placement> ranks;
        try {
            ranks = placement.plan(launch.env()::get, worldSize == null ? 0 : worldSize,
                    ranksPerNode == null ? 0 : ranksPerNode, bind.equals("core"), oversubscribe);
        } catch (IllegalArgumentException e) {
            err.println("mpiproxy: " + e.getMessage());
            return 2;
        } catch (java.io.IOException e) {
            err.println("mpiproxy: cannot read " + e.getMessage());
            return 2;
        }
        String executable = resolveProgram(program, launch.env());
        if (stage && (!protocol.equals("v2") || !Files.isRegularFile(Path.of(executable)))) {
            err.println("mpiproxy: --stage " + program + ": " + (!protocol.equals("v2") ? "staging needs --protocol v2"
                    : "no such file here to copy to the nodes"));
            return 2;
        }
        JobRunner.Settings settings = new JobRunner.Settings(executable, List.copyOf(args), ranks, extra,
                tagOutput && !raw, timeoutSeconds == 0 ? null : Duration.ofSeconds(timeoutSeconds),
                Duration.ofSeconds(graceSeconds), Duration.ofSeconds(terminateWaitSeconds), jobFile,
                quiet ? -1 : verbose ? 1 : 0, protocol, keySpec, stage);
        return new JobRunner(settings, launch.out(), err).run();
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
}
