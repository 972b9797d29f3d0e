package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job file after the job: its end recorded, read by status and kill without asking any node. */
class JobFileTest {

    /** How long a wait may take before the test counts it as hung; every wait here ends with its event. */
    private static final long CEILING_SECONDS = 60;

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Map<String, String> env = new HashMap<>();
    /** The job's node: a UDP socket that never answers, so the test sees whatever is sent to it. */
    private DatagramChannel node;
    private int nodePort;

    @BeforeEach
    void setUp() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        env.put("MPIPROXY_KEY_FILE", key.toString());
        node = DatagramChannel.open();
        node.bind(new InetSocketAddress("127.0.0.1", 0));
        node.configureBlocking(false);
        nodePort = ((InetSocketAddress) node.getLocalAddress()).getPort();
    }

    @AfterEach
    void closeNode() throws Exception {
        node.close();
    }

    /** @return how many datagrams reached the node since the last call */
    private int datagramsAtTheNode() throws Exception {
        int n = 0;
        while (node.receive(ByteBuffer.allocate(2048)) != null) {
            n++;
        }
        return n;
    }

    private int run(String... args) {
        out.reset();
        err.reset();
        return MpiproxyCommand.execute(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldKeepTheJobFileWithEachRanksExitStatusAndShowItWithoutAskingTheNodes() throws Exception {
        Path program = dir.resolve("rank0");
        // a library-like rank 0: marks init, reports rank 1 exited 5, exits 0
        Files.writeString(program, "#!/bin/sh\n: > \"$MPIPROXY_INIT_FILE\"\nprintf '0 0\\n1 5\\n' > \"$MPIPROXY_STATUS_FILE\"\n");
        assertTrue(program.toFile().setExecutable(true));
        Path file = dir.resolve("job");

        assertEquals(5, run("run", "-q", "--protocol", "v1", "--job-file", file.toString(), "--hosts", "127.0.0.1:2",
                "--port", Integer.toString(nodePort), program.toString()), err());

        datagramsAtTheNode();
        JobFile job = JobFile.read(file);
        assertEquals(5, job.end().exitStatus());
        assertEquals(List.of(0, 5), job.end().rankStatuses());
        assertEquals(null, job.end().stopReason());
        // a v1 job has no job id: it is named by its file
        String id = "of " + file;
        String at = job.end().at().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();

        // the node never answers: a probe would say so and exit 1
        assertEquals(0, run("status", "--job-file", file.toString()), err());
        assertEquals("job " + id + " ENDED at " + at + " (exit status 5)\n"
                + "rank 0 (here): ENDED, exit status 0\n"
                + "rank 1 (127.0.0.1:" + nodePort + ":0): ENDED, exit status 5\n", out());

        assertEquals(0, run("kill", "--job-file", file.toString()), err());
        assertEquals("mpiproxy: job " + id + " already ended at " + at + " (exit status 5); nothing to stop\n", out());
        assertEquals("", err());
        assertEquals(0, datagramsAtTheNode());
    }

    @Test
    void shouldRecordTheStopReasonOfATimedOutJob() throws Exception {
        Path program = dir.resolve("sleeper");
        Files.writeString(program, "#!/bin/sh\nexec sleep 60\n");
        assertTrue(program.toFile().setExecutable(true));
        Path file = dir.resolve("job");

        assertEquals(124, run("run", "-q", "--timeout", "1", "--grace", "1", "--job-file", file.toString(), "--hosts",
                "127.0.0.1:1", program.toString()), err());

        assertEquals(0, run("status", "--job-file", file.toString()), err());
        assertTrue(out().contains(" (exit status 124, stopped by timeout)\nrank 0 (here): ENDED, exit status 143"
                + " (signal 15)\n"), out());
    }

    @Test
    void shouldProbeTheNodesAndSayTheLauncherIsGoneForARunningStateFileLeftBehind() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path file = dir.resolve("job");
        Files.writeString(file, "protocol=v1\nlauncher.pid=" + gone.pid() + "\nrank0.pid=" + gone.pid()
                + "\nhost.port=" + JobRunner.freeUdpPort() + "\nworld.size=2\nrank.1=127.0.0.1:" + nodePort + ":0 n1\nstate=running\n");

        assertEquals(1, run("status", "--job-file", file.toString(), "--wait", "500"), err());
        assertEquals("launcher pid " + gone.pid() + ": not running (it ended without recording the job's end, e.g."
                + " killed): asking the nodes\nrank 0 pid " + gone.pid() + ": not running\n"
                + "node n1 (127.0.0.1:" + nodePort + "): no answer\n", out());
        assertTrue(datagramsAtTheNode() > 0);

        assertEquals(1, run("kill", "--job-file", file.toString(), "--wait", "1"), err());
        assertTrue(out().startsWith("launcher " + gone.pid() + " is not running (it ended without recording the job's"
                + " end, e.g. killed): stopping the job itself\n"), out());
        assertTrue(out().contains("rank 1 (n1 (127.0.0.1:" + nodePort + ":0)) no TERMINATE reply"), out());
        assertTrue(datagramsAtTheNode() > 0);
    }

    @Test
    void shouldShowARunningJobAsBeforeAndRecordThatKillStoppedIt() throws Exception {
        Path program = dir.resolve("sleeper");
        Files.writeString(program, "#!/bin/sh\necho started\nexec sleep 60\n");
        assertTrue(program.toFile().setExecutable(true));
        Path file = dir.resolve("job");
        ProcessBuilder builder = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), MpiproxyCommand.class.getName(), "run", "--job-file",
                file.toString(), "--hosts", "127.0.0.1:1", program.toString());
        builder.environment().putAll(env);
        try (WatchService watcher = dir.getFileSystem().newWatchService()) {
            dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE);
            runAndKill(builder, watcher, file);
        }
    }

    private void runAndKill(ProcessBuilder builder, WatchService watcher, Path file) throws Exception {
        Process launcher = builder.start();
        try {
            BufferedReader lines = new BufferedReader(new InputStreamReader(launcher.getInputStream(),
                    StandardCharsets.UTF_8));
            assertEquals("[0] started", lines.readLine());
            // the launcher writes the file once rank 0 has started, so maybe just after its first line
            awaitCreated(watcher, file);
            JobFile job = JobFile.read(file);
            assertEquals(null, job.end());
            String id = JobRunner.Job.hex(job.jobId());

            assertEquals(0, run("status", "--job-file", file.toString()), err());
            assertEquals("job " + id + " (v2)\nlauncher pid " + launcher.pid() + ": running\nrank 0 pid "
                    + job.rankZeroPid() + ": running\n", out());

            assertEquals(0, run("kill", "--job-file", file.toString(), "--wait", Long.toString(CEILING_SECONDS)),
                    err());
            assertTrue(launcher.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
            assertEquals(143, launcher.exitValue());
            String at = JobFile.read(file).endText();
            assertEquals("stopping launcher " + launcher.pid() + "\nthe launcher stopped the job: it ended " + at
                    + "\n", out());
            assertTrue(at.endsWith(" (exit status 143, stopped by 'mpiproxy kill')"), at);
            assertEquals("kill", JobFile.read(file).end().stopReason());
        } finally {
            launcher.destroyForcibly();
        }
    }

    /** Waits until {@code file} exists, looking again whenever something is created in its directory. */
    private static void awaitCreated(WatchService watcher, Path file) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CEILING_SECONDS);
        while (!Files.exists(file)) {
            WatchKey key = watcher.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            assertNotNull(key, "no " + file + " in " + CEILING_SECONDS + " s");
            key.pollEvents();
            key.reset();
        }
    }

    @Test
    void shouldNotTakeALaterProcessWithTheLaunchersPidForTheLauncher() throws Exception {
        Path file = dir.resolve("job");
        long self = ProcessHandle.current().pid();
        Files.writeString(file, "protocol=v1\nlauncher.pid=" + self + "\nlauncher.started=2001-01-01T00:00:00Z\n"
                + "rank0.pid=" + self + "\nrank0.started=2001-01-01T00:00:00Z\nhost.port=4000\nworld.size=1\n");

        JobFile job = JobFile.read(file);

        assertEquals(false, job.launcherRuns());
        assertEquals(java.util.Optional.empty(), job.rankZero());
        Files.writeString(file, "protocol=v1\nlauncher.pid=" + self + "\nlauncher.started="
                + JobFile.startOf(ProcessHandle.current()) + "\nrank0.pid=" + self + "\nhost.port=4000\nworld.size=1\n");
        assertEquals(true, JobFile.read(file).launcherRuns());
        assertTrue(JobFile.read(file).rankZero().isPresent());
    }

    @Test
    void shouldReadAFileWithoutStateAsARunningJobAndRefuseAnUnknownState() throws Exception {
        Path file = dir.resolve("job");
        Files.writeString(file, "protocol=v1\nlauncher.pid=10\nrank0.pid=11\nhost.port=4000\nworld.size=1\n");
        assertEquals(null, JobFile.read(file).end());
        assertEquals(null, JobFile.read(file).launcherStarted());

        Files.writeString(file, "protocol=v1\nlauncher.pid=10\nrank0.pid=11\nhost.port=4000\nworld.size=1\n"
                + "state=done\n");
        assertEquals(2, run("status", "--job-file", file.toString()));
        assertEquals("mpiproxy: job file " + file + " is malformed: state=done is neither running nor ended\n", err());
    }

    @Test
    void shouldWriteAndReadAJobRunWithACredentialWhichNamesNoKeyFile() throws Exception {
        Path file = dir.resolve("job");
        JobFile job = new JobFile(10, 11, 4000, List.of(new Placement("127.0.0.1", 6660, 0, "n1")), "v2",
                0x1122334455667788L, null, null, null, null);
        job.write(file);
        assertEquals(false, Files.readString(file).contains("key.files"));
        JobFile read = JobFile.read(file);
        assertEquals(0x1122334455667788L, read.jobId());
        assertEquals(null, read.keySpec());
    }

    @Test
    void shouldReplaceTheFileAtomicallySoAConcurrentReaderNeverSeesPartOfIt() throws Exception {
        Path file = dir.resolve("job");
        List<Placement> many = new java.util.ArrayList<>();
        for (int r = 1; r < 2000; r++) {
            many.add(new Placement("127.0.0.1", 6660, 0, "node-" + r));
        }
        JobFile job = new JobFile(1, 2, 4000, List.copyOf(many), "v1", 0, null, null, null, null);
        job.write(file);
        String first = Files.readString(file);
        AtomicReference<String> bad = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread reader = new Thread(() -> {
            while (bad.get() == null && !done.get()) {
                try {
                    JobFile.read(file);
                } catch (Exception e) {
                    bad.set(e.toString());
                }
            }
        });
        reader.start();
        try {
            for (int i = 0; i < 200; i++) {
                job.write(file);
            }
        } finally {
            done.set(true);
            reader.join();
        }
        assertEquals(null, bad.get());
        // a new file renamed over the old one, not the old one rewritten in place: a reader that
        // opened the old one still reads all of it
        try (java.io.InputStream old = Files.newInputStream(file)) {
            job.ended(new JobFile.End(java.time.Instant.now(), 0, null, java.util.Collections.nCopies(2000, 0)))
                    .write(file);
            assertEquals(first, new String(old.readAllBytes(), StandardCharsets.UTF_8));
        }
        assertTrue(Files.readString(file).contains("state=ended\n"));
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("job", "mpiproxy.key"), files.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }
}
