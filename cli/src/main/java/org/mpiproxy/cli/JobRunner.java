package org.mpiproxy.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

/**
 * Runs one job over v2 (or v1). Over v2 it first starts ranks 1..N-1 of any program on their
 * nodes ({@link V2Session}: a plain EXEC each, from rank 0's port, so that rank 0 owns the job),
 * whose output then comes straight here, tagged; then rank 0 here with its world in the
 * environment ({@code MPIPROXY_HOSTS}, the port it sends from, where it writes the exit statuses,
 * the key file, or the job key and credential, and the job id; a rank 0 of our library asks for
 * the same ranks again, which the proxies answer as already started). The job ends when rank 0
 * and every rank have ended (a rank 0 of our library terminates its ranks itself when it
 * finalizes); a rank that fails stops the job, as with {@code mpiexec}. Afterwards the launcher terminates whatever rank is left, as
 * the job's owner from rank 0's own port, by job id, signed with the cluster key. Over v1 rank 0
 * must start the ranks itself (our library's {@code Mpi.init}); a plain program runs as rank 0
 * only. SIGINT/SIGTERM/timeout stop rank 0 (SIGTERM, SIGKILL after the
 * grace) and then the ranks: over v2 with TERMINATE's STOP bit, so every proxy signals its ranks at
 * once and answers within its stop grace (v1 has no such request: its proxies wait their terminate
 * timeout first); a second signal stops waiting at once.
 * <p>
 * Our library's {@code Mpi.init} creates the file {@code MPIPROXY_INIT_FILE} names: a rank 0
 * that ends without it is a plain program (such as {@code hostname}). Over v1 that means its
 * ranks never started: the launcher says so once and exits non-zero, since the N copies an
 * {@code mpiexec} user expects did not run.
 * <p>
 * Longer than 500 lines for a reason: it is one job's life in the launcher, step after step
 * (rank 0's environment, the v2 start of the other ranks, the wait, the stop, the terminate of
 * what is left), and every step reads or changes the same signal state, v2 session and PMI
 * fence; what needs none of them is in {@link JobEnd}, {@link V2Session}, {@link V2Control}
 * and {@link PmiFence}.
 */
final class JobRunner {

    /** Exit status on {@code --timeout}, as timeout(1). */
    static final int EXIT_TIMEOUT = 124;
    /**
     * Exit status when rank 0 exited 0 but never started ranks 1..N-1 (a plain program over v1):
     * the job did not run N copies; rank 0's own failing status wins.
     */
    static final int EXIT_PLAIN_PROGRAM = 1;
    /** Exit status when PROGRAM cannot be started, as a shell. */
    static final int EXIT_CANNOT_START = 127;

    /**
     * What to run and how.
     *
     * @param program        the executable of rank 0
     * @param args           its arguments
     * @param ranks          placement of rank r at element r-1
     * @param environment    extra environment of rank 0
     * @param tagOutput      prefix lines with {@code [rank]}
     * @param timeout        job time limit, {@code null} for none
     * @param grace          SIGTERM to SIGKILL of rank 0
     * @param terminateWait  wait for TERMINATE replies of ranks left behind
     * @param jobFile        where to describe the job, or {@code null}
     * @param verbosity      -1 quiet, 0 normal, 1 verbose
     * @param protocol       {@code v1} or {@code v2}
     * @param keySpec        v2: the key file list ({@code [id:]path[,...]}), else {@code null}
     * @param stage          copy PROGRAM to every node first and run that copy (v2 STAGE)
     * @param workingDirectory the ranks' working directory (absolute), {@code null} for the launcher's:
     *                       rank 0 starts in it, ranks 1..N-1 get it in their EXEC as
     *                       {@value RankWorld#WORKING_DIRECTORY}
     * @param workingDirectoryChosen the user chose it ({@code -wdir}); else it is the launcher's
     * @param identity       v2: whom the launcher acts as (a job key, {@code --user}), or {@code null}: the
     *                       cluster key of {@code keySpec} and a random job id
     */
    record Settings(String program, List<String> args, List<Placement> ranks, Map<String, String> environment,
            boolean tagOutput, Duration timeout, Duration grace, Duration terminateWait, Path jobFile, int verbosity,
            String protocol, String keySpec, boolean stage, Path workingDirectory, boolean workingDirectoryChosen,
            LauncherIdentity identity) {

        Settings(String program, List<String> args, List<Placement> ranks, Map<String, String> environment,
                 boolean tagOutput, Duration timeout, Duration grace, Duration terminateWait, Path jobFile,
                 int verbosity, String protocol, String keySpec, boolean stage, Path workingDirectory,
                 boolean workingDirectoryChosen) {
            this(program, args, ranks, environment, tagOutput, timeout, grace, terminateWait, jobFile, verbosity,
                    protocol, keySpec, stage, workingDirectory, workingDirectoryChosen, null);
        }

        Settings(String program, List<String> args, List<Placement> ranks, Map<String, String> environment,
                 boolean tagOutput, Duration timeout, Duration grace, Duration terminateWait, Path jobFile,
                 int verbosity, String protocol, String keySpec) {
            this(program, args, ranks, environment, tagOutput, timeout, grace, terminateWait, jobFile, verbosity,
                    protocol, keySpec, false, null, false);
        }

        boolean v2() {
            return "v2".equals(protocol);
        }
    }

