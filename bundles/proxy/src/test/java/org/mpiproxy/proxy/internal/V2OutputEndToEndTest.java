package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.process.OutputSettings;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.mpi.RankOutputHandler;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * OUTPUT end to end: real rank processes (awk, writing as fast as it can through block-buffered
 * pipes) captured by the local launcher's line reader, the v2 dispatcher streaming the lines over
 * a real UDP socket, and the host library receiving them.
 */
class V2OutputEndToEndTest {

    private static final int RANKS = 8;
    private static final int LINES = 10_000;
    /** Every this many lines, one far longer than a datagram (fragmented on the wire). */
    private static final int LONG_EVERY = 997;
    private static final int LONG_LENGTH = 3000;
    private static final int ERR_EVERY = 5;

    @TempDir
    Path dir;

    private final ExecutorService launches = Executors.newFixedThreadPool(RANKS);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

    private int start(int datagramSize) throws Exception {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString(),
                        "ring.capacity", 1 << 16));
        AtomicReference<V2Dispatcher> self = new AtomicReference<>();
        ProcessLauncher launcher = request -> RankProcessStarter.start("lines", List.of("awk", "-v",
                "r=" + request.rankId(), "-v", "n=" + LINES, "-v", "every=" + LONG_EVERY, "-v", "len=" + LONG_LENGTH,
                "-v", "errs=" + ERR_EVERY, AWK), Map.of(), request.logDirectory(), request.jobId(), request.rankId(),
                0, new OutputSettings(self.get().outputListener(), OutputSettings.DEFAULT_CAP_BYTES, false), null);
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(60),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, datagramSize, Duration.ofSeconds(300)),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        self.set(dispatcher);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, dispatcher);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 8 << 20, 8 << 20, 65507), () -> front);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

    /** Writes n lines to stdout (every {@code every}-th one {@code len} x's long) and every {@code errs}-th to stderr. */
    private static final String AWK = "BEGIN { x = \"x\"; while (length(x) < len) x = x x; x = substr(x, 1, len);"
            + " for (i = 0; i < n; i++) {"
            + "  if (i % every == 0) print \"r=\" r \" i=\" i \" \" x; else print \"r=\" r \" i=\" i \" ok\";"
            + "  if (i % errs == 0) print \"err r=\" r \" i=\" i > \"/dev/stderr\" } }";

    private static String expectedOut(int r, int i) {
        return "r=" + r + " i=" + i + " " + (i % LONG_EVERY == 0 ? "x".repeat(LONG_LENGTH) : "ok");
    }

    @AfterEach
    void tearDown() {
        if (transport != null) {
            transport.close();
        }
        if (dispatcher != null) {
            dispatcher.close();
        }
        launches.shutdownNow();
        timer.shutdownNow();
    }

    @Test
    void shouldDeliverEveryLineOfEightRanksExactlyOnceWholeAndInOrder() throws Exception {
        int port = start(1448);
        List<List<String>> out = new ArrayList<>();
        List<List<String>> err = new ArrayList<>();
        List<String> problems = Collections.synchronizedList(new ArrayList<>());
        for (int r = 0; r <= RANKS; r++) {
            out.add(Collections.synchronizedList(new ArrayList<>()));
            err.add(Collections.synchronizedList(new ArrayList<>()));
        }
        RankOutputHandler handler = new RankOutputHandler() {
            @Override
            public void onLine(int rank, boolean stderr, String line, boolean partial) {
                if (partial) {
                    problems.add("partial line of rank " + rank + ": " + line);
                }
                (stderr ? err : out).get(rank).add(line);
            }

            @Override
            public void onDropped(int rank, boolean stderr, long lines) {
                problems.add(lines + " lines of rank " + rank + " dropped");
            }
        };
        List<HostfileEntry> hosts = new ArrayList<>();
        for (int r = 1; r <= RANKS; r++) {
            hosts.add(new HostfileEntry(r, new byte[] {127, 0, 0, 1}, port, 0));
        }
        V2HostTransport host = V2HostTransport.start(hosts, "lines", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err, handler);
        // TERMINATE is answered only after each rank's output has been acknowledged
        int[] statuses = host.finish();
        int[] zeros = new int[RANKS + 1];
        assertArrayEquals(zeros, statuses);
        assertEquals(List.of(), problems);
        for (int r = 1; r <= RANKS; r++) {
            List<String> lines = out.get(r);
            assertEquals(LINES, lines.size(), "stdout lines of rank " + r);
            for (int i = 0; i < LINES; i++) {
                String expected = expectedOut(r, i);
                if (!expected.equals(lines.get(i))) {
                    throw new AssertionError("rank " + r + " stdout line " + i + ": expected '" + shorten(expected)
                            + "' but got '" + shorten(lines.get(i)) + "'");
                }
            }
            List<String> errors = err.get(r);
            assertEquals(LINES / ERR_EVERY, errors.size(), "stderr lines of rank " + r);
            for (int k = 0; k < errors.size(); k++) {
                assertEquals("err r=" + r + " i=" + (k * ERR_EVERY), errors.get(k));
            }
        }
        Map<String, Long> counters = dispatcher.counters();
        assertEquals(0L, counters.get("v2.output.dropped"));
        assertEquals((long) RANKS * (LINES + LINES / ERR_EVERY), counters.get("v2.output.lines"));
        assertTrue(counters.get("v2.output.fragments") > counters.get("v2.output.lines"),
                "long lines travel in several fragments: " + counters);
    }

    private static String shorten(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "...(" + s.length() + " chars)" : s;
    }
}
