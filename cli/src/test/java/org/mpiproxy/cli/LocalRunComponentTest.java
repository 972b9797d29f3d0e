package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LocalRuns;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.protocol.ClusterKeys;

/**
 * {@code mpiproxy run} as the proxy runs it for a front: two runs in one JVM at once, each with
 * its own environment, working directory and signals, and neither with this JVM's.
 */
class LocalRunComponentTest {

    private static final long CEILING_SECONDS = 60;

    @TempDir
    Path dir;

    /** A front's signals: the test delivers them once the run listens. */
    private static final class FrontSignals implements LocalRuns.Signals {
        final CompletableFuture<IntConsumer> handler = new CompletableFuture<>();

        @Override
        public void listen(IntConsumer h) {
            handler.complete(h);
        }
    }

    /** A front's output, which tells when a line arrived. */
    private static final class FrontOutput extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final CountDownLatch line = new CountDownLatch(1);

        @Override
        public synchronized void write(int b) {
            bytes.write(b);
            if (b == '\n') {
                line.countDown();
            }
        }

        synchronized String text() {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    private Map<String, String> env(Path key, String foo) {
        return Map.of("FOO", foo, "MPIPROXY_KEY_FILE", key.toString(), "PATH", System.getenv("PATH"));
    }

    @Test
    void shouldKeepTwoRunsInOneJvmApart() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
        Path a = Files.createDirectory(dir.resolve("a"));
        Path b = Files.createDirectory(dir.resolve("b"));
        long self = PrivateDirectories.currentUid();
        LocalRunComponent runs = new LocalRunComponent();
        FrontOutput outA = new FrontOutput();
        FrontOutput errA = new FrontOutput();
        FrontSignals signalsA = new FrontSignals();
        CompletableFuture<Integer> exitA = CompletableFuture.supplyAsync(() -> runs.run(List.of("run", "-n", "1",
                "--job-file", "job", "/bin/sh", "-c", "echo \"$FOO ${HOME-unset}\"; exec sleep 60"), env(key, "a"), a,
                new LocalRuns.Peer(self, 0, ProcessHandle.current().pid()), outA, errA, signalsA));
        IntConsumer toA = signalsA.handler.get(CEILING_SECONDS, TimeUnit.SECONDS);
        assertTrue(outA.line.await(CEILING_SECONDS, TimeUnit.SECONDS), "run a's rank 0 started");

        // run b starts, runs and ends while run a runs
        FrontOutput outB = new FrontOutput();
        FrontOutput errB = new FrontOutput();
        FrontSignals signalsB = new FrontSignals();
        int exitB = runs.run(List.of("run", "-n", "1", "--job-file", "job", "/bin/sh", "-c",
                "echo \"$FOO ${HOME-unset} $(pwd)\""), env(key, "b"), b,
                new LocalRuns.Peer(self, 0, ProcessHandle.current().pid()), outB, errB, signalsB);

        assertEquals(0, exitB, errB.text());
        assertEquals("[0] b unset " + b.toRealPath() + "\n", outB.text());
        assertTrue(Files.exists(b.resolve("job")), "the job file is in run b's directory");
        assertFalse(exitA.isDone(), "run a still runs");

        toA.accept(2);

        assertEquals(130, exitA.get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals("[0] a unset\n", outA.text());
        assertTrue(errA.text().contains("mpiproxy: stopping the job (SIGINT)"), errA.text());
        assertFalse(errB.text().contains("SIGINT"), errB.text());
        JobFile job = JobFile.read(a.resolve("job"));
        assertEquals(ProcessHandle.current().pid(), job.launcherPid());
        assertEquals(130, job.end().exitStatus());
    }

    @Test
    void shouldServeRunOnlyAndTheProxysOwnUserOnly() {
        LocalRunComponent runs = new LocalRunComponent();
        long self = PrivateDirectories.currentUid();
        OutputStream none = OutputStream.nullOutputStream();

        IllegalArgumentException status = assertThrows(IllegalArgumentException.class, () -> runs.run(
                List.of("status"), Map.of(), dir, new LocalRuns.Peer(self, 0, 1), none, none, h -> { }));
        IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> runs.run(
                List.of("run", "hostname"), Map.of(), dir, new LocalRuns.Peer(self + 1, 0, 1), none, none, h -> { }));

        assertEquals("the proxy runs 'mpiproxy run' only", status.getMessage());
        assertEquals("the proxy runs jobs of its own user (uid " + self + ") only", other.getMessage());
    }
}
