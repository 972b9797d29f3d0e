package org.mpiproxy.process.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.process.KeeperFiles;
import org.mpiproxy.process.ProcStat;

/**
 * Runs the keeper in a JVM of its own over a shell script that plays the Karaf JVM: it writes the
 * policy as the proxy does, starts "ranks" that lead their own session ({@code setsid}) and ends
 * before them. The scripts say the pids they start on their standard output, which the keeper's
 * command shares with it; a rank waits for a file before it ends, so nothing here hangs on how
 * long something takes. How long the window and the grace are is {@link NodeKeeperWatchTest}'s.
 */
class NodeKeeperTest {

    /** Longest wait for an event: only catches a hang. */
    private static final long TIMEOUT_SECONDS = 120;

    @TempDir
    Path temp;

    private Process keeper;
    private final List<Long> started = new java.util.ArrayList<>();
    /** What the keeper and its command wrote, line by line. */
    private final List<String> output = new CopyOnWriteArrayList<>();
    /** Takes a line each time one is added to {@link #output}. */
    private final BlockingQueue<String> arrivals = new LinkedBlockingQueue<>();

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
                .redirectErrorStream(true);
        keeper = builder.start();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(keeper.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    output.add(line);
                    arrivals.add(line);
                }
            } catch (IOException e) {
                output.add("(" + e + ")");
            }
        }, "keeper-output");
        reader.setDaemon(true);
        reader.start();
        return keeper;
    }

    private Path keeperDirectory() {
        return temp.resolve("keepers").resolve(KeeperFiles.KEEPER_PREFIX + keeper.pid());
    }

    /** @return the first line of the keeper's output that matches, once it is there */
    private String awaitLine(Predicate<String> what, String description) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (true) {
            Optional<String> line = output.stream().filter(what).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (arrivals.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS) == null) {
                throw new AssertionError(description + " not said; keeper output: " + output);
            }
        }
    }

    /** @return the pid a script said with {@code echo "<name> <pid>"} */
    private long awaitPid(String name) throws Exception {
        String line = awaitLine(l -> l.startsWith(name + " "), name);
        long pid = Long.parseLong(line.substring(name.length() + 1).trim());
        started.add(pid);
        return pid;
    }

    private static long startTime(long pid) throws IOException {
        return ProcStat.read(pid).orElseThrow().startTime();
    }

    private static final String POLICY = "printf 'survive.seconds=%s\\nstop.grace.seconds=1\\n' > \"$MPIPROXY_KEEPER_DIR/policy\"; ";

    /** A rank that ends with {@code status} once the file {@code go} exists. */
    private static String rank(int status) {
        return "setsid sh -c 'while [ ! -e go ]; do sleep 0.05; done; exit " + status + "' & echo \"rank $!\"; ";
    }

    @Test
    void shouldKeepARankThatOutlivesItsJvmAndRecordItsExactStatus() throws Exception {
        startKeeper(String.format(POLICY, 3600) + rank(7) + "exit 3");
        long rank = awaitPid("rank");
        long start = startTime(rank);
        // the "JVM" has ended: the rank runs on under the keeper
        awaitLine(l -> l.contains("the JVM ended (3); 1 process(es) kept for up to 3600 s"), "the JVM's end");
        assertTrue(keeper.isAlive(), "the keeper waits for its orphan: " + output);
        assertTrue(ProcStat.isRunning(rank, start), "the rank outlives its JVM");
        assertEquals(keeper.pid(), ProcStat.read(rank).orElseThrow().ppid(), "the keeper is the rank's parent now");

        Files.createFile(temp.resolve("go"));
        assertTrue(keeper.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS),
                "the keeper ends after its last orphan: " + output);
        assertEquals(3, keeper.exitValue(), "the keeper exits with its command's status");
        assertEquals(optionalInt(7), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start),
                "the rank's exact status is recorded for the next proxy");
    }

    @Test
    void shouldStopOrphansWhenNobodyTakesThemWithinTheWindow() throws Exception {
        // the "JVM" ends once the test has seen its rank and the rank's child run
        startKeeper(String.format(POLICY, 1)
                + "setsid sh -c 'sleep 3600 & echo \"child $!\"; wait' & echo \"rank $!\"; "
                + "while [ ! -e jvm.go ]; do sleep 0.05; done; exit 0");
        long rank = awaitPid("rank");
        long child = awaitPid("child");
        long start = startTime(rank);
        long childStart = startTime(child);

        Files.createFile(temp.resolve("jvm.go"));
        awaitLine(l -> l.contains("nobody took 1 kept process(es) over; stopping them"), "the stop");
        assertTrue(keeper.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the keeper ends once they have: " + output);
        assertFalse(ProcStat.isRunning(rank, start), "the rank was stopped");
        assertFalse(ProcStat.isRunning(child, childStart), "its child (same process group) was stopped");
        assertEquals(0, keeper.exitValue());
        assertEquals(optionalInt(128 + 15), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start),
                "SIGTERM is recorded as 128 + 15");
    }

    @Test
    void shouldLeaveOrphansToTheJvmThatOwnsThem() throws Exception {
        long self = ProcessHandle.current().pid();
        long selfStart = startTime(self);
        // this test's JVM plays the proxy that took the jobs over; with a window of 0 the keeper's
        // first look after the JVM's end decides: the owner answers, or it stops the rank
        startKeeper(String.format(POLICY, 0)
                + "printf '" + self + " " + selfStart + "\\n' > \"$MPIPROXY_KEEPER_DIR/owner\"; "
                + rank(5) + "exit 0");
        long rank = awaitPid("rank");
        long start = startTime(rank);
        String decision = awaitLine(l -> l.contains("answers for") || l.contains("stopping them"), "a decision");
        assertTrue(decision.endsWith("pid " + self + " answers for the kept processes"), output.toString());
        assertTrue(ProcStat.isRunning(rank, start), "a rank whose jobs have an owner is not stopped at the window");

        Files.createFile(temp.resolve("go"));
        assertTrue(keeper.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), output.toString());
        assertEquals(optionalInt(5), KeeperFiles.exitStatus(temp.resolve("keepers"), rank, start));
        assertFalse(output.stream().anyMatch(l -> l.contains("stopping them")), output.toString());
    }

    @Test
    void shouldPassSignalsOnToItsCommandAndExitWithItsStatus() throws Exception {
        // the keeper passes signals on from before it starts its command
        startKeeper("echo \"jvm $$\"; exec sleep 3600");
        long jvm = awaitPid("jvm");
        long start = startTime(jvm);
        keeper.destroy();
        assertTrue(keeper.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), output.toString());
        assertEquals(128 + 15, keeper.exitValue(), "the command ended by the forwarded SIGTERM: " + output);
        assertFalse(ProcStat.isRunning(jvm, start));
        assertFalse(Files.exists(keeperDirectory()), "a keeper with nothing recorded leaves no directory");
    }

    private static java.util.OptionalInt optionalInt(int value) {
        return java.util.OptionalInt.of(value);
    }
}
