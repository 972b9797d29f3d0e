package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mpiproxy.itests.TestCluster.Run;

/**
 * Issue 14, Done 3: an operator restarts a node ({@code bin/stop}, then {@code bin/karaf} again)
 * while three jobs run on it: a v1 job streaming (mpiprime's rank pulled in portions by a
 * FreeNOS-style host, every flag compared), a v2 job streaming ({@code mpiproxy run} of a Java
 * program exchanging numbered ints both ways between rank 0 and two ranks of the node, every
 * element checked on both sides, every rank printing a line per round) and a v1 job whose rank
 * waits for a file, created while Karaf is down, and then exits with status 7. After the restart
 * all three finish: the right data, every output line once and in order, the exact exit statuses
 * (7 for the rank that ended while no proxy ran), and nothing left behind: no rank, no keeper.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NodeRestartIT {

    private static final int N = 4_000_000;
    private static final int WORLD = 2;
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private TestCluster cluster;

    @AfterAll
    void stopNodes() throws InterruptedException {
        if (cluster != null) {
            cluster.stop();
        }
    }

    @Test
    void shouldFinishRunningJobsAfterARestartOfTheNode() throws Exception {
        cluster = TestCluster.start("restart-nodes", "r", 71, 1, node -> { });
        KarafNode node = cluster.nodes.get(0);
        Path programs = node.home.resolve("programs");
        Path exiter = programs.resolve("exiter");
        Files.writeString(exiter, "#!/bin/sh\necho \"$$\" > \"$0.pid\"\nwhile [ ! -e \"$0.go\" ]; do sleep 0.1; done\n"
                + "echo leaving\nexit 7\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(exiter, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path classes = StreamJobs.compileStream(cluster.work, programs.resolve("mpi.jar"));
        Path stop = cluster.work.resolve("stop-streaming");
        Path cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        CompletableFuture<Run> v2 = CompletableFuture.supplyAsync(() -> {
            try {
                // a job meant to outlive a restart of its nodes tolerates their silence that long, and
                // so does each of its calls (rank 0's receive waits for the ranks across the restart,
                // which a busy machine makes longer than the default 30 s of MPIPROXY_TIMEOUT)
                return cluster.launch(cli, 900, Map.of("MPIPROXY_PROGRAMS", programs.toString()), "-n", "3",
                        "-x", "MPIPROXY_RESTART_WAIT_MS=240000", "-x", "MPIPROXY_TIMEOUT=240", "--hosts", "r1:3",
                        "mpijava", "-cp",
                        classes.toString(), "Stream", stop.toString(), "20");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        int rounded = N % WORLD != 0 ? N + WORLD - N % WORLD : N;
        int root = (int) Math.sqrt(rounded);
        int per = (rounded - root) / WORLD;
        byte[] expected = PrimeStream.primeFlags(root + per, per);
        InetSocketAddress proxy = new InetSocketAddress(node.address, node.port);
        try (FreeNosHost host = new FreeNosHost(proxy, 1000); FreeNosHost exiting = new FreeNosHost(proxy, 1000)) {
            host.timeout((int) TIMEOUT.toMillis());
            assertEquals(0, host.exec(1, 0, WORLD, "mpiprime " + N).result);
            exiting.timeout((int) TIMEOUT.toMillis());
            assertEquals(0, exiting.exec(1, 0, 2, "exiter").result);
            host.timeout(1000);
            PrimeStream stream = new PrimeStream(host, per, TIMEOUT);
            stream.receive(per / 3);
            StreamJobs.awaitJobs(node, v2, TIMEOUT);
            long exiterPid = Long.parseLong(Files.readString(programs.resolve("exiter.pid")).trim());

            long jvm = node.stopKaraf();
            assertFalse(ProcessHandle.of(jvm).isPresent(), "Karaf's JVM has ended");
            List<ProcessHandle> kept = cluster.ranks();
            assertEquals(4, kept.size(), "the ranks outlive Karaf (mpiprime, exiter, two mpijava): " + kept);
            // the exiter ends while no proxy runs: only the node keeper sees its status
            Files.createFile(programs.resolve("exiter.go"));
            awaitGone(exiterPid);
            node.start();
            node.awaitProxy(300);

            StreamJobs.awaitJobs(node, v2, TIMEOUT);
            stream.receive(per);
            assertEquals(per, stream.received, "elements received");
            assertArrayEquals(expected, stream.bytes.toByteArray(), "every flag exactly once, in order");
            // the rank's end is awaited, not raced: the reply may come late on a busy machine
            host.timeout((int) TIMEOUT.toMillis());
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals(0, terminated.result, "TERMINATE " + terminated);
            assertEquals(0, terminated.datacount, "exit status of the streaming v1 rank");
            FreeNosHost.Reply exited = exiting.terminate(1, 0);
            assertEquals(0, exited.result, "TERMINATE " + exited);
            assertEquals(7, exited.datacount, "the exact status of the rank that ended during the restart");
        }

        Files.createFile(stop);
        Run run = v2.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        StreamJobs.checkStreamRun(run);
        assertTrue(Files.readString(node.home.resolve("data/mpiproxy/logs").resolve(exiterLog(node)))
                .contains("leaving"), "the line the exiter wrote while Karaf was down is in its log");
        String log = node.log();
        assertTrue(log.contains("took over 3 job(s)"), "the jobs were taken over after the restart");
        assertFalse(log.contains("could not be taken over"), "every job's output streams were taken over");
        StreamJobs.awaitNoRanks(cluster);
        awaitNoKeeperButTheCurrent(node);
    }

    /** @return the exiter's log file, relative to the log directory */
    private static Path exiterLog(KarafNode node) throws Exception {
        try (var files = Files.walk(node.home.resolve("data/mpiproxy/logs"))) {
            return files.filter(f -> f.getFileName().toString().equals("rank-1.out"))
                    .filter(f -> {
                        try {
                            return Files.readString(f).contains("leaving");
                        } catch (java.io.IOException e) {
                            return false;
                        }
                    })
                    .map(f -> node.home.resolve("data/mpiproxy/logs").relativize(f))
                    .findFirst().orElse(Path.of("no-exiter-log-with-its-line"));
        }
    }

    private static void awaitGone(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            assertTrue(System.nanoTime() < deadline, "pid " + pid + " still runs");
            Thread.sleep(50);
        }
    }

    /** The first start's keeper ends once the ranks it kept have ended. */
    private static void awaitNoKeeperButTheCurrent(KarafNode node) throws InterruptedException {
        long current = node.keeper().pid();
        String marker = node.home.toString();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        List<Long> keepers;
        do {
            keepers = ProcessHandle.allProcesses()
                    .filter(p -> p.pid() != current && p.info().commandLine()
                            .map(c -> c.contains("NodeKeeper") && c.contains(marker)).orElse(false))
                    .map(ProcessHandle::pid).toList();
            if (keepers.isEmpty()) {
                return;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("node keepers left: " + keepers);
    }
}
