package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/** A launch that takes longer than a second reports how many ranks are up, over real UDP. */
class V2LaunchProgressTest {

    private static final int RANKS = 6;

    @TempDir
    Path dir;

    /** One launch at a time, each 400 ms: six ranks take about 2.4 s. */
    private final ExecutorService launches = Executors.newSingleThreadExecutor();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private final AtomicInteger started = new AtomicInteger();
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

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
    void shouldReportHowManyRanksAreUpDuringASlowLaunch() throws Exception {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString(),
                        "ring.capacity", 1 << 16));
        FakeLauncher fake = new FakeLauncher();
        ProcessLauncher slow = request -> {
            try {
                Thread.sleep(400);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            started.incrementAndGet();
            synchronized (fake) {
                return fake.launch(request);
            }
        };
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300)),
                core -> slow, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> slow, () -> { },
                launches, timer), false, dispatcher);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 20, 1 << 20, 65507), () -> front);
        transportRef.set(transport);
        int port = transport.localAddress().getPort();
        List<HostfileEntry> hosts = new ArrayList<>();
        for (int r = 1; r <= RANKS; r++) {
            hosts.add(new HostfileEntry(r, new byte[] {127, 0, 0, 1}, port, 0));
        }
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();

        V2HostTransport host = V2HostTransport.start(hosts, "slow", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(30), new PrintStream(diagnostics, true, StandardCharsets.UTF_8));

        assertEquals(RANKS, started.get(), "every EXEC was answered once its rank started");
        String text = diagnostics.toString(StandardCharsets.UTF_8);
        assertTrue(text.matches("(?s)(mpi: [0-5] of 6 ranks started\n)+mpi: all 6 ranks answered in \\d+ ms\n"), text);
        synchronized (fake) {
            fake.processes.forEach(p -> p.exitWith(0));
        }
        assertArrayEquals(new int[RANKS + 1], host.finish());
    }
}