    private final Settings settings;
    /** The run's caller: its environment, working directory, home, signals and launcher process. */
    private final RunCommand.Launch launch;
    private final java.util.function.LongSupplier clock;
    private final PrintStream out;
    private final PrintStream err;
    private final Object lock = new Object();
    private int signals;
    private String firstSignal;
    /** Set before the launcher stops rank 0: its output's last partial line was cut. */
    private volatile boolean stopping;
    /** The ranks' exit statuses reported and the job file's end recorded. */
    private final JobEnd end;
    /** Over v2 with ranks 1..N-1: the launcher's side of the job (their start, output and states). */
    private V2Session session;
    /** Over v2 with a job key: the job's credential, presented to every node; else {@code null}. */
    private V2Credential credential;
    /** Over v2 with ranks 1..N-1: rank 0's PMI server and the job's PMI fence. */
    private org.mpiproxy.protocol.pmi.PmiServer pmi;
    private PmiFence fence;
    /** Whether ranks get Slurm's names for their place too (not inside a real Slurm step). */
    private final boolean slurmNames;

    /** How long the nodes' proxies get to answer the probe before ranks are started. */
    static final Duration PROBE_WAIT = Duration.ofSeconds(5);

    /** Stop reason (and job file's {@code stop.reason}) when a rank called MPI_Abort. */
    static final String ABORT = "abort";

    /** Stop reason (and job file's {@code stop.reason}) when a rank failed and the job was stopped. */
    static final String FAILURE = "failure";

    /** Stop reason (and job file's {@code stop.reason}) when a node the job needs was lost ({@link NodeWatch}). */
    static final String NODE_LOST = "node-lost";

    /** Exit status when a node was lost, as a rank whose proxy is gone exits (EX_UNAVAILABLE). */
    static final int EXIT_NODE_LOST = 69;

    JobRunner(Settings settings, PrintStream out, PrintStream err) {
        this(settings, out, err, System::nanoTime);
    }

    /**
     * @param clock nanoseconds as {@link System#nanoTime}: {@code --timeout} runs on it (the
     *              launcher re-reads it at least once a second while it waits), so a test moves
     *              the job's time instead of waiting for it
     */
    JobRunner(Settings settings, PrintStream out, PrintStream err, java.util.function.LongSupplier clock) {
        this(settings, new RunCommand.Launch(System.getenv(), out, err, clock));
    }

    /** @param launch the run's caller, whose environment, streams, clock and signals it takes */
    JobRunner(Settings settings, RunCommand.Launch launch) {
        this.launch = launch;
        this.clock = launch.clock();
        this.settings = settings;
        this.out = launch.out();
        this.err = launch.err();
        this.slurmNames = !RankWorld.inSlurmStep(launch.env());
        this.end = new JobEnd(settings.jobFile(), err);
    }

