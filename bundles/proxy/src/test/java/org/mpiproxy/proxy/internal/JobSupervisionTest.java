package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mpiproxy.proxy.internal.V1Datagrams.exec;
import static org.mpiproxy.proxy.internal.V1Datagrams.terminate;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.RankCommand;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.proxy.internal.RecordingTransport.Sent;

/** Abort on failure, job timeout and host silence, with real rank processes (shell scripts). */
class JobSupervisionTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path temp;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final List<RankProcess> started = new ArrayList<>();
    /** How often the dispatcher stopped a rank. */
    private final AtomicInteger stops = new AtomicInteger();
    private final Map<Integer, Sent> terminateReplies = new HashMap<>();
    private V1Dispatcher dispatcher;

    @AfterEach
    void tearDown() {
        if (dispatcher != null) {
            dispatcher.close();
        }
        for (RankProcess p : started) {
            p.stop(Duration.ZERO);
        }
    }

    /** Starts programs {@code <temp>/<name>} as real processes, each in its own process group. */
    private final ProcessLauncher launcher = new ProcessLauncher() {
        @Override
        public synchronized RankProcess launch(LaunchRequest request) throws org.mpiproxy.api.LaunchException {
            Map<String, String> env = new HashMap<>(RankCommand.environment(request, null));
            env.put("DONE", temp.resolve("done").toString());
            env.put("PIDS", temp.toString());
            RankProcess p = RankProcessStarter.start(request.program(),
                    RankCommand.argv(temp.resolve(request.program()).toString(), request), env,
                    temp.resolve("logs"), request.rankId(), 0);
            started.add(p);
            return new RankProcess() {
                @Override
                public long pid() {
                    return p.pid();
                }

                @Override
                public int coreId() {
                    return p.coreId();
                }

                @Override
                public boolean isAlive() {
                    return p.isAlive();
                }

                @Override
                public CompletableFuture<Integer> onExit() {
                    return p.onExit();
                }

                @Override
                public void stop(Duration grace) {
                    stops.incrementAndGet();
                    p.stop(grace);
                }
            };
        }
    };

    private void create(boolean abortOnFailure, Duration jobTimeout, Duration hostSilence, Duration grace) {
        dispatcher = new V1Dispatcher(channels, new ProxySettings(temp.resolve("logs"), 1 << 20,
                Duration.ofSeconds(30), grace), coreId -> launcher, transport::wakeup, Runnable::run, timer);
        dispatcher.supervision(new SupervisionSettings(abortOnFailure, jobTimeout, hostSilence));
    }

    /**
     * A dispatcher whose hosts' silence is measured on a clock the test moves, which also runs the
     * silence checks as they come due: what a check decides depends on no scheduler.
     */
    private ManualTimer createDriven(Duration hostSilence) {
        ManualTimer clock = new ManualTimer();
        dispatcher = new V1Dispatcher(channels, new ProxySettings(temp.resolve("logs"), 1 << 20,
                Duration.ofSeconds(30), Duration.ofSeconds(5)), coreId -> launcher, transport::wakeup, Runnable::run,
                clock, RateLimitedLog.DEFAULT_INTERVAL_NANOS, clock);
        dispatcher.supervision(new SupervisionSettings(false, Duration.ZERO, hostSilence));
        return clock;
    }

    private void script(String name, String body) throws IOException {
        Path file = temp.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    }

    /** Runs the relay thread's work until the condition holds; fails after {@link #WAIT}. */
    private void pumpUntil(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            dispatcher.doWork(transport);
            for (Sent s : transport.take()) {
                if (s.header.operation() == V1HeaderDescriptor.OP_TERMINATE) {
                    terminateReplies.put(s.header.rankId(), s);
                }
            }
            if (condition.getAsBoolean()) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(10);
        }
    }

    private RankInfo rank(int rankId) {
        for (JobInfo job : dispatcher.jobs()) {
            for (RankInfo r : job.ranks()) {
                if (r.rankId() == rankId) {
                    return r;
                }
            }
        }
        return null;
    }

    private boolean exited(int rankId) {
        RankInfo r = rank(rankId);
        return r != null && r.state() == RankInfo.State.EXITED;
    }

    private void startRanks(String program, int ranks) throws InterruptedException {
        for (int r = 1; r <= ranks; r++) {
            dispatcher.onDatagram(exec(r, 0, ranks + 1, program), HOST, transport);
        }
        pumpUntil("ranks running", () -> {
            for (int r = 1; r <= ranks; r++) {
                RankInfo info = rank(r);
                if (info == null || info.pid() < 0) {
                    return false;
                }
            }
            return true;
        });
    }

    private int terminateStatus(int rankId) throws InterruptedException {
        dispatcher.onDatagram(terminate(rankId, 0), HOST, transport);
        pumpUntil("TERMINATE reply of rank " + rankId, () -> terminateReplies.containsKey(rankId));
        Sent reply = terminateReplies.get(rankId);
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        return (int) reply.header.datacount();
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }

    private static void kill9(long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-KILL", Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor());
    }

    private static final String WAIT_FOR_DONE = "while [ ! -e \"$DONE\" ]; do sleep 0.05; done\nexit 0\n";

    @Test
    void shouldStopTheOtherRanksWhenOneIsKilledAndAbortOnFailureIsOn() throws Exception {
        script("worker", WAIT_FOR_DONE);
        create(true, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5));
        startRanks("worker", 3);

        kill9(rank(2).pid());

        pumpUntil("every rank exited", () -> exited(1) && exited(2) && exited(3));
        assertEquals(137, rank(2).exitStatus(), "operators see the SIGKILL");
        assertEquals(143, rank(1).exitStatus(), "stopped with SIGTERM");
        assertEquals(143, rank(3).exitStatus(), "stopped with SIGTERM");
        assertEquals(137, terminateStatus(2), "the host learns the killed rank's status");
        assertEquals(143, terminateStatus(1));
        assertEquals(143, terminateStatus(3));
        assertTrue(dispatcher.jobs().stream().allMatch(j -> j.ranks().stream()
                .allMatch(r -> r.state() == RankInfo.State.EXITED)));
    }

    @Test
    void shouldLetTheOtherRanksFinishWhenAbortOnFailureIsOff() throws Exception {
        script("worker", WAIT_FOR_DONE);
        create(false, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5));
        startRanks("worker", 3);

        kill9(rank(2).pid());
        pumpUntil("rank 2 exited", () -> exited(2));
        assertEquals(137, terminateStatus(2));
        assertTrue(started.get(0).isAlive() && started.get(2).isAlive(), "the others still run");

        Files.createFile(temp.resolve("done"));
        pumpUntil("ranks 1 and 3 exited", () -> exited(1) && exited(3));
        assertEquals(0, terminateStatus(1), "finished on its own");
        assertEquals(0, terminateStatus(3), "finished on its own");
    }

    @Test
    void shouldStopTheJobWhenARankExitsWithAnErrorCode() throws Exception {
        script("worker", "[ \"$MPIPROXY_RANK\" = 1 ] && exit 7\n" + WAIT_FOR_DONE);
        create(true, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(5));
        startRanks("worker", 2);

        pumpUntil("both exited", () -> exited(1) && exited(2));
        assertEquals(7, terminateStatus(1));
        assertEquals(143, terminateStatus(2));
    }

    @Test
    void shouldKillTheWholeTreeWhenTheJobTimesOut() throws Exception {
        // ignores SIGTERM and leaves an orphaned grandchild (which ignores it too) in its group
        script("stubborn", "trap '' TERM\n"
                + "( sleep 1000 & echo $! > \"$PIDS/grandchild-$MPIPROXY_RANK\" )\n"
                + "while :; do sleep 0.05; done\n");
        create(false, Duration.ofMillis(500), Duration.ZERO, Duration.ofMillis(500));
        long created = System.nanoTime();
        startRanks("stubborn", 2);
        pumpUntil("grandchildren started", () -> Files.exists(temp.resolve("grandchild-1"))
                && Files.exists(temp.resolve("grandchild-2")));
        long[] grandchildren = new long[3];
        long[] grandchildStarts = new long[3];
        for (int r = 1; r <= 2; r++) {
            Path file = temp.resolve("grandchild-" + r);
            pumpUntil("grandchild pid written", () -> readQuietly(file).endsWith("\n"));
            grandchildren[r] = Long.parseLong(readQuietly(file).trim());
            grandchildStarts[r] = ProcStat.read(grandchildren[r]).orElseThrow().startTime();
        }

        pumpUntil("every rank exited", () -> exited(1) && exited(2));
        assertTrue(System.nanoTime() - created >= Duration.ofSeconds(1).toNanos(), "timeout plus grace");
        assertEquals(137, terminateStatus(1), "SIGTERM ignored: SIGKILL after the grace");
        assertEquals(137, terminateStatus(2));
        for (int r = 1; r <= 2; r++) {
            assertFalse(ProcStat.isRunning(grandchildren[r], grandchildStarts[r]), "grandchild of rank " + r);
        }
    }

    @Test
    void shouldStopAndRemoveTheJobWhenItsHostFallsSilent() throws Exception {
        script("worker", WAIT_FOR_DONE);
        create(false, Duration.ZERO, Duration.ofMillis(300), Duration.ofSeconds(5));
        startRanks("worker", 2);
        long jobId = dispatcher.jobs().get(0).jobId();

        pumpUntil("job removed", () -> channels.released.contains(jobId));
        assertFalse(started.get(0).isAlive());
        assertFalse(started.get(1).isAlive());
        assertTrue(dispatcher.jobs().stream().allMatch(j -> j.ranks().stream()
                .allMatch(r -> r.state() == RankInfo.State.EXITED)), "kept in the history as exited");
    }

    @Test
    void shouldKeepAJobWhoseHostWaitsForARecvReply() throws Exception {
        script("worker", WAIT_FOR_DONE);
        ManualTimer clock = createDriven(Duration.ofMillis(300));
        startRanks("worker", 1);
        dispatcher.onDatagram(V1Datagrams.recv(1, org.mpiproxy.protocol.MpiDatatype.INT, 1), HOST, transport);
        pumpUntil("relay", () -> true);
        for (int i = 0; i < 4; i++) {
            // ten silences pass with nothing heard but the RECV, still unanswered: each check comes due
            clock.advance(Duration.ofSeconds(3));
            pumpUntil("relay", () -> true);
        }
        assertEquals(0, stops.get(), "a host blocked in RECV is not silent");
        assertTrue(started.get(0).isAlive());
        assertNotNull(rank(1));
    }

    @Test
    void shouldKeepAJobWhoseHostKeepsTalking() throws Exception {
        script("worker", WAIT_FOR_DONE);
        ManualTimer clock = createDriven(Duration.ofMillis(400));
        startRanks("worker", 1);
        for (int i = 0; i < 8; i++) {
            // a RECV of zero elements: counted, answered by nothing, but the host is heard
            dispatcher.onDatagram(V1Datagrams.recv(1, org.mpiproxy.protocol.MpiDatatype.INT, 0), HOST, transport);
            pumpUntil("relay", () -> true);
            // less than the silence after each datagram, six silences in all: the checks come due
            clock.advance(Duration.ofMillis(300));
            pumpUntil("relay", () -> true);
        }
        assertEquals(0, stops.get(), "a talking host keeps its job");
        assertTrue(started.get(0).isAlive());
        assertNull(terminateReplies.get(1));
        assertNotNull(rank(1));
        // the same host falling silent now loses it at the next check
        clock.advance(Duration.ofMillis(400));
        pumpUntil("relay", () -> true);
        assertEquals(1, stops.get(), "a host silent for the silence is stopped");
    }
}
