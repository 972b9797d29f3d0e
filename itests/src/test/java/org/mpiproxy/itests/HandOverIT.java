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
 * An operator updates every project bundle of a running node in turn from its console
 * ({@code bundle:update}, every other one with {@code --refresh}, the proxy core included), then
 * runs {@code bundle:refresh}, while two
 * jobs stream through the node: a v1 job (mpiprime's rank pulled in portions by a FreeNOS-style
 * host, every flag compared) and a v2 job ({@code mpiproxy run} of a Java program that streams
 * numbered ints both ways between rank 0 and two ranks, every element checked on both sides).
 * Both jobs finish with the right data and exit statuses, and nothing is left behind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HandOverIT {

    /** In the order an operator might take them: the edges, the core, then the libraries everything uses. */
    private static final List<String> BUNDLES = List.of("org.mpiproxy.transport.udp", "org.mpiproxy.launcher.local",
            "org.mpiproxy.launcher.core", "org.mpiproxy.channel.shm", "org.mpiproxy.proxy", "org.mpiproxy.process",
            "org.mpiproxy.protocol", "org.mpiproxy.api", "org.mpiproxy.mpi", "org.mpiproxy.shell");
    /** mpiprime's range; with two ranks (host and one rank) the rank computes about N/2 flags. */
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
    void shouldFinishAV1AndAV2JobStreamingWhileEveryBundleIsUpdatedThenRefreshed() throws Exception {
        cluster = TestCluster.start("handover-nodes", "u", 61, 1, node -> { });
        KarafNode node = cluster.nodes.get(0);
        Path programs = node.home.resolve("programs");
        Path classes = compileStream(programs.resolve("mpi.jar"));
        Path stop = cluster.work.resolve("stop-streaming");
        Path cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        CompletableFuture<Run> v2 = CompletableFuture.supplyAsync(() -> {
            try {
                return cluster.launch(cli, 900, Map.of("MPIPROXY_PROGRAMS", programs.toString()), "-n", "3", "--hosts",
                        "u1:3", "mpijava", "-cp", classes.toString(), "Stream", stop.toString(), "20");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        int rounded = N % WORLD != 0 ? N + WORLD - N % WORLD : N;
        int root = (int) Math.sqrt(rounded);
        int per = (rounded - root) / WORLD;
        byte[] expected = PrimeStream.primeFlags(root + per, per);
        try (FreeNosHost host = new FreeNosHost(new InetSocketAddress(node.address, node.port), 1000)) {
            host.timeout((int) TIMEOUT.toMillis());
            assertEquals(0, host.exec(1, 0, WORLD, "mpiprime " + N).result);
            host.timeout(1000);
            PrimeStream stream = new PrimeStream(host, per, TIMEOUT);
            stream.receive(per / 20);
            awaitJobs(node, v2);

            int steps = BUNDLES.size() + 2;
            for (int i = 0; i < BUNDLES.size(); i++) {
                String bsn = BUNDLES.get(i);
                // half of them with --refresh: their dependents are rewired at once, the others' at the end
                String out = node.console("bundle:update " + (i % 2 == 1 ? "--refresh " : "") + bsn);
                assertFalse(out.toLowerCase(java.util.Locale.ROOT).contains("error"), bsn + ": " + out);
                awaitJobs(node, v2);
                stream.receive((long) per * (i + 1) / steps);
            }
            String out = node.console("bundle:refresh");
            assertFalse(out.toLowerCase(java.util.Locale.ROOT).contains("error"), "bundle:refresh: " + out);
            awaitJobs(node, v2);
            stream.receive(per);

            assertEquals(per, stream.received, "elements received");
            assertArrayEquals(expected, stream.bytes.toByteArray(), "every flag exactly once, in order");
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals(0, terminated.result, "TERMINATE " + terminated);
            assertEquals(0, terminated.datacount, "exit status of the v1 rank");
        }

        Files.createFile(stop);
        Run run = v2.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(0, run.exit(), "launcher: " + run.err());
        List<String> summary = run.out().stream().filter(l -> l.startsWith("[0] ")).toList();
        assertEquals(1, summary.size(), run.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[0\\] streamed ([0-9]+) rounds of 256 ints both"
                + " ways with 2 ranks, every element checked").matcher(summary.get(0));
        assertTrue(m.matches(), summary.get(0));
        int rounds = Integer.parseInt(m.group(1));
        // every line the ranks wrote, through every update, exactly once and in order
        for (int r = 1; r <= 2; r++) {
            String prefix = "[" + r + "] rank " + r + " round ";
            List<Integer> seen = run.out().stream().filter(l -> l.startsWith(prefix))
                    .map(l -> Integer.parseInt(l.substring(prefix.length()))).toList();
            assertEquals(java.util.stream.IntStream.range(0, rounds).boxed().toList(), seen, "output of rank " + r);
        }
        String log = node.log();
        assertTrue(log.contains("v2 job") && log.contains("taken over from the previous revision of the proxy"),
                "the v2 job was handed over");
        awaitNoRanks();
    }

    /** Waits until the node lists the v1 job's rank and the v2 job's two ranks as running. */
    private void awaitJobs(KarafNode node, CompletableFuture<Run> v2) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        String out = "";
        while (System.nanoTime() < deadline) {
            if (v2.isDone()) {
                Run run = v2.join();
                throw new AssertionError("the v2 job ended early with " + run.exit() + ": " + run.out() + run.err());
            }
            out = node.console("mpi:jobs --no-format");
            if (running(out, "mpiprime") == 1 && running(out, "mpijava") == 2) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("the node does not list both jobs running: " + out);
    }

    private static long running(String jobs, String program) {
        return jobs.lines().filter(l -> l.contains(program) && l.contains("RUNNING")).count();
    }

    private void awaitNoRanks() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!cluster.ranks().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }

    private Path compileStream(Path jar) throws Exception {
        Path classes = Files.createDirectories(cluster.work.resolve("classes"));
        Process p = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "javac").toString(), "-cp",
                jar.toString(), "-d", classes.toString(),
                Paths.get("src/test/java-mpi/Stream.java").toAbsolutePath().toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "javac: " + out);
        return classes;
    }
}
