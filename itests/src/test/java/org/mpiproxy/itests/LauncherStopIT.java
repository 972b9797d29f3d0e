package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Stopping a job stops it now: {@code mpiproxy run --timeout}, SIGINT to the launcher and
 * {@code mpiproxy kill} end a long v2 job within the proxy's {@code stop.grace.seconds} (2 s) + 2 s
 * of the stop, though the node keeps {@code terminate.timeout.seconds} at its default of 30 s and
 * the job's ranks ignore SIGTERM (they are killed after the grace). Afterwards no rank process
 * and no channel directory of the job is left on the node.
 * <p>
 * The stop is timed from the moment the stop was made (the launcher's or {@code mpiproxy kill}'s
 * own line saying it stops the job, or the end of the {@code kill} that sent SIGINT, whichever
 * this test saw first) to the moment the stopping process was seen to end: what starting a JVM or
 * a {@code kill} costs on a busy machine is not counted, what the stop itself costs is.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LauncherStopIT {

    /** The node's stop.grace.seconds (see {@link KarafNode}). */
    private static final long STOP_GRACE_SECONDS = 2;
    /** What the issue demands: a stop returns within the grace + 2 s. */
    private static final long STOP_BOUND_NANOS = TimeUnit.SECONDS.toNanos(STOP_GRACE_SECONDS + 2);
    /** The default: a stop must not wait for it. */
    private static final int TERMINATE_TIMEOUT_SECONDS = 30;
    /**
     * The job's {@code --timeout}: it runs from the ranks' start, so it must outlast rank 0's start
     * (a JVM, slow on a busy machine) for the job to be seen running before it ends.
     */
    private static final String JOB_TIMEOUT_SECONDS = "15";

    private KarafNode node;
    private Path work;
    private Path nodeMap;
    private Path cli;
    private Path key;
    private final List<Process> started = new ArrayList<>();

    @BeforeAll
    void startNode() throws Exception {
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        Path distribution = Paths.get(System.getProperty("mpiproxy.itest.distribution"));
        cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        work = target.resolve("launcher-stop");
        KarafNode.deleteTree(work);
        Files.createDirectories(work);
        node = KarafNode.create("s1", distribution, work, "127.0.0.21", TERMINATE_TIMEOUT_SECONDS);
        nodeMap = work.resolve("node-map");
        Files.writeString(nodeMap, node.name + " " + node.address + ":" + node.port + "\n");
        key = work.resolve("cluster.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        node.useKey(key);
        // the ranks: a shell that ignores SIGTERM (so do its sleeps) and never ends
        Path stubborn = node.home.resolve("programs/stubborn");
        Files.writeString(stubborn, "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n");
        Files.setPosixFilePermissions(stubborn, PosixFilePermissions.fromString("rwxr-xr-x"));
        node.start();
        node.awaitProxy(300);
    }

    @AfterAll
    void stopNode() throws InterruptedException {
        if (node != null) {
            node.stop();
        }
    }

    /** Whatever a failed test left running would spoil the next one's counts. */
    @AfterEach
    void stopLeftovers() {
        started.forEach(Process::destroyForcibly);
        started.clear();
        node.ranks().forEach(ProcessHandle::destroyForcibly);
    }

    /** A running job as {@code mpiproxy run} starts it: mpiprime as rank 0 here, two stubborn ranks on the node. */
    private final class Job {
        final Process launcher;
        final BufferedReader out;
        final List<String> errors = new CopyOnWriteArrayList<>();
        /** When this test read the launcher's line saying it stops the job ({@link System#nanoTime}), 0 before. */
        volatile long stoppingAt;
        final Path jobFile;
        final long jobId;
        final long rankZero;
        final List<ProcessHandle> ranks;

        Job(String name, String... options) throws Exception {
            jobFile = work.resolve(name + ".job");
            // SIGINT at its default whatever this JVM inherited (a background job ignores it, and a JVM
            // started so would keep ignoring it)
            List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT", java(), "-jar",
                    cli.toString(), "run", "--node-map",
                    nodeMap.toString(), "--hosts", node.name + ":3", "--key-file", key.toString(), "--job-file",
                    jobFile.toString(), "-x", "MPIPROXY_PROGRAM=stubborn"));
            command.addAll(List.of(options));
            // rank 0 collects the ranks' slices, which never come
            command.addAll(List.of(node.home.resolve("programs/mpiprime").toString(), "1000000"));
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            launcher = builder.start();
            started.add(launcher);
            long begun = System.nanoTime();
            CompletableFuture.runAsync(() -> readLines(launcher.getErrorStream(), line -> {
                long now = System.nanoTime();
                if (line.contains("stopping the job") && stoppingAt == 0) {
                    stoppingAt = now;
                }
                errors.add("+" + TimeUnit.NANOSECONDS.toMillis(now - begun) + " ms " + line);
            }));
            out = new BufferedReader(new InputStreamReader(launcher.getInputStream(), StandardCharsets.UTF_8));
            // rank 0 prints its own slice once every rank started
            assertEquals("[0] 2", out.readLine(), "first line of output; launcher stderr: " + errors);
            CompletableFuture.runAsync(() -> readLines(out, line -> { }));
            Properties p = new Properties();
            try (var in = Files.newBufferedReader(jobFile)) {
                p.load(in);
            }
            jobId = Long.parseUnsignedLong(p.getProperty("job.id"), 16);
            rankZero = Long.parseLong(p.getProperty("rank0.pid"));
            ranks = withDescendants(node.ranks());
            assertEquals(2, node.ranks().size(), "stubborn ranks running on the node");
            assertEquals(1, channelDirectories().size(), "the job's channel directory in " + node.ringDirectory);
        }

        /** @return the job's channel directories on the node: {@code job-<uid>-<16 hex>} */
        List<Path> channelDirectories() {
            String suffix = String.format("-%016x", jobId);
            try (Stream<Path> dirs = Files.list(node.ringDirectory)) {
                return dirs.filter(d -> d.getFileName().toString().startsWith("job-")
                        && d.getFileName().toString().endsWith(suffix)).toList();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        /** Nothing of the job is left on the node: no rank, none of their children, no channel directory. */
        void assertNothingLeft() {
            for (ProcessHandle p : ranks) {
                assertFalse(p.isAlive(), "process " + p.pid() + " " + p.info().commandLine().orElse("") + " still runs");
            }
            assertEquals(List.of(), node.ranks(), "ranks left running");
            assertFalse(ProcessHandle.of(rankZero).map(ProcessHandle::isAlive).orElse(false), "rank 0 still runs");
            assertEquals(List.of(), channelDirectories(), "channel directory left");
        }
    }

    @Test
    void shouldStopAJobAtItsTimeoutWithinTheGraceAndExit124() throws Exception {
        Job job = new Job("timeout", "--timeout", JOB_TIMEOUT_SECONDS);

        assertTrue(job.launcher.waitFor(60, TimeUnit.SECONDS), "launcher still runs");
        long ended = System.nanoTime();
        assertEquals(124, job.launcher.exitValue(), String.join("\n", job.errors));
        assertTrue(job.stoppingAt != 0, "the launcher said it stops the job: " + job.errors);
        assertWithinStopBound(ended - job.stoppingAt, "--timeout: " + job.errors);
        job.assertNothingLeft();
    }

    @Test
    void shouldStopAJobOnSigintWithinTheGraceAndExit130() throws Exception {
        Job job = new Job("sigint");

        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(job.launcher.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor());
        // the signal was delivered before kill ended, and before the launcher said it stops the job
        long signalled = System.nanoTime();
        assertTrue(job.launcher.waitFor(60, TimeUnit.SECONDS), "launcher still runs");
        long ended = System.nanoTime();

        assertEquals(130, job.launcher.exitValue(), String.join("\n", job.errors));
        assertTrue(job.stoppingAt != 0, "the launcher said it stops the job: " + job.errors);
        assertWithinStopBound(ended - Math.min(signalled, job.stoppingAt), "SIGINT: " + job.errors);
        job.assertNothingLeft();
    }

    @Test
    void shouldStopAJobWithMpiproxyKillWithinTheGrace() throws Exception {
        Job job = new Job("kill");

        KillRun kill = new KillRun(job.jobFile, "stopping launcher");

        assertEquals(0, kill.exit, kill.output.toString());
        assertWithinStopBound(kill.ended - kill.stoppingAt, "mpiproxy kill: " + kill.timeline);
        // mpiproxy kill ends once the launcher has: this only bounds a hang
        assertTrue(job.launcher.waitFor(60, TimeUnit.SECONDS), "launcher still runs");
        assertEquals(143, job.launcher.exitValue(), String.join("\n", job.errors));
        job.assertNothingLeft();
    }

    @Test
    void shouldStopTheRanksWithMpiproxyKillWhenTheLauncherIsGone() throws Exception {
        Job job = new Job("orphan");
        // the launcher dies without a word; rank 0 and the ranks keep running
        job.launcher.destroyForcibly();
        assertTrue(job.launcher.waitFor(60, TimeUnit.SECONDS));
        assertTrue(ProcessHandle.of(job.rankZero).map(ProcessHandle::isAlive).orElse(false), "rank 0 runs on");

        KillRun kill = new KillRun(job.jobFile, "stopping rank 0");

        assertEquals(0, kill.exit, kill.output.toString());
        assertTrue(kill.output.stream().anyMatch(l -> l.matches("rank 1 .* exited with status 137 \\(signal 9\\)")),
                "rank 1 killed after the grace: " + kill.output);
        assertWithinStopBound(kill.ended - kill.stoppingAt, "mpiproxy kill without a launcher: " + kill.timeline);
        job.assertNothingLeft();
        Properties recorded = jobFile(job);
        assertEquals("ended", recorded.getProperty("state"), "the job file records the end: " + recorded);
        assertEquals("kill", recorded.getProperty("stop.reason"), "stop reason: " + recorded);
        assertEquals("137", recorded.getProperty("exit.0"), "rank 0 was killed: " + recorded);
        assertEquals("137", recorded.getProperty("exit.1"), "rank 1 was killed after the grace: " + recorded);
        KillRun again = new KillRun(job.jobFile, "mpiproxy: job");
        assertEquals(0, again.exit, again.output.toString());
        assertTrue(again.output.get(0).contains("already ended") && again.output.get(0).contains("its launcher had died"),
                "a second kill stops nothing: " + again.output);
    }

    @Test
    void shouldSayInOneLineWhenTheJobsPortIsHeldAndLoseNothing() throws Exception {
        Job job = new Job("held-port");
        job.launcher.destroyForcibly();
        assertTrue(job.launcher.waitFor(60, TimeUnit.SECONDS));
        ProcessHandle rankZero = ProcessHandle.of(job.rankZero).orElseThrow();
        rankZero.destroyForcibly();
        assertTrue(rankZero.onExit().get(60, TimeUnit.SECONDS) != null);
        int port = Integer.parseInt(jobFile(job).getProperty("host.port"));

        KillRun refused;
        try (java.net.DatagramSocket holder = new java.net.DatagramSocket(port)) {
            refused = new KillRun(job.jobFile, "launcher");
        }
        assertEquals(1, refused.exit, refused.output.toString());
        List<String> errors = refused.output.stream().filter(l -> l.startsWith("mpiproxy:")).toList();
        assertEquals(1, errors.size(), "one line says why: " + refused.output);
        assertTrue(errors.get(0).contains("cannot take over the job's port " + port), errors.get(0));
        assertFalse(refused.output.stream().anyMatch(l -> l.contains("Exception") || l.startsWith("\tat ")),
                "no stack trace: " + refused.output);
        assertEquals("running", jobFile(job).getProperty("state"), "the job still runs and its file says so");
        assertEquals(2, node.ranks().size(), "the ranks still run");

        KillRun kill = new KillRun(job.jobFile, "launcher");
        assertEquals(0, kill.exit, "once the port is free the kill works: " + kill.output);
        job.assertNothingLeft();
    }

    private static Properties jobFile(Job job) throws IOException {
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(job.jobFile)) {
            p.load(in);
        }
        return p;
    }

    /** {@code mpiproxy kill --job-file FILE}, timed from the line that says the stop begins. */
    private final class KillRun {
        final List<String> output = new CopyOnWriteArrayList<>();
        /** Each line with the time it came, from the start of the command: what a slow stop spent its time on. */
        final List<String> timeline = new CopyOnWriteArrayList<>();
        volatile long stoppingAt;
        final long ended;
        final int exit;

        KillRun(Path jobFile, String stopLine) throws Exception {
            Process kill = new ProcessBuilder(java(), "-jar", cli.toString(), "kill", "--job-file", jobFile.toString())
                    .redirectErrorStream(true).start();
            started.add(kill);
            long begun = System.nanoTime();
            CompletableFuture<Void> read = CompletableFuture.runAsync(() -> readLines(kill.getInputStream(), line -> {
                long now = System.nanoTime();
                if (line.startsWith(stopLine) && stoppingAt == 0) {
                    stoppingAt = now;
                }
                output.add(line);
                timeline.add("+" + TimeUnit.NANOSECONDS.toMillis(now - begun) + " ms " + line);
            }));
            assertTrue(kill.waitFor(60, TimeUnit.SECONDS), "mpiproxy kill still runs");
            ended = System.nanoTime();
            read.get(10, TimeUnit.SECONDS);
            timeline.add("+" + TimeUnit.NANOSECONDS.toMillis(ended - begun) + " ms (ended)");
            exit = kill.exitValue();
            assertTrue(stoppingAt != 0, "no line '" + stopLine + "': " + output);
        }
    }

    private static void assertWithinStopBound(long nanos, String what) {
        assertTrue(nanos <= STOP_BOUND_NANOS, what + ": the job took " + TimeUnit.NANOSECONDS.toMillis(nanos)
                + " ms to stop, more than stop.grace.seconds + 2 s");
    }

    /** @return the processes and every descendant they have now */
    private static List<ProcessHandle> withDescendants(List<ProcessHandle> roots) {
        List<ProcessHandle> all = new ArrayList<>(roots);
        roots.forEach(r -> r.descendants().forEach(all::add));
        return all;
    }

    private static void readLines(InputStream in, java.util.function.Consumer<String> each) {
        readLines(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)), each);
    }

    private static void readLines(BufferedReader reader, java.util.function.Consumer<String> each) {
        try (reader) {
            String line;
            while ((line = reader.readLine()) != null) {
                each.accept(line);
            }
        } catch (IOException e) {
            // the process ended and closed its stream
        }
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }
}
