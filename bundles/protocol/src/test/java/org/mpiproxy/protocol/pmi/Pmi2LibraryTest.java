package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A PMI-2 client no one here wrote, Slurm's libpmi2, against a real PMI server: the project's
 * C program {@code pmi2_client.c} (beside the other C test programs) runs as four ranks that
 * find the server through {@code PMI_PORT} and {@code PMI_ID}, as libpmi2 reads them; the test
 * plays the job's launcher, ending each fence once every rank entered it, as {@code mpiproxy
 * run} does. Skipped only when libpmi2 is not installed (Debian: libpmi2-0-dev).
 */
class Pmi2LibraryTest {

    private static final long JOB = 0x2bL;
    private static final int RANKS = 4;
    /** Longest wait for a client: only catches a hang. */
    private static final long TIMEOUT_SECONDS = 60;

    /** The launcher's side of the fences, for one job on one server. */
    private static final class Launcher {
        private final Map<String, String> pending = new LinkedHashMap<>();
        private final int[] entered = new int[RANKS];
        private int fenced;
        PmiServer server;

        synchronized boolean line(int rank, String text) {
            PmiLine line = PmiLine.parse(text);
            if (line.command().equals("put")) {
                Map.Entry<String, String> pair = PmiLine.putOf(line);
                pending.putIfAbsent(pair.getKey(), pair.getValue());
            } else if (line.command().equals("barrier_in")) {
                entered[rank]++;
                int lowest = Integer.MAX_VALUE;
                for (int e : entered) {
                    lowest = Math.min(lowest, e);
                }
                if (lowest > fenced) {
                    fenced = lowest;
                    byte[] pairs = PmiSpace.encode(pending, Integer.MAX_VALUE).get(0);
                    pending.clear();
                    assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, fenced, 0, 1, ByteBuffer.wrap(pairs), 0,
                            pairs.length));
                }
            }
            return true;
        }
    }

    /** @return the project's C test program of that name, found from the module up */
    static Path cSource(String name) {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path source = dir.resolve("itests/src/test/c").resolve(name);
            if (Files.isRegularFile(source)) {
                return source;
            }
        }
        throw new IllegalStateException("no itests/src/test/c/" + name + " above " + Path.of("").toAbsolutePath());
    }

    /** @return the client built with libpmi2 */
    private static Path build(Path dir) throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(Path.of("/usr/include/slurm/pmi2.h")),
                "Slurm's libpmi2 is not installed (Debian: apt-get install libpmi2-0-dev; .ci/run installs it)");
        Path binary = dir.resolve("pmi2_client");
        Process cc = new ProcessBuilder("cc", "-O2", "-o", binary.toString(), cSource("pmi2_client.c").toString(),
                "-lpmi2").redirectErrorStream(true).start();
        String out = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(cc.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "cc did not end");
        assertEquals(0, cc.exitValue(), "cc pmi2_client.c -lpmi2: " + out);
        return binary;
    }

    @Test
    void shouldServeFourSlurmLibpmi2ClientsTheirKeysFencesAndAttributes(@TempDir Path dir) throws Exception {
        Path client = build(dir);
        List<String> problems = new CopyOnWriteArrayList<>();
        Launcher launcher = new Launcher();
        String mapping = "(vector,(0,1,4))";
        try (PmiServer server = new PmiServer((job, rank, line) -> launcher.line(rank, line), problems::add)) {
            launcher.server = server;
            List<Process> ranks = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                ProcessBuilder b = new ProcessBuilder(client.toString());
                b.environment().keySet().removeIf(name -> name.startsWith("PMI") || name.startsWith("SLURM"));
                b.environment().putAll(server.register(JOB, r, RANKS, Map.of("PMI_process_mapping", mapping)));
                b.environment().put("PMI_RANK", Integer.toString(r));
                b.environment().put("PMI_SIZE", Integer.toString(RANKS));
                b.redirectError(dir.resolve("stderr-" + r).toFile());
                Process p = b.start();
                server.started(JOB, r, p.pid());
                ranks.add(p);
            }
            for (int r = 0; r < RANKS; r++) {
                Process p = ranks.get(r);
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "rank " + r + " did not end");
                String err = Files.readString(dir.resolve("stderr-" + r));
                assertEquals(0, p.exitValue(), "rank " + r + ": " + out + err + "; problems: " + problems);
                List<String> expected = new ArrayList<>();
                for (int s = 0; s < RANKS; s++) {
                    expected.add("rank " + r + " read key-" + s + "=value of rank " + s + "; from "
                            + PmiServer.kvsName(JOB));
                }
                expected.add("rank " + r + " PMI_process_mapping=" + mapping);
                expected.add("rank " + r + " universeSize=" + RANKS);
                expected.add("rank " + r + " node attribute=put by rank 0");
                expected.add("rank " + r + " of " + RANKS + " done");
                assertEquals(expected, List.of(out.split("\n")), "rank " + r + "; stderr: " + err);
            }
        }
        assertEquals(List.of(), problems);
    }
}