    int run() throws IOException, InterruptedException {
        List<Placement> ranks = settings.ranks();
        int size = ranks.size() + 1;
        int hostPort = freeUdpPort();
        Path workDir = Files.createTempDirectory("mpiproxy-job-");
        Path statusFile = workDir.resolve("exit-statuses");
        try {
            return run(ranks, size, hostPort, statusFile);
        } finally {
            Files.deleteIfExists(workDir.resolve("init"));
            Files.deleteIfExists(workDir.resolve("exit-statuses.partial"));
            Files.deleteIfExists(workDir.resolve("output"));
            Files.deleteIfExists(statusFile);
            Files.deleteIfExists(workDir);
        }
    }

    private int run(List<Placement> ranks, int size, int hostPort, Path statusFile)
            throws IOException, InterruptedException {
        NodeWatch.Times times;
        try {
            times = NodeWatch.Times.of(settings.environment());
        } catch (IllegalArgumentException e) {
            err.println("mpiproxy: " + e.getMessage());
            return 2;
        }
        StringJoiner hosts = new StringJoiner(",");
        ranks.forEach(p -> hosts.add(p.hostEntry()));
        List<String> command = new ArrayList<>();
        command.add(settings.program());
        command.addAll(settings.args());
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> env = builder.environment();
        if (!launch.ownProcess()) {
            // a run in the proxy: rank 0 starts from its front's environment, not the proxy's
            env.clear();
            env.putAll(launch.env());
        }
        // rank 0 is never a rank a proxy started, whatever this launcher's own environment says
        env.keySet().removeIf(name -> name.startsWith("MPIPROXY_"));
        env.putAll(settings.environment());
        // rank 0 is the first rank of the launcher's machine, counted with the other ranks there
        env.putAll(RankWorld.rankZeroVariables(ranks, slurmNames));
        env.put("MPIPROXY_PROTOCOL", settings.protocol());
        long jobId = 0;
        LauncherIdentity identity = !settings.v2() ? null : settings.identity() != null ? settings.identity()
                : new LauncherIdentity(settings.keySpec(), LauncherIdentity.randomJobId(),
                V2Control.keys(settings.keySpec()), null);
        if (identity != null) {
            jobId = identity.jobId();
            credential = identity.credential();
            if (identity.keySpec() != null) {
                env.put(V2Control.KEY_FILE_ENV, identity.keySpec());
            }
            env.put("MPIPROXY_JOB_ID", Job.hex(jobId));
        }
        V2Credential.toRankZero(env, credential);
        env.put("MPIPROXY_HOSTS", hosts.toString());
        env.put("MPIPROXY_HOST_PORT", Integer.toString(hostPort));
        env.put("MPIPROXY_STATUS_FILE", statusFile.toString());
        Path initFile = statusFile.resolveSibling("init");
        env.put("MPIPROXY_INIT_FILE", initFile.toString());
        builder.redirectInput(launch.ownProcess() ? ProcessBuilder.Redirect.INHERIT : ProcessBuilder.Redirect.PIPE);
        Path directory = settings.workingDirectory();
        if (directory != null) {
            if (!Files.isDirectory(directory)) {
                directory = launch.home();
                err.println("mpiproxy: " + settings.workingDirectory() + " is not a directory here: rank 0 starts in "
                        + directory);
            }
            builder.directory(directory.toFile());
        }
        if (!settings.tagOutput() && launch.ownProcess()) {
            builder.redirectOutput(ProcessBuilder.Redirect.INHERIT).redirectError(ProcessBuilder.Redirect.INHERIT);
        }
        if (settings.verbosity() > 0) {
            info("world of " + size + " over " + settings.protocol() + (settings.v2() ? " (job " + Job.hex(jobId)
                    + ")" : "") + "; rank 0 here (" + settings.program() + "), sending from UDP port " + hostPort);
            for (int r = 1; r < size; r++) {
                info("rank " + r + " on " + ranks.get(r - 1));
            }
        }
        launch.signals().listen(n -> onSignal(n == 2 ? "SIGINT" : "SIGTERM"));
        org.mpiproxy.protocol.ClusterKeys keys = identity != null ? identity.keys() : null;
        if (settings.v2() && size > 1) {
            session = new V2Session(jobId, keys, credential, ranks, out, err, settings.tagOutput(), this::wake);
            session.watch(times, clock);
            startPmi(jobId, size, env);
            Integer failed = startRanks(ranks, size, hostPort, jobId, keys);
            if (failed != null) {
                closePmi();
                return failed;
            }
            session.start();
        } else if (size == 1) {
            // a rank alone has PMI too, as under Hydra: else MPICH starts a singleton's mpiexec
            startPmi(jobId, size, env);
        }
        try {
            return runRankZero(builder, ranks, size, hostPort, statusFile, initFile, jobId, keys);
        } finally {
            if (session != null) {
                session.close();
            }
            closePmi();
        }
    }

