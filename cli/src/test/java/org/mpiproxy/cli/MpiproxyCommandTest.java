package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MpiproxyCommandTest {

    @TempDir
    Path dir;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Map<String, String> env = new HashMap<>();

    @org.junit.jupiter.api.BeforeEach
    void key() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        env.put("MPIPROXY_KEY_FILE", key.toString());
    }

    private int run(String... args) {
        return MpiproxyCommand.execute(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldRefuseV2WithoutAUsableKeyFile() throws Exception {
        assertEquals(2, run("run", "--key-file", dir.resolve("missing.key").toString(), "--hosts", "127.0.0.1:2",
                "mpiprime", "10"));
        assertTrue(err().contains("missing.key"), err());
        Path open = dir.resolve("open.key");
        Files.writeString(open, "00".repeat(32) + "\n");
        Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(2, run("run", "--key-file", open.toString(), "--hosts", "127.0.0.1:2", "mpiprime", "10"));
        assertTrue(err().contains("it must be rw-------"), err());
    }

    @Test
    void shouldRefuseAWeakKeyAsTheNodesDo() throws Exception {
        Path zero = dir.resolve("zero.key");
        Files.writeString(zero, "00".repeat(32) + "\n");
        Files.setPosixFilePermissions(zero, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

        assertEquals(2, run("run", "--key-file", zero.toString(), "--hosts", "127.0.0.1:2", "mpiprime", "10"));
        assertTrue(err().contains("key file " + zero + " holds a weak key: it is all zero"), err());
    }

    @Test
    void shouldGiveRankZeroTheKeyAJobIdAndItsWorldOverV2() throws Exception {
        Path program = dir.resolve("v2-world");
        Files.writeString(program, "#!/bin/sh\necho \"protocol=$MPIPROXY_PROTOCOL key=$MPIPROXY_KEY_FILE"
                + " id=$MPIPROXY_JOB_ID rank=$MPIPROXY_RANK/$MPIPROXY_SIZE pmi=$PMI_RANK/$PMI_SIZE"
                + " channel=[$MPIPROXY_CHANNEL] pipe=[$MPIPROXY_OUTPUT_PIPE]\"\n");
        assertTrue(program.toFile().setExecutable(true));
        // a launcher run from inside a rank does not pass the rank's own channel on
        env.put("MPIPROXY_CHANNEL", "/elsewhere/rank-1.chan");

        assertEquals(0, run("run", "-q", "--hosts", "127.0.0.1:1", program.toString()));

        String line = out.toString(StandardCharsets.UTF_8);
        assertTrue(line.matches("\\[0\\] protocol=v2 key=" + java.util.regex.Pattern.quote(
                dir.resolve("mpiproxy.key").toString()) + " id=[0-9a-f]{16} rank=0/1 pmi=0/1 channel=\\[\\] pipe=\\[\\]\n"),
                line);
    }

    @Test
    void shouldRefuseAKeyFileOverV1AndUnknownOptions() {
        assertEquals(2, run("run", "--protocol", "v1", "--key-file", "k", "--hosts", "127.0.0.1", "p"));
        assertTrue(err().contains("--key-file applies to --protocol v2 only"), err());
        assertEquals(2, run("run", "--bind", "socket", "--hosts", "127.0.0.1", "p"));
        assertEquals(2, run("run", "--protocol", "v3", "p"));
        assertEquals(2, run("run", "--no-such-option", "p"));
    }

    @Test
    void shouldReportAMalformedSlurmAllocationAndHostfileLine() throws Exception {
        env.put("SLURM_JOB_NODELIST", "n[1-3");
        assertEquals(2, run("run", "mpiprime", "10"));
        assertTrue(err().contains("SLURM_JOB_NODELIST='n[1-3': '[' is not closed at position 2"), err());

        Path hostfile = dir.resolve("hosts");
        Files.writeString(hostfile, "127.0.0.1:6660:0\n127.0.0.1:6660\n");
        assertEquals(2, run("run", "--hostfile", hostfile.toString(), "mpiprime", "10"));
        assertTrue(err().contains(hostfile + " line 2: mixes FreeNOS lines"), err());
    }

    @Test
    void shouldRequireAVariableValueForMinusX() {
        assertEquals(2, run("run", "-x", "NOT_SET_ANYWHERE", "--hosts", "127.0.0.1", "p"));
        assertTrue(err().contains("-x NOT_SET_ANYWHERE: not set here"), err());
        assertEquals(2, run("run", "-x", "1BAD=2", "--hosts", "127.0.0.1", "p"));
    }

    @Test
    void shouldRunRankZeroAloneWithItsWorldInTheEnvironmentAndTagItsOutput() throws Exception {
        Path program = dir.resolve("show-world");
        Files.writeString(program, "#!/bin/sh\necho \"hosts=[$MPIPROXY_HOSTS] args=$*\"\necho oops >&2\nexit 3\n");
        assertTrue(program.toFile().setExecutable(true));

        int status = run("run", "-q", "-x", "EXTRA=1", "--hosts", "127.0.0.1:1", program.toString(), "a", "b");

        assertEquals(3, status);
        assertEquals("[0] hosts=[] args=a b\n", out.toString(StandardCharsets.UTF_8));
        assertTrue(err().contains("[0] oops\n"), err());
        assertTrue(err().contains("mpiproxy: rank 0 (here) exited with status 3"), err());
    }

    @Test
    void shouldStopRankZeroOnTimeoutAndExitWith124() throws Exception {
        Path program = dir.resolve("sleeper");
        Path printed = dir.resolve("printed");
        Files.writeString(program, "#!/bin/sh\necho started\nprintf 'half a li'\n: > '" + printed
                + "'\nexec sleep 60\n");
        assertTrue(program.toFile().setExecutable(true));
        // the job's clock stands still until the program has printed its two lines, then moves 1 s
        // at each reading: the stop follows that event, not the machine's speed
        long base = System.nanoTime();
        java.util.concurrent.atomic.AtomicInteger readAfterPrint = new java.util.concurrent.atomic.AtomicInteger();
        java.util.function.LongSupplier clock = () -> Files.exists(printed)
                ? base + java.util.concurrent.TimeUnit.SECONDS.toNanos(readAfterPrint.incrementAndGet()) : base;

        int status = MpiproxyCommand.execute(
                new String[] {"run", "--timeout", "5", "--grace", "1", "--hosts", "127.0.0.1:1", program.toString()},
                env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                clock);

        assertEquals(124, status, err());
        assertTrue(readAfterPrint.get() >= 5, "stopped before the job's clock reached the time limit");
        assertEquals("[0] started\n[0] half a li [mpiproxy: line cut]\n", out.toString(StandardCharsets.UTF_8));
        assertTrue(err().contains("mpiproxy: stopping the job (--timeout 5 s)"), err());
        assertTrue(err().contains("rank 0 (here) exited with status 143 (signal 15)"), err());
    }

    @Test
    void shouldNotWaitForANodeThatDoesNotAnswer() throws Exception {
        Path program = dir.resolve("no-start");
        // a rank 0 whose Mpi.init fails after it began
        Files.writeString(program, "#!/bin/sh\n: > \"$MPIPROXY_INIT_FILE\"\necho 'cannot start the job' >&2\nexit 1\n");
        assertTrue(program.toFile().setExecutable(true));
        try (java.nio.channels.DatagramChannel silent = java.nio.channels.DatagramChannel.open()) {
            silent.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int port = ((java.net.InetSocketAddress) silent.getLocalAddress()).getPort();
            long start = System.nanoTime();

            int status = run("run", "--hosts", "127.0.0.1:2", "--port", Integer.toString(port), program.toString());

            long seconds = java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
            assertEquals(127, status, err());
            assertEquals("", out.toString(StandardCharsets.UTF_8), "rank 0 does not start when a rank cannot");
            // the probe's wait at most, never the wait for the EXEC replies of a node given up as dead
            assertTrue(seconds < V2Control.DEAD_AFTER.toSeconds(), "took " + seconds + " s");
            assertTrue(err().contains("rank 1 (127.0.0.1:" + port + ":0) unknown: its node's proxy does not answer"),
                    err());
        }
    }

    /** A rank 0 that does what the library does under the launcher: marks init, writes every rank's status. */
    private Path libraryLikeRankZero(String name) throws Exception {
        Path program = dir.resolve(name);
        Files.writeString(program, "#!/bin/sh\n: > \"$MPIPROXY_INIT_FILE\"\necho \"hosts=[$MPIPROXY_HOSTS]\"\n"
                + "r=0; for h in 0 $(echo \"$MPIPROXY_HOSTS\" | tr , ' '); do echo \"$r 0\"; r=$((r+1)); done"
                + " > \"$MPIPROXY_STATUS_FILE\"\n");
        assertTrue(program.toFile().setExecutable(true));
        return program;
    }

    @Test
    void shouldTakeMinusNpAsMpiexecDoes() throws Exception {
        Path program = libraryLikeRankZero("world");

        // over v1 rank 0 starts the ranks itself: the launcher's part is its world
        assertEquals(0, run("run", "-q", "--protocol", "v1", "-np", "1", "--hosts", "127.0.0.1:2", program.toString()),
                err());
        assertEquals(0, run("run", "-q", "--protocol", "v1", "-np=2", "--hosts", "127.0.0.1:2", program.toString()),
                err());
        assertEquals(0, run("run", "-q", "--protocol", "v1", "--np", "1", "--hosts", "127.0.0.1:2", program.toString()),
                err());

        assertEquals("[0] hosts=[]\n[0] hosts=[127.0.0.1:6660:0]\n[0] hosts=[]\n", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldRefuseAWorldOfNoRanksAndNodesOfNoRanks() {
        assertEquals(2, run("run", "-n", "0", "--hosts", "127.0.0.1:2", "p"));
        assertTrue(err().contains("mpiproxy: -n 0: a world has at least 1 rank (rank 0); leave -n out for one rank"
                + " per slot\n"), err());
        assertEquals(2, run("run", "-np", "0", "--hosts", "127.0.0.1:2", "p"));
        assertEquals(2, run("run", "--np=-1", "--hosts", "127.0.0.1:2", "p"));
        assertTrue(err().contains("mpiproxy: -n -1: a world has at least 1 rank"), err());
        assertEquals(2, run("run", "--ppn", "0", "--hosts", "127.0.0.1:2", "p"));
        assertTrue(err().contains("mpiproxy: --ppn 0: a node runs at least 1 rank"), err());
    }

    @Test
    void shouldRefuseMoreRanksThanSlotsUnlessOversubscribing() throws Exception {
        Path program = libraryLikeRankZero("world");

        assertEquals(2, run("run", "-n", "3", "--hosts", "127.0.0.1:2", program.toString()));
        assertTrue(err().contains("mpiproxy: -n 3 is more ranks than the 2 slots of 127.0.0.1:2 (2); give more slots,"
                + " or --oversubscribe to put several ranks on one slot\n"), err());
        assertEquals("", out.toString(StandardCharsets.UTF_8), "nothing ran");

        assertEquals(0, run("run", "-q", "--protocol", "v1", "-n", "3", "--oversubscribe", "--hosts", "127.0.0.1:2",
                program.toString()), err());
        assertEquals("[0] hosts=[127.0.0.1:6660:0,127.0.0.1:6660:0]\n", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldSayOnceThatAPlainProgramRanAsRankZeroOnlyOverV1AndExitNonZero() throws Exception {
        Path program = dir.resolve("hostname");
        Files.writeString(program, "#!/bin/sh\necho node1\n");
        assertTrue(program.toFile().setExecutable(true));
        try (java.nio.channels.DatagramChannel silent = java.nio.channels.DatagramChannel.open()) {
            silent.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            String port = Integer.toString(((java.net.InetSocketAddress) silent.getLocalAddress()).getPort());

            assertEquals(1, run("run", "--protocol", "v1", "-n", "3", "--hosts", "127.0.0.1:3", "--port", port,
                    program.toString()));

            assertEquals("[0] node1\n", out.toString(StandardCharsets.UTF_8));
            String message = "mpiproxy: hostname ran as rank 0 only: over v1 ranks 1..2 are started by the"
                    + " program's own Mpi.init (the org.mpiproxy.mpi library), which it never called; protocol v2 (the"
                    + " default) starts any program on every slot\n";
            assertEquals(1, err().split(java.util.regex.Pattern.quote(message), -1).length - 1, err());
            assertTrue(!err().contains("does not answer") && !err().contains("terminating"),
                    "no rank was started, so none is terminated: " + err());
            err.reset();

            Path fails = dir.resolve("fails");
            Files.writeString(fails, "#!/bin/sh\nexit 3\n");
            assertTrue(fails.toFile().setExecutable(true));
            assertEquals(3, run("run", "-q", "--protocol", "v1", "-n", "2", "--hosts", "127.0.0.1:3", "--port", port,
                    fails.toString()), "rank 0's own failure wins");
            assertTrue(err().contains("mpiproxy: fails ran as rank 0 only: over v1 rank 1 is started by"), err());
        }
    }

    @Test
    void shouldRunAPlainProgramAloneAsAWorldOfOne() throws Exception {
        Path program = dir.resolve("hostname");
        Files.writeString(program, "#!/bin/sh\necho node1\n");
        assertTrue(program.toFile().setExecutable(true));

        assertEquals(0, run("run", "-n", "1", "--hosts", "127.0.0.1:3", program.toString()));

        assertEquals("[0] node1\n", out.toString(StandardCharsets.UTF_8));
        assertTrue(!err().contains("rank 0 only"), err());
    }

    @Test
    void shouldSayWhereAMissingJobFileComesFrom() {
        String missing = dir.resolve("job").toString();
        String message = "mpiproxy: job file " + missing + " does not exist (written by 'mpiproxy run --job-file "
                + missing + "' when the job starts, and kept with the job's end when it ends)\n";

        assertEquals(2, run("status", "--job-file", missing));
        assertEquals(message, err());
        err.reset();
        assertEquals(2, run("kill", "--job-file", missing));
        assertEquals(message, err());
    }

    @Test
    void shouldNameTheNodeAndSayNothingListensOnItsPortWithinAFewSeconds() throws Exception {
        Path program = dir.resolve("no-start");
        // a library program whose Mpi.init failed: it got as far as starting ranks
        Files.writeString(program, "#!/bin/sh\n: > \"$MPIPROXY_INIT_FILE\"\nexit 1\n");
        assertTrue(program.toFile().setExecutable(true));
        int port;
        try (java.nio.channels.DatagramChannel gone = java.nio.channels.DatagramChannel.open()) {
            gone.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            port = ((java.net.InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        long start = System.nanoTime();

        int status = run("run", "--hosts", "127.0.0.1:2", "--port", Integer.toString(port), program.toString());

        long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(127, status, err());
        assertTrue(millis < 5000, "took " + millis + " ms");
        assertTrue(err().contains("rank 1 (127.0.0.1:" + port + ":0) unknown: no proxy answers at 127.0.0.1:" + port
                + ": nothing listens on that UDP port"), err());
    }

    @Test
    void shouldSayAuthenticationFailedForAProxyThatRefusesTheKeyWithinAFewSeconds() throws Exception {
        Path program = dir.resolve("no-start");
        // a library program whose Mpi.init failed: it got as far as starting ranks
        Files.writeString(program, "#!/bin/sh\n: > \"$MPIPROXY_INIT_FILE\"\nexit 1\n");
        assertTrue(program.toFile().setExecutable(true));
        try (java.nio.channels.DatagramChannel proxy = java.nio.channels.DatagramChannel.open()) {
            proxy.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int port = ((java.net.InetSocketAddress) proxy.getLocalAddress()).getPort();
            Thread refusing = new Thread(() -> refuseEverything(proxy));
            refusing.setDaemon(true);
            refusing.start();
            long start = System.nanoTime();

            int status = run("run", "--hosts", "127.0.0.1:2", "--port", Integer.toString(port), program.toString());

            long millis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(127, status, err());
            assertTrue(millis < 5000, "took " + millis + " ms");
            assertTrue(err().contains("rank 1 (127.0.0.1:" + port + ":0) unknown: authentication failed: the proxy"
                    + " could not verify a request signed with key id 1"), err());
        }
    }

    /** A v2 proxy with another key, as far as the launcher can tell: every request gets a refusal. */
    private static void refuseEverything(java.nio.channels.DatagramChannel proxy) {
        java.nio.ByteBuffer in = java.nio.ByteBuffer.allocate(2048);
        java.nio.ByteBuffer out = java.nio.ByteBuffer.allocate(64);
        try {
            while (true) {
                java.net.SocketAddress from = proxy.receive(in.clear());
                int n = org.mpiproxy.protocol.V2RefusalDescriptor.put(in, 0,
                        org.mpiproxy.protocol.V2RefusalDescriptor.REASON_NOT_VERIFIED, out.clear(), 0);
                proxy.send(out.limit(n).position(0), from);
            }
        } catch (java.io.IOException e) {
            // closed: the test is over
        }
    }

    @Test
    void shouldReadAV2JobFile() throws Exception {
        Path file = dir.resolve("job2");
        Files.writeString(file, "protocol=v2\njob.id=00000000000000ff\nkey.files=/k\nlauncher.pid=10\nrank0.pid=11\n"
                + "host.port=4000\nworld.size=2\nrank.1=127.0.0.11:6660:0 n1\n");
        JobFile job = JobFile.read(file);
        assertTrue(job.v2());
        assertEquals(255, job.jobId());
        assertEquals("/k", job.keySpec());
    }

    @Test
    void shouldReadAJobFile() throws Exception {
        Path file = dir.resolve("job");
        Files.writeString(file, "protocol=v1\nlauncher.pid=10\nrank0.pid=11\nhost.port=4000\nworld.size=3\n"
                + "rank.1=127.0.0.11:6660:0 n1\nrank.2=127.0.0.12:6661:1 n2\n");

        JobFile job = JobFile.read(file);

        assertEquals(10, job.launcherPid());
        assertEquals(4000, job.hostPort());
        assertEquals(java.util.List.of(new Placement("127.0.0.11", 6660, 0, "n1"), new Placement("127.0.0.12", 6661, 1, "n2")),
                job.ranks());
        Files.writeString(file, "protocol=v1\nworld.size=2\n");
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> JobFile.read(file));
        assertTrue(e.getMessage().startsWith("job file " + file + " is malformed"), e.getMessage());
    }

    @Test
    void shouldExitWith127WhenTheProgramCannotStart() {
        assertEquals(127, run("run", "-q", "--hosts", "127.0.0.1:1", dir.resolve("missing").toString()));
    }

    @Test
    void shouldResolveProgramNamesInTheProgramsDirectory() throws Exception {
        Path program = dir.resolve("mpiprime");
        Files.writeString(program, "#!/bin/sh\n");
        assertTrue(program.toFile().setExecutable(true));

        assertEquals(program.toString(), RunCommand.resolveProgram("mpiprime", Map.of("MPIPROXY_PROGRAMS", dir.toString())));
        assertEquals("other", RunCommand.resolveProgram("other", Map.of("MPIPROXY_PROGRAMS", dir.toString())));
        assertEquals("./x", RunCommand.resolveProgram("./x", Map.of()));
    }

    @Test
    void shouldReadExitStatusesRankZeroWrote() throws Exception {
        Path file = dir.resolve("statuses");
        int[] statuses = {0, -1, -1, -1};
        assertEquals(false, JobEnd.readStatuses(file, statuses));

        Files.writeString(file, "0 0\n1 0\n2 -1\n3 137\n");
        assertEquals(true, JobEnd.readStatuses(file, statuses));
        assertEquals("[0, 0, -1, 137]", java.util.Arrays.toString(statuses));
    }
}
