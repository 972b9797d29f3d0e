package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.RankOutputListener.Stream;

class RankOutputTest {

    private static final int RANKS = 8;
    private static final int LINES = 10_000;

    @TempDir
    Path temp;

    /** One call of the listener. */
    private record Output(long jobId, int rankId, Stream stream, String text, boolean partial) {
    }

    private final ConcurrentLinkedQueue<Output> received = new ConcurrentLinkedQueue<>();
    /** A permit for each stream that ended. */
    private final Semaphore ended = new Semaphore(0);
    private final RankOutputListener listener = new RankOutputListener() {
        @Override
        public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
            received.add(new Output(jobId, rankId, stream, text, partial));
        }

        @Override
        public void onEnd(long jobId, int rankId, Stream stream) {
            ended.release();
        }
    };

    @Test
    void shouldDeliverEveryLineOfEightRanksWritingAtFullSpeedExactlyOnceWholeAndTagged() throws Exception {
        // awk writes in large blocks that end mid-line: the reader must join the pieces
        Path script = TestScripts.write(temp, "flood",
                "exec awk -v r=\"$MPIPROXY_RANK\" 'BEGIN { for (i = 0; i < " + LINES + "; i++) {"
                        + " printf \"rank %d line %05d %s\\n\", r, i, \"abcdefghijklmnopqrstuvwxyz0123456789\";"
                        + " if (i % 1000 == 0) printf \"err %d %05d\\n\", r, i > \"/dev/stderr\" } }'\n");
        List<SpawnedRankProcess> ranks = new ArrayList<>();
        for (int r = 1; r <= RANKS; r++) {
            ranks.add(RankProcessStarter.start("flood", List.of(script.toString()),
                    Map.of("MPIPROXY_RANK", Integer.toString(r)), temp.resolve("logs"), 0x42L, r, 0,
                    new OutputSettings(listener, OutputSettings.DEFAULT_CAP_BYTES, false)));
        }
        for (SpawnedRankProcess p : ranks) {
            assertEquals(0, p.onExit().get(120, TimeUnit.SECONDS));
        }
        // the exit waits a while for the output to be drained; the streams' ends say it was
        assertTrue(ended.tryAcquire(2 * RANKS, 120, TimeUnit.SECONDS), "every stream ended");

        List<List<String>> perRank = new ArrayList<>();
        for (int r = 0; r <= RANKS; r++) {
            perRank.add(new ArrayList<>());
        }
        int stderrLines = 0;
        for (Output o : received) {
            assertEquals(0x42L, o.jobId());
            assertTrue(!o.partial(), "whole lines only: " + o);
            if (o.stream() == Stream.STDERR) {
                assertTrue(o.text().startsWith("err " + o.rankId() + " "), o.toString());
                stderrLines++;
            } else {
                perRank.get(o.rankId()).add(o.text());
            }
        }
        assertEquals(RANKS * (LINES / 1000), stderrLines);
        for (int r = 1; r <= RANKS; r++) {
            List<String> expected = new ArrayList<>(LINES);
            for (int i = 0; i < LINES; i++) {
                expected.add(String.format("rank %d line %05d abcdefghijklmnopqrstuvwxyz0123456789", r, i));
            }
            assertEquals(expected, perRank.get(r), "every line of rank " + r + " once, whole, in order");
            assertEquals(String.join("\n", expected) + "\n",
                    Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), r)), "log file of rank " + r);
        }
    }

    @Test
    void shouldPassPromptsWithoutNewlineOnAtOnceInRawMode() throws Exception {
        Path ready = temp.resolve("answer");
        Path script = TestScripts.write(temp, "prompt",
                "printf 'name? '\nwhile [ ! -e \"$ANSWER\" ]; do sleep 0.02; done\necho done\n");
        SpawnedRankProcess p = RankProcessStarter.start("prompt", List.of(script.toString()),
                Map.of("ANSWER", ready.toString()), temp.resolve("logs"), 7, 1, 0,
                OutputSettings.of(listener, 1 << 20, Map.of(OutputSettings.ENV_OUTPUT, "raw")));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (received.isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "the prompt arrives while the rank waits");
            Thread.sleep(10);
        }
        assertEquals(new Output(7, 1, Stream.STDOUT, "name? ", true), received.peek());
        Files.createFile(ready);
        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        assertTrue(ended.tryAcquire(2, 60, TimeUnit.SECONDS), "both streams ended");
        assertEquals(List.of(new Output(7, 1, Stream.STDOUT, "name? ", true),
                new Output(7, 1, Stream.STDOUT, "done", false)), new ArrayList<>(received));
    }

    @Test
    void shouldCapTheLogFileButStillDeliverEveryLine() throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            text.append("line ").append(i).append("\r\n");
        }
        text.append("tail without newline");
        Path file = temp.resolve("capped.out");
        long read = RankOutput.start(new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.UTF_8)), file,
                20, false, 1, 2, Stream.STDOUT, listener).get(10, TimeUnit.SECONDS);

        assertEquals(text.length(), read);
        assertEquals("line 0\r\nline 1\r\n[mpiproxy: output capped at 20 bytes]\n", Files.readString(file));
        assertEquals(101, received.size());
        List<Output> all = new ArrayList<>(received);
        assertEquals(new Output(1, 2, Stream.STDOUT, "line 99", false), all.get(99));
        assertEquals(new Output(1, 2, Stream.STDOUT, "tail without newline", true), all.get(100));
        assertEquals(Collections.nCopies(100, false), all.subList(0, 100).stream().map(Output::partial).toList());
    }

    @Test
    void shouldReadStreamsOneAfterAnotherOnReusedThreadsNamedAfterEachStreamWhileReadingIt() throws Exception {
        int streams = 20;
        List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
        List<String> names = Collections.synchronizedList(new ArrayList<>());
        RankOutputListener recorder = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                threads.add(Thread.currentThread());
                names.add(Thread.currentThread().getName());
            }
        };
        for (int i = 1; i <= streams; i++) {
            RankOutput.start(new ByteArrayInputStream(("rank " + i + "\n").getBytes(StandardCharsets.UTF_8)),
                    temp.resolve("rank-" + i + ".out"), 1024, false, 5, i, Stream.STDOUT, recorder)
                    .get(60, TimeUnit.SECONDS);
            awaitIdleOrEnded(threads.get(threads.size() - 1));
        }

        assertEquals(streams, threads.size());
        for (int i = 1; i <= streams; i++) {
            assertEquals("mpiproxy-output-0000000000000005-" + i + "-stdout", names.get(i - 1));
            assertEquals("rank " + i + "\n", Files.readString(temp.resolve("rank-" + i + ".out")));
        }
        // a finished stream's thread, once idle, serves the next one: far fewer threads than streams
        long distinct = threads.stream().distinct().count();
        assertTrue(distinct <= streams / 2, distinct + " threads read " + streams + " streams one after another");
        assertTrue(threads.stream().allMatch(Thread::isDaemon));
    }

    /**
     * Waits until a reading thread that finished its stream waits for the next one (or ended):
     * the stream's end completes before the thread is back in the pool.
     */
    private static void awaitIdleOrEnded(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (thread.isAlive() && !(thread.getName().equals("mpiproxy-output-idle")
                && thread.getState() == Thread.State.TIMED_WAITING)) {
            assertTrue(System.nanoTime() < deadline, thread + " neither idle nor ended");
            Thread.sleep(1);
        }
    }
}