    /**
     * Serves PMI for the job (MPICH programs, docs/protocol-v2.md 5.7): rank 0 talks to the
     * launcher's own PMI server, the other ranks to their proxies' and, through their PMI
     * streams, to the fence here; a fence that every rank entered goes to every node and to
     * rank 0's server (only there for a job of one rank, which has no session). Without a PMI
     * server (it cannot be opened) MPICH programs run as singletons.
     */
    private void startPmi(long jobId, int size, Map<String, String> rankZeroEnv) {
        try {
            pmi = new org.mpiproxy.protocol.pmi.PmiServer((job, rank, line) -> {
                String problem = fence.onLine(rank, line);
                if (problem != null) {
                    err.println("mpiproxy: " + problem);
                }
                return true;
            }, line -> err.println("mpiproxy: " + line));
        } catch (IOException e) {
            err.println("mpiproxy: cannot open a PMI server (" + e + "): MPICH programs run as singletons");
            return;
        }
        org.mpiproxy.protocol.pmi.PmiServer local = pmi;
        V2Session nodes = session;
        fence = new PmiFence(size, (epoch, pairs) -> {
            if (nodes != null) {
                nodes.fence(epoch, org.mpiproxy.protocol.pmi.PmiSpace.encode(pairs, V2Fences.fencePayload()));
            }
            byte[] all = org.mpiproxy.protocol.pmi.PmiSpace.encode(pairs, Integer.MAX_VALUE).get(0);
            local.onFence(jobId, epoch, 0, 1, java.nio.ByteBuffer.wrap(all), 0, all.length);
        }, new PmiNodeAttributes(jobId, settings.ranks(), nodes == null ? null : nodes::nodeAttributes, local),
                this::wake);
        if (nodes != null) {
            nodes.pmi(fence::onLine);
        }
        String mapping = RankWorld.processMapping(settings.ranks());
        rankZeroEnv.putAll(local.register(jobId, 0, size, mapping == null ? Map.of()
                : Map.of(RankWorld.PROCESS_MAPPING, mapping)));
    }

    private void closePmi() {
        if (pmi != null) {
            pmi.close();
        }
    }

