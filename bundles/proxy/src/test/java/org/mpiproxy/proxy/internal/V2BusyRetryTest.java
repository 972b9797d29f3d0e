package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.ReplayCache;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * The host library over real UDP against a proxy whose replay cache share for the host's address
 * is full (docs/protocol-v2.md 3.5): the launch meets busy refusals, backs off and retries, and
 * succeeds once the window has passed on the clock proxy and host share (the test moves it).
 */
class V2BusyRetryTest {

    private static final Duration LONG = Duration.ofSeconds(30);
    private static final int SHARE = 16;

    @TempDir
    Path dir;

    private final AtomicLong clock = new AtomicLong(1_767_225_600_000L);
    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ExecutorService hostThread = Executors.newSingleThreadExecutor();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private final ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    private final PrintStream diagnosticsStream = new PrintStream(diagnostics, true, StandardCharsets.UTF_8);
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

    private int start(ProcessLauncher launcher) throws Exception {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString(), "ring.capacity", 1 << 16));
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES,
                StagedPrograms.MAX_FILE_BYTES, SHARE),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, clock::get);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, dispatcher);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 20, 1 << 20, 65507), () -> front);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        hostThread.shutdownNow();
        if (transport != null) {
            transport.close();
        }
        if (dispatcher != null) {
            dispatcher.close();
        }
        launches.shutdownNow();
        timer.shutdownNow();
    }

    /** Fills 127.0.0.1's share of the replay cache with valid STATUS probes, each answered. */
    private void fillShareOf127001(int port) throws Exception {
        V2Datagrams filler = new V2Datagrams(V2Datagrams.KEYS, "127.0.0.1", clock.get());
        try (DatagramChannel c = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            InetSocketAddress proxy = new InetSocketAddress("127.0.0.1", port);
            ByteBuffer reply = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < SHARE; i++) {
                c.send(filler.status(0, 0, i), proxy);
                reply.clear();
                c.receive(reply); // blocking: the proxy answers every probe of the share
                assertEquals(V2HeaderDescriptor.OP_STATUS, reply.get(V2HeaderDescriptor.OPERATION_OFFSET));
            }
        }
        assertEquals(SHARE, dispatcher.authenticator().replaySizeOf(1,
                ReplayCache.sourceOf(new InetSocketAddress("127.0.0.1", 0).getAddress())));
    }

    private String diagnostics() {
        return diagnostics.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldRetryALaunchRefusedBusyAndSucceedOnceTheReplayWindowHasPassed() throws Exception {
        int port = start(ThreadRanks.launcher((rank, request) -> {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        fillShareOf127001(port);
        List<HostfileEntry> node = List.of(new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port, 0));

        CompletableFuture<V2HostTransport> launch = CompletableFuture.supplyAsync(() -> V2HostTransport.start(node,
                "prog", List.of(), V2Datagrams.KEYS, 1448, LONG, LONG, diagnosticsStream, null, 0, 0, clock::get),
                hostThread);

        Await.until(() -> diagnostics().contains("the proxy is busy: its replay cache is full")
                || launch.isDone(), "the host saw a busy refusal");
        assertFalse(launch.isDone(), "no launch while the share is full: " + diagnostics());
        assertTrue(dispatcher.counter(V2Counter.AUTH_REPLAY_SOURCE_FULL) >= 1);
        assertTrue(dispatcher.counter(V2Counter.REFUSALS_SENT) >= 1);
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REQUESTS), "nothing of the refused EXEC was done");
        long refusedSoFar = dispatcher.counter(V2Counter.AUTH_REPLAY_SOURCE_FULL);
        Await.until(() -> dispatcher.counter(V2Counter.AUTH_REPLAY_SOURCE_FULL) > refusedSoFar || launch.isDone(),
                "the host tried again after its back-off");
        assertFalse(launch.isDone(), "still refused, not given up: " + diagnostics());

        clock.addAndGet(2 * 30_000 + 1);

        V2HostTransport host = launch.get(1, TimeUnit.MINUTES);
        assertEquals(1, dispatcher.counter(V2Counter.EXEC_STARTED));
        assertTrue(diagnostics().contains("mpi: node 127.0.0.1:" + port + ": the proxy is busy"), diagnostics());
        release.countDown();
        assertEquals(0, host.finish()[1]);
    }
}
