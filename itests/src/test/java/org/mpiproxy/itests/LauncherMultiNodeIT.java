package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code mpiproxy run} across three nodes, each its own Karaf with its own proxy address
 * (127.0.0.11-13) and the cluster's one v2 key: the right primes from six ranks, every remote
 * rank's output on the launcher's stdout tagged with its rank, a killed rank failing the job
 * without leftovers (over v1), SIGINT and {@code mpiproxy kill} stopping every rank everywhere.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LauncherMultiNodeIT {

    /**
     * Proxies stop a rank 1 s after TERMINATE (terminate.timeout) and SIGKILL it 2 s later; the
     * launcher's grace is 5 s. Only a bound on a hang: how fast a stop is, LauncherStopIT measures.
     */
    private static final long STOP_BOUND_SECONDS = 120;
    /** What the issue promises: a node where no proxy answers is named within 5 s of the request. */
    private static final long NAMED_WITHIN_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Large enough that rank 0 is still collecting slices when the tests interfere. */
    private static final String LONG_JOB_NUMBER = "12000000";

    private final List<KarafNode> nodes = new ArrayList<>();
    private Path work;
    private Path nodeMap;
    private Path cli;
    private Path key;

    @BeforeAll
    void startNodes() throws Exception {
        cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        TestCluster cluster = TestCluster.start("launcher-nodes", "n", 11, 3, node -> { });
        nodes.addAll(cluster.nodes);
        work = cluster.work;
        nodeMap = cluster.nodeMap;
        key = cluster.key;
    }

    @AfterAll
    void stopNodes() throws InterruptedException {
        for (KarafNode node : nodes) {
            node.stop();
        }
    }

    /** The launcher as a user starts it, from node n1's directory: mpiprime over v2 with the cluster's key. */
    private Process launch(Path jobFile, String... args) throws IOException {
        return launch(List.of("--key-file", key.toString()), jobFile, "mpiprime", args);
    }

    private Process launch(List<String> options, Path jobFile, String program, String... args) throws IOException {
        // SIGINT at its default whatever this JVM inherited (a background job ignores it, and a JVM
        // started so would keep ignoring it)
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT", java(), "-jar", cli.toString(),
                "run", "--node-map", nodeMap.toString(), "--hosts", "n1:2,n2:2,n3:2"));
        command.addAll(options);
        if (jobFile != null) {
            command.addAll(List.of("--job-file", jobFile.toString()));
        }
        command.add(nodes.get(0).home.resolve("programs/" + program).toString());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(work.resolve("launcher.err").toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        return builder.start();
    }

    private String launcherErrors() throws IOException {
        return Files.readString(work.resolve("launcher.err"));
    }

    private List<ProcessHandle> ranksEverywhere() {
        List<ProcessHandle> all = new ArrayList<>();
        nodes.forEach(n -> all.addAll(n.ranks()));
        return all;
    }

    @Test
    void shouldFindThePrimesWithSixRanksOnThreeNodes() throws Exception {
        List<List<Path>> jobsBefore = new ArrayList<>();
        for (KarafNode node : nodes) {
            jobsBefore.add(jobDirectories(node));
        }
        Process launcher = launch(null, "100000");
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> readAll(launcher));

        assertTrue(launcher.waitFor(180, TimeUnit.SECONDS), "launcher still runs");
        assertEquals(0, launcher.exitValue(), launcherErrors());
        List<String> expected = new ArrayList<>();
        for (int p : primesBelow(100000)) {
            expected.add("[0] " + p);
        }
        expected.add("[0] 9592 primes below 100000");
        assertEquals(expected, lines.get(10, TimeUnit.SECONDS));
        // ranks 1 on n1, 2-3 on n2, 4-5 on n3: each proxy kept the output files of its own ranks
        assertEquals(List.of("rank-1.out"), newRankLogs(nodes.get(0), jobsBefore.get(0)));
        assertEquals(List.of("rank-2.out", "rank-3.out"), newRankLogs(nodes.get(1), jobsBefore.get(1)));
        assertEquals(List.of("rank-4.out", "rank-5.out"), newRankLogs(nodes.get(2), jobsBefore.get(2)));
    }

    @Test
    void shouldShowEveryRemoteRanksOutputTaggedWithItsRankOverV2() throws Exception {
        Process launcher = launch(List.of("--key-file", key.toString()), null, "mpiping");
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> readAll(launcher));

        assertTrue(launcher.waitFor(180, TimeUnit.SECONDS), "launcher still runs");
        assertEquals(0, launcher.exitValue(), launcherErrors());
        List<String> out = lines.get(10, TimeUnit.SECONDS);
        for (int r = 1; r <= 5; r++) {
            // rank 0's own lines get [0] from the launcher; the others' lines come over v2 with their own tag
            assertTrue(out.contains("[" + r + "] rank " + r + " of 6: pong sent"), out + "\nlauncher stderr:\n"
                    + launcherErrors());
            String pong = "[0] rank " + r + ": pong 0x12345678 in ";
            assertTrue(out.stream().anyMatch(l -> l.startsWith(pong)), out.toString());
        }
        assertEquals(10, out.size(), out.toString());
    }

    @Test
    void shouldFailFastNamingTheNodeWhereNothingListens() throws Exception {
        int port;
        try (java.nio.channels.DatagramChannel gone = java.nio.channels.DatagramChannel.open()) {
            gone.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            port = ((java.net.InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        String where = "127.0.0.1:" + port;
        // -v: the launcher says where rank 1 goes just before it asks that node to start it
        ProcessBuilder builder = new ProcessBuilder(java(), "-jar", cli.toString(), "run", "-v", "--key-file",
                key.toString(), "--hosts", "127.0.0.1:2", "--port", Integer.toString(port),
                nodes.get(0).home.resolve("programs/mpiprime").toString(), "1000")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process launcher = builder.start();
        CompletableFuture<List<TimedLine>> errors = CompletableFuture.supplyAsync(() -> readTimed(launcher.getErrorStream()));

        assertTrue(launcher.waitFor(120, TimeUnit.SECONDS), "launcher still runs");
        List<TimedLine> lines = errors.get(10, TimeUnit.SECONDS);
        long first = lines.isEmpty() ? 0 : lines.get(0).at();
        String err = lines.stream().map(l -> "+" + TimeUnit.NANOSECONDS.toMillis(l.at() - first) + " ms " + l.text())
                .collect(java.util.stream.Collectors.joining("\n"));
        assertNotEquals(0, launcher.exitValue(), err);
        TimedLine asked = lines.stream().filter(l -> l.text().equals("mpiproxy: rank 1 on " + where + ":0")).findFirst()
                .orElseThrow(() -> new AssertionError("no line placing rank 1: " + err));
        TimedLine named = lines.stream().filter(l -> l.text().equals("mpiproxy: rank 1 (" + where + ":0) unknown:"
                + " no proxy answers at " + where + ": nothing listens on that UDP port")).findFirst()
                .orElseThrow(() -> new AssertionError("no line naming the node: " + err));
        assertEquals(0, count("ranks started", err), "no progress line: " + err);
        // both times are when this test read the lines: starting the launcher's JVM is not counted
        assertTrue(named.at() - asked.at() <= NAMED_WITHIN_NANOS, "the node was named "
                + TimeUnit.NANOSECONDS.toMillis(named.at() - asked.at()) + " ms after rank 1 was placed on it: " + err);
    }

    /** A line of output and when this test read it ({@link System#nanoTime}). */
    private record TimedLine(long at, String text) {
    }

    private static List<TimedLine> readTimed(java.io.InputStream in) {
        List<TimedLine> lines = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(new TimedLine(System.nanoTime(), line));
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return lines;
    }

    /** What a finished launcher left: its exit status, its stdout lines and its stderr. */
    private record Run(int exit, List<String> out, String err) {
    }

    /** Runs the launcher to its end, {@code run} followed by the cluster's options and {@code runArgs}. */
    private Run run(long timeoutSeconds, String... runArgs) throws Exception {
        List<String> command = new ArrayList<>(List.of(java(), "-jar", cli.toString(), "run", "--key-file",
                key.toString(), "--node-map", nodeMap.toString()));
        command.addAll(List.of(runArgs));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(work.resolve("launcher.err").toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process launcher = builder.start();
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> readAll(launcher));
        if (!launcher.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
            org.junit.jupiter.api.Assertions.fail("launcher still runs after " + timeoutSeconds + " s: "
                    + launcherErrors());
        }
        return new Run(launcher.exitValue(), lines.get(10, TimeUnit.SECONDS), launcherErrors());
    }

    @Test
    void shouldStartEveryRankInTheWorkingDirectoryOrSayWhereItStarted() throws Exception {
        Path wd = java.nio.file.Files.createDirectories(work.resolve("wdir"));
        Run run = run(120, "--hosts", "n1:2,n2:2,n3:2", "-n", "6", "-wdir", wd.toString(), "sh", "-c",
                "pwd > where-$MPIPROXY_RANK");

        assertEquals(0, run.exit(), run.err());
        for (int r = 0; r < 6; r++) {
            // a relative path of every rank, on every node, lands in the job's directory
            assertEquals(wd.toString(), java.nio.file.Files.readString(wd.resolve("where-" + r)).trim(), "rank " + r);
        }

        Path missing = work.resolve("not-anywhere");
        Run elsewhere = run(120, "--hosts", "n1:2,n2:2,n3:2", "-n", "6", "-wdir", missing.toString(), "sh", "-c",
                "pwd");
        assertEquals(0, elsewhere.exit(), elsewhere.err());
        String home = System.getProperty("user.home");
        for (int r = 1; r < 6; r++) {
            assertTrue(elsewhere.err().contains("[" + r + "] mpiproxy: rank " + r + ": no directory " + missing
                    + " on this node; started in " + home + "\n"), elsewhere.err());
        }
        assertEquals(6, elsewhere.out().stream().filter(l -> l.endsWith("] " + home)).count(), elsewhere.out().toString());
    }

    @Test
    void shouldRunAPlainProgramOnEverySlotWithItsWorldAndTheJobsVariables() throws Exception {
        Run run = run(120, "--hosts", "n1:2,n2:2,n3:2", "-n", "6", "-x", "GREETING=hello world", "sh", "-c",
                "echo \"$MPIPROXY_RANK/$MPIPROXY_SIZE pmi=$PMI_RANK/$PMI_SIZE ompi=$OMPI_COMM_WORLD_RANK"
                        + " local=$OMPI_COMM_WORLD_LOCAL_RANK/$OMPI_COMM_WORLD_LOCAL_SIZE"
                        + " slurm=$SLURM_PROCID/$SLURM_NTASKS/$SLURM_LOCALID $GREETING\"; echo err$MPIPROXY_RANK >&2");

        assertEquals(0, run.exit(), run.err());
        // rank 0 (here) counts with rank 1 on n1, this machine's first node, as Hydra counts it
        List<String> expected = new ArrayList<>(List.of("[0] 0/6 pmi=0/6 ompi=0 local=0/2 slurm=0/6/0 hello world",
                // ranks 1 on n1, 2-3 on n2, 4-5 on n3
                "[1] 1/6 pmi=1/6 ompi=1 local=1/2 slurm=1/6/1 hello world",
                "[2] 2/6 pmi=2/6 ompi=2 local=0/2 slurm=2/6/0 hello world",
                "[3] 3/6 pmi=3/6 ompi=3 local=1/2 slurm=3/6/1 hello world",
                "[4] 4/6 pmi=4/6 ompi=4 local=0/2 slurm=4/6/0 hello world",
                "[5] 5/6 pmi=5/6 ompi=5 local=1/2 slurm=5/6/1 hello world"));
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        assertEquals(expected, out, run.err());
        for (int r = 0; r < 6; r++) {
            assertTrue(run.err().contains("[" + r + "] err" + r + "\n"), run.err());
        }
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldRunHostnameOnEverySlotWithEachNodeRunningItsShare() throws Exception {
        Run run = run(120, "-n", "3", "--hosts", "n1:2,n2:1", "hostname");

        assertEquals(0, run.exit(), run.err());
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        assertEquals(3, out.size(), out.toString());
        for (int r = 0; r < 3; r++) {
            assertTrue(out.get(r).startsWith("[" + r + "] "), out.toString());
        }
        // rank 1 ran on n1, rank 2 on n2: each node's proxy kept the output of its own rank
        assertTrue(hasRankLog(nodes.get(0), "rank-1.out"), "rank 1's output on n1");
        assertTrue(hasRankLog(nodes.get(1), "rank-2.out"), "rank 2's output on n2");
    }

    private static boolean hasRankLog(KarafNode node, String file) throws IOException {
        try (Stream<Path> logs = Files.walk(node.home.resolve("data/mpiproxy/logs"))) {
            return logs.anyMatch(p -> p.getFileName().toString().equals(file));
        }
    }

    @Test
    void shouldStageAProgramThatOnlyTheLauncherHasAndRunItEverywhere() throws Exception {
        Path local = work.resolve("mine-" + System.nanoTime());
        Files.writeString(local, "#!/bin/sh\necho \"staged rank $MPIPROXY_RANK: $1\"\n");
        local.toFile().setExecutable(true);

        Run run = run(120, "--stage", "-v", "--hosts", "n1:2,n2:1,n3:1", "-n", "4", local.toString(), "arg");

        assertEquals(0, run.exit(), run.err());
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        assertEquals(List.of("[0] staged rank 0: arg", "[1] staged rank 1: arg", "[2] staged rank 2: arg",
                "[3] staged rank 3: arg"), out, run.err());
        assertTrue(run.err().contains(" bytes) as sha256-"), run.err());

        // a second job finds it cached on every node
        Run again = run(120, "--stage", "--hosts", "n1:2,n2:1,n3:1", "-n", "4", local.toString(), "again");
        assertEquals(0, again.exit(), again.err());
        assertEquals(4, again.out().size(), again.out().toString());
    }

    @Test
    void shouldExitWithTheStatusOfThePlainRankThatFailedAndStopTheOthersAtOnce() throws Exception {
        // the others would sleep for an hour: the job ends (within the bound of a hang) only if the failure stops them
        Run run = run(STOP_BOUND_SECONDS, "--hosts", "n1:2,n2:2,n3:2", "-n", "6", "sh", "-c",
                "if [ \"$MPIPROXY_RANK\" = 3 ]; then exit 7; fi; exec sleep 3600");

        assertEquals(7, run.exit(), run.err());
        assertTrue(run.err().contains("rank 3 (n2 (127.0.0.12:"), run.err());
        assertTrue(run.err().contains("exited with status 7"), run.err());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldWaitForEveryPlainRankAfterRankZeroEnded() throws Exception {
        Run run = run(120, "--hosts", "n1:2,n2:1", "-n", "3", "sh", "-c",
                "if [ \"$MPIPROXY_RANK\" != 0 ]; then sleep 3; fi; echo done $MPIPROXY_RANK");

        assertEquals(0, run.exit(), run.err());
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        assertEquals(List.of("[0] done 0", "[1] done 1", "[2] done 2"), out, run.err());
    }

    @Test
    void shouldSayWhyARankCannotStartWhenItsNodeLacksTheProgram() throws Exception {
        Path local = work.resolve("only-here");
        Files.writeString(local, "#!/bin/sh\necho here\n");
        local.toFile().setExecutable(true);

        Run run = run(60, "--hosts", "n1:2,n2:1", "-n", "3", local.toString());

        assertEquals(127, run.exit(), run.err());
        assertTrue(run.err().contains("rank 1 (n1 (127.0.0.11:"), run.err());
        assertTrue(run.err().contains("could not be started: MPI_ERR_IO: no program 'only-here' in "), run.err());
        assertEquals(List.of(), run.out(), "rank 0 did not run either");
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldFailFastWithAuthenticationFailedForAnotherKey() throws Exception {
        Path otherKey = work.resolve("other.key");
        Files.deleteIfExists(otherKey);
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(otherKey);

        Process launcher = launch(List.of("--key-file", otherKey.toString()), null, "mpiprime", "1000");

        assertTrue(launcher.waitFor(120, TimeUnit.SECONDS), "launcher still runs");
        assertNotEquals(0, launcher.exitValue(), launcherErrors());
        assertTrue(launcherErrors().contains("authentication failed: the proxy could not verify a request signed with"
                + " key id 1"), launcherErrors());
        assertTrue(launcherErrors().contains("unknown: authentication failed"), launcherErrors());
    }

    @Test
    void shouldProbeWithStatusLeavingNoWarningOnTheProxies() throws Exception {
        ProcessBuilder status = new ProcessBuilder(java(), "-jar", cli.toString(), "status", "--key-file",
                key.toString(), "--node-map", nodeMap.toString(), "--hosts", "n1,n2,n3")
                .redirectErrorStream(true).redirectOutput(work.resolve("status.out").toFile());
        status.environment().put("JAVA_HOME", System.getProperty("java.home"));
        Process p = status.start();

        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "status still runs");
        String out = Files.readString(work.resolve("status.out"));
        assertEquals(0, p.exitValue(), out);
        assertEquals(3, count("proxy answers (v2, key accepted)", out), out);
        for (KarafNode node : nodes) {
            String log = Files.readString(node.home.resolve("data/log/karaf.log"));
            assertFalse(log.contains("world size 1 is not in 2..65535"), node.name + " logged the probe as a refusal");
        }
    }

    private static int count(String what, String in) {
        int n = 0;
        for (int i = in.indexOf(what); i >= 0; i = in.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void shouldFailAndLeaveNothingRunningWhenOneNodesRankIsKilled() throws Exception {
        // the one job over v1: no key, and the ranks' output stays on the nodes
        Process launcher = launch(List.of("--protocol", "v1"), null, "mpiprime", LONG_JOB_NUMBER);
        BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
        // rank 0 prints its own slice after every rank started
        assertEquals("[0] 2", out.readLine(), "first line of output");
        CompletableFuture<List<String>> rest = CompletableFuture.supplyAsync(() -> readAll(out));
        List<ProcessHandle> onN3 = nodes.get(2).ranks();
        assertEquals(2, onN3.size(), "ranks on n3");
        onN3.get(0).destroyForcibly();

        assertTrue(launcher.waitFor(120, TimeUnit.SECONDS), "launcher still runs");
        rest.get(10, TimeUnit.SECONDS);
        assertNotEquals(0, launcher.exitValue(), launcherErrors());
        assertTrue(launcherErrors().contains("exited with status"), launcherErrors());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldStopEveryRankOnEveryNodeOnSigint() throws Exception {
        Path jobFile = work.resolve("sigint.job");
        Process launcher = launch(jobFile, LONG_JOB_NUMBER);
        BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("[0] 2", out.readLine(), "first line of output");
        CompletableFuture<List<String>> rest = CompletableFuture.supplyAsync(() -> readAll(out));
        Properties job = new Properties();
        try (var in = Files.newBufferedReader(jobFile)) {
            job.load(in);
        }
        long rankZero = Long.parseLong(job.getProperty("rank0.pid"));
        assertFalse(ranksEverywhere().isEmpty(), "no ranks running before SIGINT");

        Process kill = new ProcessBuilder("sh", "-c", "kill -INT " + launcher.pid()).inheritIO().start();
        assertEquals(0, kill.waitFor());

        assertTrue(launcher.waitFor(STOP_BOUND_SECONDS, TimeUnit.SECONDS), "launcher still runs "
                + STOP_BOUND_SECONDS + " s after SIGINT");
        rest.get(10, TimeUnit.SECONDS);
        assertEquals(130, launcher.exitValue(), launcherErrors());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running after the launcher exited");
        assertFalse(ProcessHandle.of(rankZero).map(ProcessHandle::isAlive).orElse(false), "rank 0 still runs");
        // the job file stays and records how the job ended
        Properties ended = new Properties();
        try (var in = Files.newBufferedReader(jobFile)) {
            ended.load(in);
        }
        assertEquals("ended", ended.getProperty("state"), "job file state: " + ended);
        assertEquals("130", ended.getProperty("exit.status"), "job file exit status: " + ended);
        assertEquals("SIGINT", ended.getProperty("stop.reason"), "job file stop reason: " + ended);
    }

    @Test
    void shouldStopAJobEverywhereWithMpiproxyKill() throws Exception {
        Path jobFile = work.resolve("kill.job");
        Process launcher = launch(jobFile, LONG_JOB_NUMBER);
        BufferedReader out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
        assertEquals("[0] 2", out.readLine(), "first line of output");
        CompletableFuture<List<String>> rest = CompletableFuture.supplyAsync(() -> readAll(out));

        // every node lists its ranks of the running job over v2 (a rank may have finished its part)
        Process status = new ProcessBuilder(java(), "-jar", cli.toString(), "status", "--job-file", jobFile.toString(),
                "--wait", "20000")
                .redirectErrorStream(true).redirectOutput(work.resolve("status.out").toFile()).start();
        assertTrue(status.waitFor(120, TimeUnit.SECONDS), "mpiproxy status still runs");
        String statusText = read(work.resolve("status.out"));
        assertEquals(0, status.exitValue(), statusText);
        for (int rank = 1; rank <= 5; rank++) {
            assertTrue(java.util.regex.Pattern.compile("(?m)^" + rank + " +n[123] \\(127\\.0\\.0\\.1[123]:\\d+\\) +(running +\\d+ +0 +-|exited +\\d+ +0 +0)$")
                    .matcher(statusText).find(), "rank " + rank + " running (or done with its part) on a node:\n" + statusText);
        }

        ProcessBuilder killer = new ProcessBuilder(java(), "-jar", cli.toString(), "kill", "--job-file", jobFile.toString())
                .redirectErrorStream(true).redirectOutput(work.resolve("kill.out").toFile());
        Process kill = killer.start();
        assertTrue(kill.waitFor(STOP_BOUND_SECONDS, TimeUnit.SECONDS), "mpiproxy kill still runs");
        assertEquals(0, kill.exitValue(), read(work.resolve("kill.out")));

        // mpiproxy kill ends once the launcher has: this only bounds a hang
        assertTrue(launcher.waitFor(60, TimeUnit.SECONDS), "launcher still runs");
        rest.get(10, TimeUnit.SECONDS);
        assertEquals(143, launcher.exitValue(), launcherErrors());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldRunOnTheSlurmAllocationWithoutAHostfile() throws Exception {
        Path slurmScripts = Paths.get(System.getProperty("mpiproxy.itest.slurm"));
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                "the Slurm test starts slurmctld and slurmd and needs root; skipped as " + System.getProperty("user.name"));
        for (String command : List.of("slurmctld", "slurmd", "munged", "sbatch")) {
            Assumptions.assumeTrue(onPath(command), "the Slurm test needs " + command
                    + " (Debian: apt-get install munge slurmctld slurmd slurm-client; .ci/run installs them)");
        }
        Path slurm = work.resolve("slurm");
        Files.createDirectories(slurm);
        Map<String, String> env = new HashMap<>();
        env.put("SLURM_LOCAL_DIR", slurm.toString());
        env.put("NODES", "3");
        // four slots a node (the one-node MPICH run takes four; slurmd keeps the configured count)
        env.put("CPUS_PER_NODE", "4");
        int[] ports = freeTcpPorts(5);
        env.put("CTLD_PORT", Integer.toString(ports[0]));
        env.put("SLURMD_PORT_BASE", Integer.toString(ports[1] - 1));
        List<List<Path>> jobsBefore = new ArrayList<>();
        for (KarafNode node : nodes) {
            jobsBefore.add(jobDirectories(node));
        }
        try {
            assertEquals(0, script(slurmScripts.resolve("up.sh"), env, slurm.resolve("up.out"), 120),
                    "up.sh failed: " + read(slurm.resolve("up.out")));
            Path batch = slurm.resolve("job.sh");
            Files.writeString(batch, "#!/bin/sh\n"
                    + "# no hostfile, no --hosts: the launcher reads SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE\n"
                    + "echo \"nodes=$SLURM_JOB_NODELIST tasks=$SLURM_TASKS_PER_NODE\" >&2\n"
                    + "exec '" + java() + "' -jar '" + cli + "' run --key-file '" + key + "' --node-map '" + nodeMap + "' '"
                    + nodes.get(0).home.resolve("programs/mpiprime") + "' 100000\n");
            Path output = slurm.resolve("job.out");
            Path errors = slurm.resolve("job.err");
            ProcessBuilder sbatch = new ProcessBuilder("sbatch", "--wait", "-N", "3", "--ntasks-per-node=2",
                    "-o", output.toString(), "-e", errors.toString(), batch.toString())
                    .redirectErrorStream(true).redirectOutput(slurm.resolve("sbatch.out").toFile());
            sbatch.environment().put("SLURM_CONF", slurm.resolve("etc/slurm.conf").toString());
            sbatch.environment().put("PATH", System.getenv("PATH") + ":/usr/sbin");
            sbatch.environment().put("JAVA_HOME", System.getProperty("java.home"));
            Process job = sbatch.start();
            assertTrue(job.waitFor(180, TimeUnit.SECONDS), "sbatch --wait still runs");
            assertEquals(0, job.exitValue(), "sbatch: " + read(slurm.resolve("sbatch.out")) + "\njob stderr: "
                    + read(errors));

            List<String> lines = Files.readAllLines(output);
            assertEquals("[0] 9592 primes below 100000", lines.get(lines.size() - 1));
            assertEquals(9593, lines.size());
            assertTrue(read(errors).contains("nodes=n[1-3] tasks=2(x3)"), read(errors));
            assertEquals(List.of("rank-1.out"), newRankLogs(nodes.get(0), jobsBefore.get(0)));
            assertEquals(List.of("rank-2.out", "rank-3.out"), newRankLogs(nodes.get(1), jobsBefore.get(1)));
            assertEquals(List.of("rank-4.out", "rank-5.out"), newRankLogs(nodes.get(2), jobsBefore.get(2)));

            if (TestCluster.hasMpicc()) {
                // the MPICH programs, exactly as library programs: every slot of the allocation, their real world
                Path bin = Files.createDirectories(slurm.resolve("bin"));
                for (String program : SLURM_MPICH_PROGRAMS) {
                    Path binary = TestCluster.compileMpi(program, bin);
                    for (KarafNode node : nodes) {
                        Files.copy(binary, node.home.resolve("programs").resolve(program),
                                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    }
                }
                runMpichUnderSbatch(slurm, bin, sbatch.environment(), 3, 2);
                runMpichUnderSbatch(slurm, bin, sbatch.environment(), 1, 4);
            }
        } finally {
            script(slurmScripts.resolve("down.sh"), env, slurm.resolve("down.out"), 60);
        }
    }

    private static final List<String> SLURM_MPICH_PROGRAMS = List.of("hello", "ring", "collectives", "abort");

    /**
     * Runs every MPICH test program with 'mpiproxy run' in one batch job of {@code nodes} nodes and
     * {@code perNode} tasks each, and checks each program's output and exit status.
     */
    private void runMpichUnderSbatch(Path slurm, Path bin, Map<String, String> sbatchEnv, int nodes, int perNode)
            throws Exception {
        int size = nodes * perNode;
        Path dir = Files.createDirectories(slurm.resolve("mpich-" + nodes + "x" + perNode));
        StringBuilder script = new StringBuilder("#!/bin/sh\n");
        for (String program : SLURM_MPICH_PROGRAMS) {
            script.append("'").append(java()).append("' -jar '").append(cli).append("' run --key-file '")
                    .append(key).append("' --node-map '").append(nodeMap).append("' '").append(bin.resolve(program))
                    .append(program.equals("ring") ? "' 20" : "'").append(" > '").append(dir).append('/')
                    .append(program).append(".out' 2> '").append(dir).append('/').append(program)
                    .append(".err'\necho \"").append(program).append(" $?\" >> '").append(dir).append("/codes'\n");
        }
        Path batch = dir.resolve("mpich.sh");
        Files.writeString(batch, script.toString());
        ProcessBuilder sbatch = new ProcessBuilder("sbatch", "--wait", "-N", Integer.toString(nodes),
                "--ntasks-per-node=" + perNode, "-o", dir.resolve("job.out").toString(), "-e",
                dir.resolve("job.err").toString(), batch.toString()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("sbatch.out").toFile());
        sbatch.environment().putAll(sbatchEnv);
        Process job = sbatch.start();
        assertTrue(job.waitFor(300, TimeUnit.SECONDS), "sbatch --wait of the MPICH jobs still runs");
        StringBuilder errs = new StringBuilder(read(dir.resolve("job.err")));
        for (String program : SLURM_MPICH_PROGRAMS) {
            errs.append(read(dir.resolve(program + ".err")));
        }
        assertEquals(0, job.exitValue(), "sbatch: " + read(dir.resolve("sbatch.out")) + "\n" + errs);
        assertEquals(List.of("hello 0", "ring 0", "collectives 0", "abort 7"), Files.readAllLines(dir.resolve("codes")),
                errs.toString());
        List<String> hellos = new ArrayList<>(Files.readAllLines(dir.resolve("hello.out")));
        Collections.sort(hellos);
        List<String> expected = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            expected.add("[" + r + "] hello from rank " + r + " of " + size);
        }
        assertEquals(expected, hellos, errs.toString());
        assertEquals(List.of("[0] token " + 20 * size + " after 20 rounds of " + size + " ranks"),
                Files.readAllLines(dir.resolve("ring.out")), errs.toString());
        assertEquals(List.of("[0] collectives of " + size + " ranks: ok"),
                Files.readAllLines(dir.resolve("collectives.out")), errs.toString());
        assertTrue(read(dir.resolve("abort.err")).contains("rank 1 called MPI_Abort (exit code 7)"), errs.toString());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH") + ":/usr/sbin:/usr/bin";
        for (String dir : path.split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Paths.get(dir, command))) {
                return true;
            }
        }
        return false;
    }

    private static int script(Path script, Map<String, String> env, Path log, long timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder("bash", script.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process p = builder.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(script + " did not finish within " + timeoutSeconds + " s: " + read(log));
        }
        return p.exitValue();
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "(no " + file.getFileName() + ")";
        } catch (IOException e) {
            return "(" + e + ")";
        }
    }

    /** @return n free TCP ports; element 1.. are consecutive (slurmd ports follow a base) */
    private static int[] freeTcpPorts(int n) throws IOException {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = 20000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(20000);
            int[] ports = new int[n];
            boolean free = true;
            for (int i = 0; i < n && free; i++) {
                ports[i] = base + i;
                try (java.net.ServerSocket s = new java.net.ServerSocket()) {
                    s.bind(new java.net.InetSocketAddress("0.0.0.0", ports[i]));
                } catch (IOException e) {
                    free = false;
                }
            }
            if (free) {
                return ports;
            }
        }
        throw new IOException("no " + n + " consecutive free TCP ports found");
    }

    private static List<Path> jobDirectories(KarafNode node) throws IOException {
        Path logs = node.home.resolve("data/mpiproxy/logs");
        if (!Files.isDirectory(logs)) {
            return List.of();
        }
        try (Stream<Path> dirs = Files.list(logs)) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("job-")).toList();
        }
    }

    /** @return the {@code .out} files of the node's jobs that are not in {@code before}, sorted */
    private static List<String> newRankLogs(KarafNode node, List<Path> before) throws IOException {
        List<String> names = new ArrayList<>();
        for (Path job : jobDirectories(node)) {
            if (before.contains(job)) {
                continue;
            }
            try (Stream<Path> files = Files.list(job)) {
                files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".out")).forEach(names::add);
            }
        }
        Collections.sort(names);
        return names;
    }

    private static List<String> readAll(Process process) {
        return readAll(new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)));
    }

    private static List<String> readAll(BufferedReader reader) {
        List<String> lines = new ArrayList<>();
        try {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return lines;
    }

    private static List<Integer> primesBelow(int n) {
        boolean[] composite = new boolean[n];
        List<Integer> primes = new ArrayList<>();
        for (int i = 2; i < n; i++) {
            if (!composite[i]) {
                primes.add(i);
                for (long j = (long) i * i; j < n; j += i) {
                    composite[(int) j] = true;
                }
            }
        }
        return primes;
    }
}
