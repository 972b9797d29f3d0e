package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.protocol.MpiErrors;

/**
 * The restart state when the disk or the file is not what it should be: a damaged
 * {@code restart.state} is set aside and its ranks stopped by the ledger, and the node serves; a
 * state that cannot be written at an orderly stop stops the ranks the log says it stops. Real
 * processes; every wait is for the event (a process's end), with the minute of {@link Await} as
 * the ceiling for a hang.
 */
class RestartStateFaultsTest {

    private static final long JOB = 0x0000_0000_0000_0a11L;
    private static final int MAGIC = 0x4d505253;
    /** StateCodec's tag of a long array. */
    private static final byte LONGS = 7;

    @TempDir
    Path temp;

    private final List<RankProcess> ranks = new ArrayList<>();
    private final List<V1Dispatcher> dispatchers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        dispatchers.forEach(V1Dispatcher::close);
        ranks.forEach(r -> r.stop(Duration.ZERO));
    }

    // ------------------------------------------------------------------ a state file that cannot be read

    @Test
    void shouldSetAsideAStateFileWithAHugeLengthWithoutAllocatingItAndStopItsRanksByTheLedger() throws Exception {
        Path state = temp.resolve("state");
        RankProcess rank = keptRank(state);
        // a long array announcing 64 Mi elements (512 MiB), in a file of a few bytes
        Path file = stateFile(state, MAGIC, 1, new byte[] {LONGS, 0x04, 0, 0, 0, 0, 0, 0, 0});
        byte[] original = Files.readAllBytes(file);

        long before = allocatedBytes();
        String[] log = captureErr(() -> assertNull(NodeRestart.take(state, null)));
        long allocated = allocatedBytes() - before;

        assertTrue(allocated < 64L << 20, "no allocation sized by the damaged length: " + allocated + " bytes");
        String line = onlyLineAbout(log, file);
        assertTrue(line.contains("length 67108864 of a long array needs 536870912 bytes, but only 4 are left"), line);
        assertEnded(rank);
        assertTrue(line.contains("the 1 rank process group(s) the ledger records as running are stopped"), line);
        assertSetAside(state, file, original);
        assertNull(NodeRestart.take(state, null), "set aside: not met again at the next start");
    }

    @Test
    void shouldSetAsideATruncatedStateFileAndStopItsRanks() throws Exception {
        Path state = temp.resolve("state");
        RankProcess rank = keptRank(state);
        Map<String, Object> kept = Map.of("jobs", List.of(Map.of("jobId", JOB, "ranks", List.of())));
        NodeRestart.write(kept, state);
        Path file = state.resolve(NodeRestart.FILE);
        byte[] whole = Files.readAllBytes(file);
        byte[] cut = Arrays.copyOf(whole, whole.length - 3);
        Files.write(file, cut);

        String line = onlyLineAbout(captureErr(() -> assertNull(NodeRestart.take(state, null))), file);

        assertTrue(line.contains("(it ends before its state does: " + cut.length + " bytes)"), line);
        assertEnded(rank);
        assertSetAside(state, file, cut);
    }

    @Test
    void shouldSetAsideAFileOfAnotherFormatOrVersionNamingWhich() throws Exception {
        Path state = temp.resolve("state");
        Files.createDirectories(state);
        Path file = stateFile(state, 0x12345678, 1, new byte[] {0});
        String line = onlyLineAbout(captureErr(() -> assertNull(NodeRestart.take(state, null))), file);
        assertTrue(line.contains("(not a state file (magic 12345678))"), line);

        stateFile(state, MAGIC, 7, new byte[] {0});
        line = onlyLineAbout(captureErr(() -> assertNull(NodeRestart.take(state, null))), file);
        assertTrue(line.contains("(state file version 7, this proxy reads 1)"), line);
        try (Stream<Path> files = Files.list(state)) {
            assertEquals(2, files.filter(p -> p.getFileName().toString().startsWith(NodeRestart.FILE
                    + RestartStateFile.DAMAGED)).count(), "both kept, neither overwritten");
        }
    }

    @Test
    void shouldRefuseAStateFileLargerThanTheLimitBeforeReadingIt() throws Exception {
        Path state = temp.resolve("state");
        Files.createDirectories(state);
        NodeRestart.write(Map.of("jobs", List.of(Map.of("jobId", JOB, "owner", "x".repeat(200)))), state);
        Path file = state.resolve(NodeRestart.FILE);
        long size = Files.size(file);

        String line = onlyLineAbout(captureErr(() -> assertNull(NodeRestart.take(state, null, size - 1))), file);

        assertTrue(line.contains("(it is " + size + " bytes, more than the " + (size - 1) + " a start reads)"), line);
    }

    @Test
    void shouldServeAfterAStartThatMetADamagedStateFile() throws Exception {
        Path state = temp.resolve("state");
        RankProcess rank = keptRank(state);
        Path file = stateFile(state, MAGIC, 1, new byte[] {LONGS, 0x04, 0, 0, 0, 0, 0, 0, 0});
        FakeChannelManager channels = new FakeChannelManager();
        ProxyComponent[] component = new ProxyComponent[1];

        String[] log = captureErr(() -> component[0] = new ProxyComponent(channels, TestConfigs.of(ProxyConfig.class,
                Map.of("state.directory", state.toString(), "startup.wait.seconds", 0))));
        try {
            onlyLineAbout(log, file);
            assertEnded(rank);
            assertFalse(Files.exists(file));
            RecordingTransport transport = new RecordingTransport();
            component[0].onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), new InetSocketAddress("127.0.0.1", 1),
                    transport);
            List<RecordingTransport.Sent> replies = transport.take();
            assertEquals(1, replies.size(), "the node answers");
            assertEquals(MpiErrors.ERR_IO, replies.get(0).header.result(), "no launcher bound in this test");
        } finally {
            component[0].deactivate();
        }
    }

    // ------------------------------------------------------------------ a state that cannot be written

    @Test
    void shouldStopTheRanksWhenTheStateDirectoryIsAFile() throws Exception {
        Path notADirectory = Files.writeString(temp.resolve("state"), "in the way");
        ProtocolFront front = frontWithRank("trap '' TERM\nexec sleep 600\n");
        RankProcess rank = ranks.get(0);

        String[] log = captureErr(() -> NodeRestart.leave(front::handOver, config(1), notADirectory));

        // leave() returns once the rank has ended: the stop is done, not only asked for
        assertFalse(ProcessHandle.of(rank.pid()).map(ProcessHandle::isAlive).orElse(false),
                "the rank that ignores SIGTERM got SIGKILL after the grace, before the stop ended");
        String line = onlyLine(log, "cannot save the running jobs");
        assertTrue(line.contains("cannot save the running jobs for the next start in " + notADirectory + " ("), line);
        assertTrue(line.contains("stopping their 1 rank(s)"), line);
        assertEquals("in the way", Files.readString(notADirectory), "nothing written over what is in the way");
    }

    @Test
    void shouldStopTheRanksWhenTheStateFileCannotBeWrittenNamingTheCause() throws Exception {
        Path state = temp.resolve("state");
        Files.createDirectories(state);
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
        // the temporary file's place is taken by a directory that cannot be removed
        Files.createDirectories(state.resolve(NodeRestart.FILE + ".tmp").resolve("occupied"));
        ProtocolFront front = frontWithRank("exec sleep 600\n");
        RankProcess rank = ranks.get(0);

        String[] log = captureErr(() -> NodeRestart.leave(front::handOver, config(10), state));

        assertFalse(ProcessHandle.of(rank.pid()).map(ProcessHandle::isAlive).orElse(false), "the rank is stopped");
        String line = onlyLine(log, "cannot save the running jobs");
        assertTrue(line.contains("(" + state.resolve(NodeRestart.FILE + ".tmp") + ": DirectoryNotEmptyException)"),
                line);
        assertFalse(Files.exists(state.resolve(NodeRestart.FILE)));
    }

    @Test
    void shouldNameAFullDeviceAsTheCause() {
        Path full = Path.of("/dev/full");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isWritable(full), "/dev/full is there");
        // every write to it fails with ENOSPC, as on a full file system
        IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                () -> writeThrough(full, Map.of("jobs", List.of("x".repeat(100_000)))));
        assertEquals("No space left on device", RestartStateFile.cause(e));
    }

    // ------------------------------------------------------------------ a keeper that is gone

    @Test
    void shouldEndEveryRankBeforeAShutdownThatKeepsNoJobReturns() throws Exception {
        ProtocolFront front = frontWithRank("trap '' TERM\nexec sleep 600\n");
        RankProcess rank = ranks.get(0);

        // Karaf stops and nothing keeps the jobs (no keeper here; a killed one is the same)
        NodeRestart.stop(front, config(1), true);

        assertFalse(ProcessHandle.of(rank.pid()).map(ProcessHandle::isAlive).orElse(false),
                "the rank that ignores SIGTERM got SIGKILL after the grace, before the JVM could end");
    }

    @Test
    void shouldSeeAKilledKeeperAsGoneWhileItsDescendantsRunOn() throws Exception {
        Path pidFile = temp.resolve("child.pid");
        // a stand-in for the keeper: a process with a child of its own
        Process keeper = new ProcessBuilder("sh", "-c", "sleep 600 & echo $! > " + pidFile + "; wait").start();
        try {
            Await.until(() -> isComplete(pidFile), "the child's pid written");
            ProcessHandle child = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim())).orElseThrow();
            try {
                assertTrue(KeeperPolicy.runsUnder(keeper.pid(), child), "its keeper runs");
                assertTrue(KeeperPolicy.runsUnder(ProcessHandle.current().pid(), child), "any ancestor counts");
                assertFalse(KeeperPolicy.runsUnder(child.pid(), keeper.toHandle()), "a descendant is no keeper");

                keeper.destroyForcibly();
                keeper.onExit().get(Await.CEILING.toSeconds(), TimeUnit.SECONDS);

                assertTrue(child.isAlive());
                assertFalse(KeeperPolicy.runsUnder(keeper.pid(), child), "killed: its orphans are under it no more");
                assertFalse(KeeperPolicy.runsUnder(1, child));
            } finally {
                child.destroyForcibly();
            }
        } finally {
            keeper.destroyForcibly();
        }
    }

    // ------------------------------------------------------------------ helpers

    private static boolean isComplete(Path file) {
        try {
            return Files.exists(file) && Files.readString(file).endsWith("\n");
        } catch (IOException e) {
            return false;
        }
    }


    /** Starts a real rank in its own process group and records it in the ledger of {@code state}. */
    private RankProcess keptRank(Path state) throws Exception {
        RankProcess rank = start("kept", "exec sleep 600\n", 1);
        new RankLedger(state).rankStarted(JOB, 1, rank.pid());
        assertTrue(Files.exists(new RankLedger(state).file(JOB)));
        return rank;
    }

    private RankProcess start(String name, String body, int rankId) throws Exception {
        Path script = temp.resolve(name);
        Files.writeString(script, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        RankProcess rank = RankProcessStarter.start(name, List.of(script.toString()), Map.of(), temp.resolve("logs"),
                rankId, 0);
        ranks.add(rank);
        return rank;
    }

    /** A v1 proxy with one running rank, as the protocols stand at an orderly stop. */
    private ProtocolFront frontWithRank(String body) {
        ProcessLauncher launcher = request -> {
            try {
                return start("rank" + request.rankId(), body, request.rankId());
            } catch (org.mpiproxy.api.LaunchException e) {
                throw e;
            } catch (Exception e) {
                throw new org.mpiproxy.api.LaunchException(e.toString());
            }
        };
        V1Dispatcher v1 = new V1Dispatcher(new FakeChannelManager(), new ProxySettings(temp.resolve("logs"), 1 << 20,
                Duration.ofSeconds(30), Duration.ofSeconds(1)), coreId -> launcher, () -> { }, Runnable::run,
                new ScheduledThreadPoolExecutor(1));
        dispatchers.add(v1);
        ProtocolFront front = new ProtocolFront(v1, true, null);
        RecordingTransport transport = new RecordingTransport();
        front.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), new InetSocketAddress("127.0.0.1", 40001), transport);
        front.doWork(transport);
        assertEquals(MpiErrors.SUCCESS, transport.take().get(0).header.result());
        assertEquals(1, ranks.size());
        return front;
    }

    private static ProxyConfig config(int graceSeconds) {
        return TestConfigs.of(ProxyConfig.class, Map.of("stop.grace.seconds", graceSeconds,
                "restart.survive.seconds", 15));
    }

    private static Path stateFile(Path state, int magic, int version, byte[] body) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(magic);
            out.writeInt(version);
            out.write(body);
        }
        return Files.write(state.resolve(NodeRestart.FILE), bytes.toByteArray());
    }

    private static void writeThrough(Path device, Map<String, Object> state) throws IOException {
        try (DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(
                Files.newOutputStream(device)))) {
            new StateCodec().write(out, state, "state");
        }
    }

    private static void assertEnded(RankProcess rank) throws Exception {
        ProcessHandle handle = ProcessHandle.of(rank.pid()).orElse(null);
        if (handle != null) {
            handle.onExit().get(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        }
        assertTrue(rank.onExit().get(Await.CEILING.toSeconds(), TimeUnit.SECONDS) != null, "the kept rank ended");
    }

    private static void assertSetAside(Path state, Path file, byte[] content) throws IOException {
        assertFalse(Files.exists(file), "no longer where the next start reads it");
        try (Stream<Path> files = Files.list(state)) {
            List<Path> aside = files.filter(p -> p.getFileName().toString().startsWith(NodeRestart.FILE
                    + RestartStateFile.DAMAGED)).toList();
            assertEquals(1, aside.size(), aside.toString());
            assertTrue(Arrays.equals(content, Files.readAllBytes(aside.get(0))), "kept as it was");
        }
    }

    /** @return the one line of {@code log} that names {@code file}, failing when there are none or more */
    private static String onlyLineAbout(String[] log, Path file) {
        return onlyLine(log, file.toString() + " (");
    }

    private static String onlyLine(String[] log, String part) {
        List<String> lines = Stream.of(log).filter(l -> l.contains(part)).toList();
        assertEquals(1, lines.size(), "one line with '" + part + "' in " + String.join("\n", log));
        return lines.get(0);
    }

    private static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /** Runs {@code action} and returns the lines it logged (the test logger writes to System.err). */
    private static String[] captureErr(Runnable action) {
        PrintStream old = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(old);
        }
        String text = bytes.toString(StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? new String[0] : text.split("\n");
    }
}