    /**
     * Starts ranks 1..N-1 on their nodes (v2, any program). When one cannot start, says why,
     * stops those that did, and records the end.
     *
     * @return {@code null} when every rank started, else the launcher's exit status
     */
    private Integer startRanks(List<Placement> ranks, int size, int hostPort, long jobId,
                               org.mpiproxy.protocol.ClusterKeys keys) throws IOException {
        List<Map<String, String>> environments = RankWorld.environments(ranks, size, settings.environment(),
                slurmNames);
        if (settings.workingDirectory() != null) {
            // the proxies start each rank there when the directory exists on their node, else in the
            // rank user's home with one line on the rank's standard error
            environments.forEach(e -> e.put(RankWorld.WORKING_DIRECTORY, settings.workingDirectory().toString()));
        }
        // one probe per node first: a node that is down, or does not share the key, is named at once
        Map<InetSocketAddress, Boolean> proxies = new java.util.LinkedHashMap<>();
        for (Placement p : ranks) {
            proxies.put(new InetSocketAddress(p.address(), p.port()), true);
        }
        // with a job key, every node learns it first (docs/protocol-v2.md 5.9); a node that refuses it ends the job
        if (credential != null && credential.presentTo(proxies.keySet(), PROBE_WAIT) != null) {
            err.println("mpiproxy: " + credential.refusal());
            int[] none = new int[size];
            Arrays.fill(none, V1Control.NOT_RUNNING);
            end.record(jobFile(0, null, hostPort, ranks, jobId), none, EXIT_CANNOT_START, FAILURE);
            return EXIT_CANNOT_START;
        }
        Map<InetSocketAddress, Prober.Answer> answers = V2Control.probe(List.copyOf(proxies.keySet()), keys,
                credential, PROBE_WAIT);
        List<V2Session.Failure> failures = new ArrayList<>();
        for (int r = 1; r < size; r++) {
            Placement p = ranks.get(r - 1);
            Prober.Answer a = answers.getOrDefault(new InetSocketAddress(p.address(), p.port()),
                    Prober.Answer.ANSWERED);
            if (!a.answered()) {
                failures.add(new V2Session.Failure(r, a.problem()));
            }
        }
        String program = nodeProgram();
        if (failures.isEmpty() && settings.stage()) {
            try {
                byte[] content = Files.readAllBytes(Path.of(settings.program()));
                program = V2Stage.name(content);
                long t0 = System.nanoTime();
                Map<InetSocketAddress, String> lacking = V2Stage.stage(List.copyOf(proxies.keySet()), jobId, keys,
                        credential, content, V2Control.DEAD_AFTER);
                for (int r = 1; r < size; r++) {
                    Placement p = ranks.get(r - 1);
                    String problem = lacking.get(new InetSocketAddress(p.address(), p.port()));
                    if (problem != null) {
                        failures.add(new V2Session.Failure(r, "MPI_ERR_IO: " + problem));
                    }
                }
                if (settings.verbosity() > 0) {
                    info("staged " + settings.program() + " (" + content.length + " bytes) as " + program + " on "
                            + proxies.size() + " nodes in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
                }
            } catch (IOException e) {
                err.println("mpiproxy: cannot stage " + settings.program() + ": " + e.getMessage());
                return EXIT_CANNOT_START;
            }
        }
        boolean execed = failures.isEmpty();
        if (execed) {
            try {
                failures = session.exec(hostPort, program, settings.args(), environments,
                        V2Control.DEAD_AFTER);
            } catch (IllegalArgumentException e) {
                err.println("mpiproxy: " + e.getMessage());
                return 2;
            }
        }
        if (failures.isEmpty()) {
            return null;
        }
        if (credential != null && credential.refusal() != null) {
            err.println("mpiproxy: " + credential.refusal()); // presented again, and refused: why the EXECs failed
        }
        int[] statuses = new int[size];
        // after a failed probe nothing was started; after EXECs the ranks that started are stopped
        Arrays.fill(statuses, execed ? V1Control.NO_REPLY : V1Control.NOT_RUNNING);
        statuses[0] = V1Control.NOT_RUNNING;
        for (V2Session.Failure f : failures) {
            // an EXEC refused by its proxy names the error; otherwise the node did not answer as a proxy
            statuses[f.rank()] = f.reason().startsWith("MPI_ERR") ? V1Control.FAILED_TO_START : V1Control.NODE_DOWN;
            end.nodeProblem(f.rank(), f.reason());
        }
        if (execed) {
            int[] reported = statuses.clone();
            V2Control.terminate(hostPort, jobId, keys, credential, ranks, statuses, true, Duration.ofSeconds(10),
                    V2Control.DEAD_AFTER, () -> signalCount() >= 2, this::lateLine, System::nanoTime);
            for (V2Session.Failure f : failures) {
                statuses[f.rank()] = reported[f.rank()];
            }
        }
        end.report(statuses, ranks, null, fence, session);
        String hint = stageHint(settings, failures);
        if (hint != null) {
            err.println("mpiproxy: " + hint);
        }
        end.record(jobFile(0, null, hostPort, ranks, jobId), statuses, EXIT_CANNOT_START, FAILURE);
        return EXIT_CANNOT_START;
    }

    /**
     * @return for a PROGRAM given with a path, not staged, that a node has no program of that
     *         name for: the line that says {@code --stage} copies it; else {@code null}
     */
    static String stageHint(Settings settings, List<V2Session.Failure> failures) {
        String program = settings.program();
        String named = settings.environment().get("MPIPROXY_PROGRAM");
        if (settings.stage() || !program.contains("/") || named != null && !named.isBlank()) {
            return null;
        }
        String name = programName(program);
        for (V2Session.Failure f : failures) {
            if (f.reason().contains("no program '" + name + "'")) {
                return "the nodes run the program named " + name + " from their programs/ directory (or"
                        + " program.path), not the file " + program + ": --stage copies it to them";
            }
        }
        return null;
    }

    private int runRankZero(ProcessBuilder builder, List<Placement> ranks, int size, int hostPort, Path statusFile,
                            Path initFile, long jobId, org.mpiproxy.protocol.ClusterKeys keys)
            throws IOException, InterruptedException {
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            err.println("mpiproxy: cannot start " + settings.program() + ": " + e.getMessage());
            int[] statuses = new int[size];
            Arrays.fill(statuses, V1Control.NOT_RUNNING);
            statuses[0] = EXIT_CANNOT_START;
            if (session != null) {
                Arrays.fill(statuses, 1, size, V1Control.NO_REPLY);
                V2Control.terminate(hostPort, jobId, keys, credential, ranks, statuses, true, Duration.ofSeconds(10),
                        V2Control.DEAD_AFTER, () -> signalCount() >= 2, this::lateLine, System::nanoTime);
            }
            end.record(jobFile(0, null, hostPort, ranks, jobId), statuses, EXIT_CANNOT_START, null);
            return EXIT_CANNOT_START;
        }
        process.onExit().thenRun(this::wake);
        if (!launch.ownProcess()) {
            process.getOutputStream().close(); // rank 0 of a run in the proxy reads no standard input
        }
        if (pmi != null) {
            pmi.started(jobId, 0, process.pid());
        }
        List<Thread> pumps = new ArrayList<>();
        if (settings.tagOutput()) {
            pumps.add(pump(process.getInputStream(), out, "[0] ", "rank-0-stdout", () -> stopping));
            pumps.add(pump(process.getErrorStream(), err, "[0] ", "rank-0-stderr", () -> stopping));
        } else if (!launch.ownProcess()) {
            pumps.add(TaggedOutput.raw(process.getInputStream(), out, "rank-0-stdout"));
            pumps.add(TaggedOutput.raw(process.getErrorStream(), err, "rank-0-stderr"));
        }
        JobFile job = jobFile(process.pid(), JobFile.startOf(process.toHandle()), hostPort, ranks, jobId);
        if (settings.jobFile() != null) {
            try {
                job.write(settings.jobFile());
            } catch (IOException e) {
                err.println("mpiproxy: cannot write the job file " + settings.jobFile() + " (" + e
                        + "): 'mpiproxy status' and 'mpiproxy kill' will not find this job by it");
            }
        }

        long deadline = settings.timeout() == null ? 0 : clock.getAsLong() + settings.timeout().toNanos();
        String stopReason = await(process::isAlive, deadline);
        if (process.isAlive() && stopReason != null) {
            info("stopping the job (" + describeStop(stopReason) + ")");
            stopping = true;
            stopRankZero(process);
        }
        process.waitFor();
        for (Thread pump : pumps) {
            pump.join(TimeUnit.SECONDS.toMillis(2));
        }

        int[] statuses = new int[size];
        Arrays.fill(statuses, V1Control.NO_REPLY);
        statuses[0] = process.exitValue();
        boolean finalized = JobEnd.readStatuses(statusFile, statuses);
        boolean library = Files.exists(initFile);
        boolean plainProgram = size > 1 && !library;
        if (session != null && stopReason == null && plainProgram && statuses[0] == 0) {
            // a program that is not ours: as with mpiexec, the job ends when every rank has
            session.watchClosely();
            stopReason = await(() -> !session.allEnded(), deadline);
            if (stopReason != null) {
                info("stopping the job (" + describeStop(stopReason) + ")");
            }
        }
        if (stopReason == null && signalCount() > 0) {
            stopReason = firstSignal();
        }
        if (!settings.v2() && plainProgram) {
            // over v1 rank 0 never reached Mpi.init: no rank was started, so none is to be terminated
            Arrays.fill(statuses, 1, size, V1Control.NOT_RUNNING);
            if (stopReason == null) {
                err.println("mpiproxy: " + plainProgramMessage(settings.program(), size));
            }
        }
        if (session != null) {
            session.fill(statuses);
            end.lostNode(session.lost(), statuses);
        }
        if ((settings.v2() || !plainProgram) && JobEnd.hasUnknown(statuses)) {
            boolean immediate = signalCount() >= 2;
            // a stopped job, a failed rank 0, or a rank 0 gone without finalizing: nobody waits for the ranks' results
            boolean stopNow = stopReason != null || (library ? !finalized : statuses[0] != 0);
            Duration wait = immediate ? Duration.ofMillis(300) : settings.terminateWait();
            if (settings.verbosity() >= 0 && (library || stopNow)) {
                // a job the launcher stopped was already said to be stopped, with why: rank 0 did not fail
                String why = stopReason != null ? null : !library ? "rank 0 failed"
                        : finalized ? "some ranks did not report their end" : "rank 0 ended without finalizing";
                String what = (stopNow && settings.v2() ? "stopping" : "terminating") + " the job's ranks on their nodes"
                        + (immediate ? " (not waiting)" : "");
                info(why == null ? what : why + "; " + what);
            }
            try {
                if (settings.v2()) {
                    end.markUnreachableNodes(ranks, statuses, keys, credential);
                    V2Control.terminate(hostPort, jobId, keys, credential, ranks, statuses, stopNow, wait,
                            V2Control.DEAD_AFTER, () -> !immediate && signalCount() >= 2, this::lateLine,
                            System::nanoTime);
                } else {
                    end.markUnreachableNodes(ranks, statuses, null, null);
                    V1Control.terminate(hostPort, ranks, statuses, wait, () -> !immediate && signalCount() >= 2);
                }
            } catch (IOException | IllegalArgumentException e) {
                err.println("mpiproxy: cannot terminate the ranks from UDP port " + hostPort + " (" + e.getMessage()
                        + "): ranks may still run; see each node's mpi:jobs");
            }
        }
        int exit = end.report(statuses, ranks, stopReason, fence, session);
        exit = !settings.v2() && plainProgram && exit == 0 ? EXIT_PLAIN_PROGRAM : exit;
        end.record(job, statuses, exit, stopReason);
        return exit;
    }

