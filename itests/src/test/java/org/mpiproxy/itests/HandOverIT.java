package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
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
        Path classes = StreamJobs.compileStream(cluster.work, programs.resolve("mpi.jar"));
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
            StreamJobs.awaitJobs(node, v2, TIMEOUT);

            int steps = BUNDLES.size() + 2;
            for (int i = 0; i < BUNDLES.size(); i++) {
                String bsn = BUNDLES.get(i);
                // half of them with --refresh: their dependents are rewired at once, the others' at the end
                String out = node.console("bundle:update " + (i % 2 == 1 ? "--refresh " : "") + bsn);
                assertFalse(out.toLowerCase(java.util.Locale.ROOT).contains("error"), bsn + ": " + out);
                StreamJobs.awaitJobs(node, v2, TIMEOUT);
                stream.receive((long) per * (i + 1) / steps);
            }
            String out = node.console("bundle:refresh");
            assertFalse(out.toLowerCase(java.util.Locale.ROOT).contains("error"), "bundle:refresh: " + out);
            StreamJobs.awaitJobs(node, v2, TIMEOUT);
            stream.receive(per);

            assertEquals(per, stream.received, "elements received");
            assertArrayEquals(expected, stream.bytes.toByteArray(), "every flag exactly once, in order");
            // the rank's end is awaited, not raced: the reply may come late on a busy machine
            host.timeout((int) TIMEOUT.toMillis());
            FreeNosHost.Reply terminated = host.terminate(1, 0);
            assertEquals(0, terminated.result, "TERMINATE " + terminated);
            assertEquals(0, terminated.datacount, "exit status of the v1 rank");
        }

        Files.createFile(stop);
        Run run = v2.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        StreamJobs.checkStreamRun(run);
        String log = node.log();
        assertTrue(log.contains("v2 job") && log.contains("taken over from the previous revision of the proxy"),
                "the v2 job was handed over");
        StreamJobs.awaitNoRanks(cluster);
    }
}
