package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankOutputListener;

/**
 * A rank's output through FIFOs outlives the reader: the reader is detached as a stopping JVM
 * does, a holder keeps the FIFOs open, and a new reader ({@link AdoptedRankProcess}, as the next
 * JVM makes) goes on from the first byte the old one did not read, with the line it had begun.
 */
class RankFifosTest {

    private static final long JOB = 0x51L;
    /** Longest wait for a process event: only catches a hang. */
    private static final long TIMEOUT_SECONDS = 60;

    @TempDir
    Path temp;

    private final List<String> lines = new CopyOnWriteArrayList<>();
    /** Counted down when their line arrives. */
    private final Map<String, CountDownLatch> awaited = new ConcurrentHashMap<>();
    private final List<Long> holders = new java.util.ArrayList<>();
    private SpawnedRankProcess process;

    /** Collects "stream:text" and "stream:text(partial)" lines, and "stream:end". */
    private final RankOutputListener listener = new RankOutputListener() {
        @Override
        public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
            arrived(stream.name().toLowerCase(java.util.Locale.ROOT) + ":" + text + (partial ? "(partial)" : ""));
        }

        @Override
        public void onEnd(long jobId, int rankId, Stream stream) {
            arrived(stream.name().toLowerCase(java.util.Locale.ROOT) + ":end");
        }

        private void arrived(String line) {
            lines.add(line);
            CountDownLatch latch = awaited.get(line);
            if (latch != null) {
                latch.countDown();
            }
        }
    };

    private void awaitLine(String line) throws InterruptedException {
        CountDownLatch latch = awaited.computeIfAbsent(line, l -> new CountDownLatch(1));
        if (!lines.contains(line)) {
            assertTrue(latch.await(TIMEOUT_SECONDS, TimeUnit.SECONDS), line + " arrives: " + lines);
        }
    }

    @BeforeEach
    void useFifos() {
        System.setProperty(RankProcessStarter.FIFO_PROPERTY, "true");
    }

    @AfterEach
    void cleanUp() {
        System.clearProperty(RankProcessStarter.FIFO_PROPERTY);
        if (process != null && process.isAlive()) {
            process.stop(Duration.ZERO);
        }
        holders.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private SpawnedRankProcess start(String body) throws Exception {
        Path script = TestScripts.write(temp, "rank", body);
        process = RankProcessStarter.start("rank", List.of(script.toString()), Map.of("GO", go().toString()),
                temp.resolve("logs"), JOB, 1, 0, new OutputSettings(listener, OutputSettings.DEFAULT_CAP_BYTES, false));
        return process;
    }

    /** The file whose creation lets the rank go on ({@code $GO}). */
    private Path go() {
        return temp.resolve("go");
    }

    /** Detaches the readers as a stopping JVM does; the holder keeps the FIFOs. */
    private Map<String, byte[]> detach() throws Exception {
        List<Path> fifos = RankOutput.fifos();
        assertEquals(2, fifos.size(), "both streams are FIFOs: " + fifos);
        holders.add(RankFifos.hold(fifos, 600));
        return RankOutput.detachAll(Duration.ofSeconds(TIMEOUT_SECONDS));
    }

    /** Records the exit where a keeper would, as the stopping JVM does for exits it still sees. */
    private Path recordExit(SpawnedRankProcess p, long start) throws Exception {
        Path keeper = Files.createDirectories(temp.resolve("keepers").resolve("keeper-1"));
        p.onExit().thenAccept(status -> {
            try {
                KeeperFiles.writeExit(keeper, p.pid(), start, status);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        return keeper.getParent();
    }

    @Test
    void shouldGoOnWithTheNextReaderWithoutLosingOrRepeatingAByte() throws Exception {
        // the rank stops in the middle of a line (one write: "line 149" and "begun " are read
        // together) until the first reader is detached
        SpawnedRankProcess p = start("i=0\nwhile [ $i -lt 149 ]; do echo \"line $i\"; i=$((i+1)); done\n"
                + "printf 'line 149\\nbegun '\n"
                + "while [ ! -e \"$GO\" ]; do sleep 0.05; done\n"
                + "printf 'and ended\\n'\n"
                + "i=150\nwhile [ $i -lt 300 ]; do echo \"line $i\"; i=$((i+1)); done\n"
                + "echo oops >&2\nexit 4\n");
        long start = ProcStat.read(p.pid()).orElseThrow().startTime();
        Path keepers = recordExit(p, start);
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 150; i++) {
            expected.add("stdout:line " + i);
        }
        awaitLine("stdout:line 149");
        Map<String, byte[]> begun = detach();
        assertEquals(expected, lines, "every whole line so far, and no end: a detached stream does not end");
        assertEquals(List.of(RankOutput.key(JOB, 1, RankOutputListener.Stream.STDOUT)), List.copyOf(begun.keySet()));
        assertEquals("begun ", new String(begun.values().iterator().next(), java.nio.charset.StandardCharsets.UTF_8),
                "the line begun goes to the next reader");
        Files.createFile(go());

        AdoptedRankProcess adopted = AdoptedRankProcess.adopt(p.pid(), start, 0, keepers, temp.resolve("logs"), temp.resolve("logs"), JOB,
                1, listener, begun);
        assertEquals(4, adopted.onExit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS), "the status its keeper recorded");
        assertTrue(adopted.statusKnown());
        List<String> out = lines.stream().filter(l -> l.startsWith("stdout:")).toList();
        expected.add("stdout:begun and ended");
        for (int i = 150; i < 300; i++) {
            expected.add("stdout:line " + i);
        }
        expected.add("stdout:end");
        assertEquals(expected, out, "every line once, in order, across the two readers");
        assertTrue(lines.contains("stderr:oops") && lines.contains("stderr:end"), lines.toString());
        String log = Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1));
        assertTrue(log.startsWith("line 0\n") && log.contains("line 149\nbegun and ended\nline 150\n")
                && log.endsWith("line 299\n"), "the log file goes on too: " + log);
        assertFalse(Files.exists(RankFifos.path(temp.resolve("logs"), 1, RankOutputListener.Stream.STDOUT)),
                "the FIFO is removed at its end");
    }

    @Test
    void shouldKeepTheOutputOfARankThatEndsWhileNobodyReads() throws Exception {
        SpawnedRankProcess p = start("while [ ! -e \"$GO\" ]; do sleep 0.05; done\necho late\nexit 6\n");
        long start = ProcStat.read(p.pid()).orElseThrow().startTime();
        Path keepers = recordExit(p, start);
        Map<String, byte[]> begun = detach();
        Files.createFile(go());
        // the exit comes once the rank's output is read, or its readers were detached
        assertEquals(6, p.onExit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of(), lines, "nobody read it yet");

        AdoptedRankProcess adopted = AdoptedRankProcess.adopt(p.pid(), start, 0, keepers, temp.resolve("logs"), temp.resolve("logs"), JOB,
                1, listener, begun);
        assertEquals(6, adopted.onExit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        assertTrue(lines.contains("stdout:late"), "the holder kept what the rank wrote before it ended: " + lines);
        assertFalse(adopted.isAlive());
    }
}
