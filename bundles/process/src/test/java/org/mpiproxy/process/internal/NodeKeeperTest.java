package org.mpiproxy.process.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.process.KeeperFiles;
import org.mpiproxy.process.ProcStat;

/**
 * Runs the keeper in a JVM of its own over a shell script that plays the Karaf JVM: it writes the
 * policy as the proxy does, starts "ranks" that lead their own session ({@code setsid}) and ends
 * before them.
 */
class NodeKeeperTest {

    @TempDir
    Path temp;

    private Process keeper;
    private final List<Long> started = new java.util.ArrayList<>();

    @AfterEach
    void cleanUp() {
        if (keeper != null) {
            keeper.destroyForcibly();
        }
        for (long pid : started) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private Process startKeeper(String script) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx32m", "-cp", System.getProperty("java.class.path"),
                NodeKeeper.class.getName(), temp.resolve("keepers").toString(), "sh", "-c", script)
                .directory(temp.toFile())
                .redirectErrorStream(true)
                .redirectOutput(temp.resolve("keeper.out").toFile());
        keeper = builder.start();
        return keeper;
    }

    private Path keeperDirectory() {
        return temp.resolve("keepers").resolve(KeeperFiles.KEEPER_PREFIX + keeper.pid());
    }

    private long awaitPid(String name) throws Exception {
        Path file = temp.resolve(name);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (Files.exists(file)) {
                String text = Files.readString(file, StandardCharsets.US_ASCII);
                if (text.endsWith("\n")) {
                    long pid = Long.parseLong(text.trim());
                    started.add(pid);
                    return pid;
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError(name + " not written; keeper output: " + output());
    }

    private String output() throws IOException {
        Path out = temp.resolve("keeper.out");
        return Files.exists(out) ? Files.readString(out) : "";
    }

    private static boolean runs(long pid) throws IOException {
        Optional<ProcStat> stat = ProcStat.read(pid);
        return stat.isPresent() && stat.get().isRunning();
    }

    private Optional<Path> exitRecord(long pid) throws IOException {
        if (!Files.isDirectory(keeperDirectory())) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(keeperDirectory())) {
            return files.filter(f -> f.getFileName().toString().startsWith(KeeperFiles.EXIT_PREFIX + pid + "-"))
                    .findFirst();
        }
    }

    private static final String POLICY = "printf 'survive.seconds=%s\\nstop.grace.seconds=1\\n' > \"$MPIPROXY_KEEPER_DIR/policy\"; ";

    @Test
    void shouldKeepARankThatOutlivesItsJvmAndRecordItsExactStatus() throws Exception {
        startKeeper(String.format(POLICY, 30)
                + "setsid sh -c 'sleep 1.5; exit 7' & echo $! > rank.pid; exit 3");
        long rank = awaitPid("rank.pid");
        long start = ProcStat.read(rank).orElseThrow().startTime();
        // the "JVM" has ended: the rank runs on under the keeper
        Thread.sleep(500);
        assertTrue(keeper.isAlive(), "the keeper waits for its orphan: " + output());
        assertTrue(runs(rank), "the rank outlives its JVM");
        assertEquals(keeper.pid(), ProcStat.read(rank).orElseThrow().ppid(), "the keeper is the rank's parent now");
        assertTrue(keeper.waitFor(20, TimeUnit.SECONDS), "the keeper ends after its last orphan: " + output());
        assertEquals(3, keeper.exitValue(), "the keeper exits with its command's status");
        assertEquals(optionalInt(7), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start),
                "the rank's exact status is recorded for the next proxy");
    }

    @Test
    void shouldStopOrphansWhenNobodyTakesThemWithinTheWindow() throws Exception {
        startKeeper(String.format(POLICY, 1)
                + "setsid sh -c 'sleep 300 & echo $! > child.pid; wait' & echo $! > rank.pid; "
                + "while [ ! -s child.pid ]; do sleep 0.05; done; exit 0");
        long rank = awaitPid("rank.pid");
        long child = awaitPid("child.pid");
        long start = ProcStat.read(rank).orElseThrow().startTime();
        assertTrue(runs(rank) && runs(child));
        long t0 = System.nanoTime();
        assertTrue(keeper.waitFor(20, TimeUnit.SECONDS), "the keeper stops its orphans after the window: " + output());
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        assertFalse(runs(rank), "the rank was stopped");
        assertFalse(runs(child), "its child (same process group) was stopped");
        assertTrue(seconds < 15, "stopped within the window and the grace, not at some later sweep: " + seconds + " s");
        assertEquals(0, keeper.exitValue());
        assertEquals(optionalInt(128 + 15), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start),
                "SIGTERM is recorded as 128 + 15");
        assertTrue(output().contains("stopping them"), output());
    }

    @Test
    void shouldLeaveOrphansToTheJvmThatOwnsThem() throws Exception {
        long self = ProcessHandle.current().pid();
        long selfStart = ProcStat.read(self).orElseThrow().startTime();
        // this test's JVM plays the proxy that took the jobs over
        startKeeper(String.format(POLICY, 1)
                + "printf '" + self + " " + selfStart + "\\n' > \"$MPIPROXY_KEEPER_DIR/owner\"; "
                + "setsid sh -c 'sleep 3; exit 5' & echo $! > rank.pid; exit 0");
        long rank = awaitPid("rank.pid");
        long start = ProcStat.read(rank).orElseThrow().startTime();
        Thread.sleep(2200);
        assertTrue(runs(rank), "a rank whose jobs have an owner is not stopped at the window");
        assertTrue(keeper.waitFor(20, TimeUnit.SECONDS), output());
        assertEquals(optionalInt(5), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start));
    }

    @Test
    void shouldPassSignalsOnToItsCommandAndExitWithItsStatus() throws Exception {
        startKeeper("echo $$ > jvm.pid; exec sleep 300");
        long jvm = awaitPid("jvm.pid");
        assertTrue(runs(jvm));
        Thread.sleep(300);
        keeper.destroy();
        assertTrue(keeper.waitFor(20, TimeUnit.SECONDS), output());
        assertEquals(128 + 15, keeper.exitValue(), "the command ended by the forwarded SIGTERM: " + output());
        assertFalse(runs(jvm));
        assertFalse(Files.exists(keeperDirectory()), "a keeper with nothing recorded leaves no directory");
    }

    private static java.util.OptionalInt optionalInt(int value) {
        return java.util.OptionalInt.of(value);
    }
}
