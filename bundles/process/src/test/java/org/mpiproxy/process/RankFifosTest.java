package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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

    @TempDir
    Path temp;

    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Long> holders = new java.util.ArrayList<>();
    private SpawnedRankProcess process;

    /** Collects "stream:text" and "stream:text(partial)" lines, and "stream:end". */
    private final RankOutputListener listener = new RankOutputListener() {
        @Override
        public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
            lines.add(stream.name().toLowerCase(java.util.Locale.ROOT) + ":" + text + (partial ? "(partial)" : ""));
        }

        @Override
        public void onEnd(long jobId, int rankId, Stream stream) {
            lines.add(stream.name().toLowerCase(java.util.Locale.ROOT) + ":end");
        }
    };

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
        process = RankProcessStarter.start("rank", List.of(script.toString()), Map.of(), temp.resolve("logs"), JOB, 1,
                0, new OutputSettings(listener, OutputSettings.DEFAULT_CAP_BYTES, false));
        return process;
    }

    /** Detaches the readers as a stopping JVM does; the holder keeps the FIFOs. */
    private Map<String, byte[]> detach() throws Exception {
        List<Path> fifos = RankOutput.fifos();
        assertEquals(2, fifos.size(), "both streams are FIFOs: " + fifos);
        holders.add(RankFifos.hold(fifos, 30));
        return RankOutput.detachAll(Duration.ofSeconds(5));
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
        SpawnedRankProcess p = start("i=0\nwhile [ $i -lt 300 ]; do echo \"line $i\"; i=$((i+1));"
                + " if [ $((i % 50)) -eq 0 ]; then sleep 0.2; fi; done\n"
                + "printf 'begun '\nsleep 1\nprintf 'and ended\\n'\necho oops >&2\nexit 4\n");
        long start = ProcStat.read(p.pid()).orElseThrow().startTime();
        Path keepers = recordExit(p, start);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lines.size() < 60 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Map<String, byte[]> begun = detach();
        int before = lines.size();
        assertTrue(before >= 60 && before < 300, "detached while the rank writes: " + before + " lines so far");
        assertFalse(lines.contains("stdout:end"), "a detached stream does not end");

        AdoptedRankProcess adopted = AdoptedRankProcess.adopt(p.pid(), start, 0, keepers, temp.resolve("logs"), temp.resolve("logs"), JOB,
                1, listener, begun);
        assertEquals(4, adopted.onExit().get(30, TimeUnit.SECONDS), "the status its keeper recorded");
        assertTrue(adopted.statusKnown());
        List<String> out = lines.stream().filter(l -> l.startsWith("stdout:")).toList();
        List<String> expected = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            expected.add("stdout:line " + i);
        }
        expected.add("stdout:begun and ended");
        expected.add("stdout:end");
        assertEquals(expected, out, "every line once, in order, across the two readers");
        assertTrue(lines.contains("stderr:oops") && lines.contains("stderr:end"), lines.toString());
        String log = Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1));
        assertTrue(log.contains("line 0\n") && log.contains("line 299\nbegun and ended\n"), "the log file goes on too");
        assertFalse(Files.exists(RankFifos.path(temp.resolve("logs"), 1, RankOutputListener.Stream.STDOUT)),
                "the FIFO is removed at its end");
    }

    @Test
    void shouldKeepTheOutputOfARankThatEndsWhileNobodyReads() throws Exception {
        SpawnedRankProcess p = start("sleep 0.5\necho late\nexit 6\n");
        long start = ProcStat.read(p.pid()).orElseThrow().startTime();
        Path keepers = recordExit(p, start);
        Map<String, byte[]> begun = detach();
        assertTrue(p.onExit().get(10, TimeUnit.SECONDS) == 6);
        Thread.sleep(200);
        assertFalse(lines.contains("stdout:late"), "nobody read it yet");

        AdoptedRankProcess adopted = AdoptedRankProcess.adopt(p.pid(), start, 0, keepers, temp.resolve("logs"), temp.resolve("logs"), JOB,
                1, listener, begun);
        assertEquals(6, adopted.onExit().get(30, TimeUnit.SECONDS));
        assertTrue(lines.contains("stdout:late"), "the holder kept what the rank wrote before it ended: " + lines);
        assertFalse(adopted.isAlive());
    }
}
