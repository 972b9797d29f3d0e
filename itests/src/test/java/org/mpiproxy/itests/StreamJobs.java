package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.itests.TestCluster.Run;

/**
 * What the tests that keep jobs streaming through a node's changes share: the v2 job is
 * {@code mpiproxy run -n 3 mpijava Stream} (numbered ints both ways between rank 0 and two ranks
 * of the node, each rank printing one line per round), the v1 job mpiprime's rank.
 */
final class StreamJobs {

    private StreamJobs() {
    }

    /** Compiles {@code src/test/java-mpi/Stream.java} against the node's {@code mpi.jar}; returns the classes. */
    static Path compileStream(Path work, Path jar) throws Exception {
        Path classes = Files.createDirectories(work.resolve("classes"));
        Process p = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "javac").toString(), "-cp",
                jar.toString(), "-d", classes.toString(),
                Paths.get("src/test/java-mpi/Stream.java").toAbsolutePath().toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "javac: " + out);
        return classes;
    }

    /** Waits until the node lists the v1 job's mpiprime rank and the v2 job's two ranks as running. */
    static void awaitJobs(KarafNode node, CompletableFuture<Run> v2, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
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

    /**
     * Checks the v2 job's run: launcher exit 0, rank 0's summary, and every line of ranks 1 and 2
     * exactly once and in order.
     */
    static void checkStreamRun(Run run) {
        assertEquals(0, run.exit(), "launcher: " + run.err());
        List<String> summary = run.out().stream().filter(l -> l.startsWith("[0] ")).toList();
        assertEquals(1, summary.size(), run.err());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\[0\\] streamed ([0-9]+) rounds of 256 ints both"
                + " ways with 2 ranks, every element checked").matcher(summary.get(0));
        assertTrue(m.matches(), summary.get(0));
        int rounds = Integer.parseInt(m.group(1));
        for (int r = 1; r <= 2; r++) {
            String prefix = "[" + r + "] rank " + r + " round ";
            List<Integer> seen = run.out().stream().filter(l -> l.startsWith(prefix))
                    .map(l -> Integer.parseInt(l.substring(prefix.length()))).toList();
            assertEquals(java.util.stream.IntStream.range(0, rounds).boxed().toList(), seen, "output of rank " + r);
        }
    }

    /** Waits until no rank runs on the cluster's nodes; fails after 120 s (a hang, not a slow stop). */
    static void awaitNoRanks(TestCluster cluster) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!cluster.ranks().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }
}