    /**
     * Waits while {@code running} holds, until a signal, the deadline or (v2) a failed rank.
     *
     * @param deadline the job's clock at the time limit, 0 for none
     * @return {@code null} when {@code running} stopped holding, else the stop reason:
     *         {@code SIGINT}, {@code SIGTERM}, {@code timeout} or {@link #FAILURE}
     */
    private String await(java.util.function.BooleanSupplier running, long deadline) throws InterruptedException {
        synchronized (lock) {
            while (true) {
                if (signals > 0) {
                    return firstSignal;
                }
                PmiFence.Abort abort = fence == null ? null : fence.abort();
                if (abort != null) {
                    info("rank " + abort.rank() + " called MPI_Abort (exit code " + abort.exitCode() + ")"
                            + (abort.message() == null ? "" : ": " + abort.message().replace('_', ' ')));
                    return ABORT;
                }
                if (session != null && session.failedRank() > 0) {
                    V2Session.RankState s = session.states().get(session.failedRank());
                    info("rank " + session.failedRank() + " (" + settings.ranks().get(session.failedRank() - 1)
                            + ") " + (s.state() == org.mpiproxy.protocol.V2StatusDescriptor.STATE_FAILED
                            ? "could not be started" : V1Control.describe(s.exitStatus())));
                    return FAILURE;
                }
                if (session != null && session.lost() != null) {
                    err.println("mpiproxy: " + session.lost().describe());
                    return NODE_LOST;
                }
                if (!running.getAsBoolean()) {
                    return null;
                }
                long left = deadline == 0 ? Long.MAX_VALUE : deadline - clock.getAsLong();
                if (left <= 0) {
                    return "timeout";
                }
                lock.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 1000)));
            }
        }
    }

    private String describeStop(String reason) {
        return reason.equals("timeout") ? "--timeout " + settings.timeout().toSeconds() + " s"
                : reason.equals(FAILURE) ? "a rank failed" : reason.equals(ABORT) ? "MPI_Abort"
                : reason.equals(NODE_LOST) ? "a node was lost" : reason;
    }

    private String firstSignal() {
        synchronized (lock) {
            return firstSignal;
        }
    }

    /**
     * @return the program the nodes start: {@code -x MPIPROXY_PROGRAM=NAME} when given (the name
     *         our library's rank 0 asks for, too), else the file name of PROGRAM
     */
    private String nodeProgram() {
        String named = settings.environment().get("MPIPROXY_PROGRAM");
        return named != null && !named.isBlank() ? named : programName(settings.program());
    }

    /** @return the program's name on the nodes: the file name of {@code program} */
    static String programName(String program) {
        Path name = Path.of(program).getFileName();
        return name == null ? program : name.toString();
    }

    /** @return the one line that tells a world of {@code size} ran as rank 0 only */
    static String plainProgramMessage(String program, int size) {
        Path name = Path.of(program).getFileName();
        return (name == null ? program : name.toString()) + " ran as rank 0 only: over v1 "
                + (size == 2 ? "rank 1 is" : "ranks 1.." + (size - 1) + " are") + " started by the program's own"
                + " Mpi.init (the org.mpiproxy.mpi library), which it never called; protocol v2 (the default) starts"
                + " any program on every slot";
    }

    private void stopRankZero(Process process) throws InterruptedException {
        process.destroy();
        long deadline = System.nanoTime() + settings.grace().toNanos();
        synchronized (lock) {
            while (process.isAlive() && signals < 2) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                lock.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }

    private void onSignal(String name) {
        synchronized (lock) {
            signals++;
            if (firstSignal == null) {
                firstSignal = name;
            }
            lock.notifyAll();
        }
        if (signalCount() == 2) {
            err.println("mpiproxy: " + name + " again: stopping at once");
        }
    }

    private void wake() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    private int signalCount() {
        synchronized (lock) {
            return signals;
        }
    }

    /** @return the running job's description, for the job file */
    private JobFile jobFile(long rankZeroPid, java.time.Instant rankZeroStarted, int hostPort, List<Placement> ranks,
                            long jobId) {
        java.util.Optional<ProcessHandle> launcher = ProcessHandle.of(launch.launcherPid());
        return new JobFile(launch.launcherPid(), rankZeroPid, hostPort, ranks, settings.protocol(), jobId,
                settings.keySpec(), launcher.map(JobFile::startOf).orElse(null), rankZeroStarted, null);
    }

    /** A rank's line that reached the launcher after rank 0 ended (over v2). */
    private void lateLine(int rank, boolean stderr, String line) {
        PrintStream to = stderr ? err : out;
        synchronized (to) {
            to.println(settings.tagOutput() ? "[" + rank + "] " + line : line);
        }
    }

    private void info(String message) {
        if (settings.verbosity() >= 0) {
            err.println("mpiproxy: " + message);
        }
    }

    private static Thread pump(java.io.InputStream in, OutputStream to, String tag, String name,
                               java.util.function.BooleanSupplier stopped) {
        Thread t = new Thread(new TaggedOutput(in, to, tag, stopped), name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Job ids as the proxies print them: 16 hexadecimal digits. */
    static final class Job {
        private Job() {
        }

        static String hex(long jobId) {
            return String.format("%016x", jobId);
        }
    }

    /** @return a UDP port free right now on every address, outside the ephemeral range (rank 0 binds it next) */
    static int freeUdpPort() throws IOException {
        return HostPorts.free();
    }
}
