package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.RankOutputListener.Stream;

/**
 * The ranks' output is read by one poller thread, whatever the number of ranks, every line in
 * order; a rank that floods its output is held to its rate; without epoll a stream is read on a
 * thread of its own.
 */
class OutputPollerTest {

    /** Longest wait for an event: only catches a hang. */
    private static final long CEILING_SECONDS = 120;
    private static final int RANKS = 64;
    private static final int LINES = 1000;
    private static final long SLICE_NANOS = OutputPoller.SLICE_MILLIS * 1_000_000L;

    @TempDir
    Path temp;

    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void linuxWithNativeSpawn() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        assertNull(NativeSpawn.instance().unavailableReason(), "native spawn is not available");
    }

    @AfterEach
    void killLeftovers() {
        started.forEach(Process::destroyForcibly);
    }

    private static long threadsNamed(String prefix) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
    }

    @Test
    void shouldReadSixtyFourRanksOnOneThreadEveryLineInOrderAndLogged() throws Exception {
        assertTrue(OutputPoller.shared() != null, "epoll is available");
        Path go = temp.resolve("go");
        // each rank writes its lines, then waits (its pipes open) until the test has counted threads
        Path script = TestScripts.write(temp, "lines", "for i in $(seq " + LINES + "); do echo line $i; done\n"
                + "while [ ! -e \"$GO\" ]; do sleep 0.1; done\n");
        Map<Integer, List<String>> perRank = new ConcurrentHashMap<>();
        CountDownLatch allLines = new CountDownLatch(RANKS * LINES);
        RankOutputListener listener = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                perRank.computeIfAbsent(rankId, r -> new ArrayList<>()).add(text + (partial ? "(partial)" : ""));
                allLines.countDown();
            }
        };
        int threadsBefore = Thread.activeCount();
        long outputThreadsBefore = threadsNamed("mpiproxy-output-");
        long reapersBefore = threadsNamed("mpiproxy-rank-reaper");
        List<SpawnedRankProcess> ranks = new ArrayList<>();
        try {
            for (int r = 1; r <= RANKS; r++) {
                ranks.add(RankProcessStarter.start("lines", List.of(script.toString()),
                        Map.of("GO", go.toString()), temp.resolve("logs"), 0x64L, r, 0,
                        new OutputSettings(listener, OutputSettings.DEFAULT_CAP_BYTES, false)));
            }
            assertTrue(allLines.await(CEILING_SECONDS, TimeUnit.SECONDS), "every line arrives");

            // all 64 ranks run, their 128 pipes open
            assertTrue(ranks.stream().allMatch(SpawnedRankProcess::isAlive));
            assertTrue(threadsNamed(OutputPoller.THREAD_NAME) == 1, "one poller thread");
            assertTrue(threadsNamed("mpiproxy-output-") <= Math.max(1, outputThreadsBefore),
                    "no reading thread per stream");
            assertEquals(reapersBefore, threadsNamed("mpiproxy-rank-reaper"), "no waiting thread per rank");
            int grown = Thread.activeCount() - threadsBefore;
            assertTrue(grown <= 6, RANKS + " ranks grew the JVM by " + grown + " threads");
        } finally {
            Files.createFile(go);
        }
        for (SpawnedRankProcess p : ranks) {
            assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        }
        List<String> expected = new ArrayList<>();
        for (int i = 1; i <= LINES; i++) {
            expected.add("line " + i);
        }
        for (int r = 1; r <= RANKS; r++) {
            assertEquals(expected, perRank.get(r), "every line of rank " + r + " once, whole, in order");
            assertEquals(String.join("\n", expected) + "\n",
                    Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), r)), "log file of rank " + r);
        }
    }

    @Test
    void shouldHoldAFloodingRankToItsRateAndLoseNothing() throws Exception {
        long rate = 1_000_000;
        long slice = rate * SLICE_NANOS / 1_000_000_000L;
        // one read's worth of "y\n" lines beyond the slice: a read starts while the slice has bytes left
        long overshoot = (long) OutputPoller.READ_BUDGET / 2 * (2 + OutputPoller.LINE_CHARGE);
        AtomicLong clock = new AtomicLong(1_000 * SLICE_NANOS);
        OutputPoller poller = new OutputPoller(Epoll.load(), "test-output-poller", rate, clock::get);
        Semaphore events = new Semaphore(0);
        poller.onPause(events::release);
        AtomicLong lines = new AtomicLong();
        ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
        RankOutputListener listener = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                if (!text.equals("y") || partial) {
                    wrong.add(text);
                }
                lines.incrementAndGet();
            }
        };
        Process yes = NativeSpawn.instance().spawn(List.of("yes"), List.of("PATH=/usr/bin:/bin"), -1);
        started.add(yes);
        yes.getErrorStream().close();
        CompletableFuture<Long> done = RankOutput.start(yes.getInputStream(), temp.resolve("yes.out"), 1 << 20, false,
                1, 1, Stream.STDOUT, listener, null, poller);
        done.whenComplete((n, e) -> events.release());

        assertTrue(events.tryAcquire(CEILING_SECONDS, TimeUnit.SECONDS), "the flood is paused");
        assertEquals(1, poller.paused().get(CEILING_SECONDS, TimeUnit.SECONDS));
        long seen = lines.get();
        long charged = seen * (2 + OutputPoller.LINE_CHARGE);
        assertTrue(charged >= slice - 200 && charged < slice + overshoot, "first slice charged " + charged);
        // no time passes: nothing more is read, however much the rank has written
        assertEquals(1, poller.paused().get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals(seen, lines.get(), "nothing read while paused");

        for (int round = 0; round < 3; round++) {
            // four seconds pass: the saved-up share is one slice's, not forty
            clock.addAndGet(40 * SLICE_NANOS);
            poller.paused().get(CEILING_SECONDS, TimeUnit.SECONDS);
            assertTrue(events.tryAcquire(CEILING_SECONDS, TimeUnit.SECONDS), "paused again");
            assertEquals(1, poller.paused().get(CEILING_SECONDS, TimeUnit.SECONDS));
            long now = lines.get();
            long roundCharged = (now - seen) * (2 + OutputPoller.LINE_CHARGE);
            assertTrue(roundCharged >= slice - 200 && roundCharged < slice + overshoot,
                    "round " + round + " charged " + roundCharged);
            seen = now;
        }
        assertTrue(yes.isAlive(), "the rank is slowed, not stopped");

        yes.destroyForcibly();
        assertEquals(128 + 9, yes.waitFor());
        while (!done.isDone()) {
            // what is left in the pipe is read, slice by slice, then the end
            clock.addAndGet(40 * SLICE_NANOS);
            poller.paused().get(CEILING_SECONDS, TimeUnit.SECONDS);
            assertTrue(events.tryAcquire(CEILING_SECONDS, TimeUnit.SECONDS), "paused again or ended");
        }
        long read = done.get();
        assertEquals(read, 2 * lines.get(), "every byte read became a line");
        assertEquals(List.of(), List.copyOf(wrong), "whole lines only");
    }

    @Test
    void shouldReadOnAThreadPerStreamWithOneWarningWhereEpollIsMissing() throws Exception {
        List<String> warnings = new ArrayList<>();
        assertNull(OutputPoller.open(() -> {
            throw new IOException("epoll needs Linux");
        }, OutputPoller.DEFAULT_RATE, System::nanoTime, warnings::add));
        assertEquals(List.of("rank output is read on a thread per stream: epoll needs Linux"), warnings);

        ConcurrentLinkedQueue<String> readers = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> received = new ConcurrentLinkedQueue<>();
        RankOutputListener listener = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                readers.add(Thread.currentThread().getName());
                received.add(text);
            }
        };
        Process p = NativeSpawn.instance().spawn(List.of("/bin/sh", "-c", "echo one; echo two"),
                List.of("PATH=/usr/bin:/bin"), -1);
        started.add(p);
        p.getErrorStream().close();
        long read = RankOutput.start(p.getInputStream(), temp.resolve("sh.out"), 1 << 20, false, 9, 1, Stream.STDOUT,
                listener, null, null).get(CEILING_SECONDS, TimeUnit.SECONDS);

        assertEquals(8, read);
        assertEquals(List.of("one", "two"), List.copyOf(received));
        assertEquals(List.of("mpiproxy-output-0000000000000009-1-stdout", "mpiproxy-output-0000000000000009-1-stdout"),
                List.copyOf(readers));
        assertEquals("one\ntwo\n", Files.readString(temp.resolve("sh.out")));
    }
}
