package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * How fast and how clearly the v2 host library tells a node it cannot use, over real UDP: nothing
 * listening on the port, another cluster key, a proxy stopped mid-job, a node gone silent; and
 * that a live node that is slow to launch is not declared dead.
 */
class V2UnreachableNodeTest {

    /** Long enough that only a probe, an ICMP error or a refusal can end the waits below in time. */
    private static final Duration LONG = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private final ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    private final PrintStream diagnosticsStream = new PrintStream(diagnostics, true, StandardCharsets.UTF_8);
    private volatile boolean mute;
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

    /** A proxy whose ranks wait for {@link #release}; {@link #mute} makes it drop every datagram. */
    private int start(ProcessLauncher launcher) throws Exception {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString(), "ring.capacity", 1 << 16));
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300)),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, dispatcher);
        DatagramHandler handler = new DatagramHandler() {
            @Override
            public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
                if (!mute) {
                    front.onDatagram(datagram, source, replies);
                }
            }

            @Override
            public int doWork(DatagramTransport replies) {
                return mute ? 0 : front.doWork(replies);
            }

            @Override
            public boolean hasPendingWork() {
                return front.hasPendingWork();
            }
        };
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 20, 1 << 20, 65507), () -> handler);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

    private ProcessLauncher waitingRanks() {
        return ThreadRanks.launcher((rank, request) -> {
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @AfterEach
    void tearDown() {
        release.countDown();
        if (transport != null) {
            transport.close();
        }
        if (dispatcher != null) {
            dispatcher.close();
        }
        launches.shutdownNow();
        timer.shutdownNow();
    }

    private static List<HostfileEntry> node(int port) {
        return List.of(new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port, 0));
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void shouldFailALaunchWithinAFewSecondsWhenNothingListensOnTheNodesPort() throws Exception {
        int port;
        try (DatagramChannel gone = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            port = ((InetSocketAddress) gone.getLocalAddress()).getPort();
        }
        long start = System.nanoTime();

        MpiException e = assertThrows(MpiException.class, () -> V2HostTransport.start(node(port), "prog", List.of(),
                V2Datagrams.KEYS, 1448, LONG, LONG, diagnosticsStream));

        long took = millisSince(start);
        assertTrue(took < 5000, "took " + took + " ms");
        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertTrue(e.getMessage().contains("rank 1 on 127.0.0.1:" + port + ":0: no proxy answers at 127.0.0.1:"
                + port + ": nothing listens on that UDP port"), e.getMessage());
    }

    @Test
    void shouldFailALaunchWithinAFewSecondsWithAuthenticationFailedWhenTheKeysDiffer() throws Exception {
        int port = start(waitingRanks());
        ClusterKeys other = ClusterKeys.of(Map.of(1, new byte[32]), 1);
        long start = System.nanoTime();

        MpiException e = assertThrows(MpiException.class, () -> V2HostTransport.start(node(port), "prog", List.of(),
                other, 1448, LONG, LONG, diagnosticsStream));

        long took = millisSince(start);
        assertTrue(took < 5000, "took " + took + " ms");
        assertTrue(e.getMessage().contains("rank 1 on 127.0.0.1:" + port + ":0: authentication failed: the proxy"
                + " could not verify a request signed with key id 1"), e.getMessage());
        assertTrue(dispatcher.counter(V2Counter.REFUSALS_SENT) >= 1);
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REQUESTS), "no request of the stranger was interpreted");
    }

    @Test
    void shouldReportAProxyStoppedMidJobWithinTenSeconds() throws Exception {
        int port = start(waitingRanks());
        V2HostTransport host = V2HostTransport.start(node(port), "prog", List.of(), V2Datagrams.KEYS, 1448, LONG,
                LONG, diagnosticsStream);
        transport.close();
        long start = System.nanoTime();

        MpiException e = assertThrows(MpiException.class, () -> host.recv(MpiDatatype.INT.code(),
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN), 0, 1, 1));

        long took = millisSince(start);
        assertTrue(took < 10_000, "took " + took + " ms");
        assertTrue(e.getMessage().contains("rank 1 on 127.0.0.1:" + port + ":0: no proxy answers at 127.0.0.1:"
                + port + ": nothing listens on that UDP port"), e.getMessage());
        assertTrue(e.getMessage().contains("the proxy stopped"), e.getMessage());
        host.finish();
    }

    @Test
    void shouldWaitTheRestartWaitForAStoppedProxyBeforeFailing() throws Exception {
        int port = start(waitingRanks());
        V2HostTransport host = V2HostTransport.start(node(port), "prog", List.of(), V2Datagrams.KEYS, 1448, LONG,
                LONG, diagnosticsStream).restartWait(Duration.ofSeconds(6));
        transport.close();
        long start = System.nanoTime();

        MpiException e = assertThrows(MpiException.class, () -> host.recv(MpiDatatype.INT.code(),
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN), 0, 1, 1));

        long took = millisSince(start);
        assertTrue(took >= 6_000 && took < 20_000, "a job that waits for restarts waits 6 s, took " + took + " ms");
        assertTrue(e.getMessage().contains("nothing listens on that UDP port"), e.getMessage());
        host.finish();
    }

    @Test
    void shouldDeclareANodeDeadThatFallsSilentMidJobAfterTheSilence() throws Exception {
        int port = start(waitingRanks());
        V2HostTransport host = V2HostTransport.start(node(port), "prog", List.of(), V2Datagrams.KEYS, 1448, LONG,
                Duration.ofMillis(2000), diagnosticsStream);
        // a machine that went down: no answer, no ICMP error
        mute = true;
        long start = System.nanoTime();

        MpiException e = assertThrows(MpiException.class, () -> host.recv(MpiDatatype.INT.code(),
                ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN), 0, 1, 1));

        long took = millisSince(start);
        assertTrue(took >= 2000 && took < 10_000, "took " + took + " ms");
        assertTrue(e.getMessage().contains("no proxy answers at 127.0.0.1:" + port + ": nothing heard for 2000 ms, no"
                + " refusal and no ICMP error"), e.getMessage());
        host.finish();
    }

    @Test
    void shouldNotDeclareALiveNodeDeadWhileItsLaunchTakesLongerThanTheSilenceAndReportProgressOnce()
            throws Exception {
        ProcessLauncher ranks = waitingRanks();
        int port = start(request -> {
            try {
                // an EXEC is answered once the process started: this one takes 5 s, twice the silence
                Thread.sleep(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return ranks.launch(request);
        });

        V2HostTransport host = V2HostTransport.start(node(port), "slow", List.of(), V2Datagrams.KEYS, 1448, LONG,
                Duration.ofMillis(2500), diagnosticsStream);

        String text = diagnostics.toString(StandardCharsets.UTF_8);
        assertTrue(text.matches("mpi: 0 of 1 ranks started\nmpi: all 1 ranks answered in \\d+ ms\n"), text);
        assertTrue(dispatcher.counter(V2Counter.STATUS_PROBES) >= 2, "the silent node was probed");
        release.countDown();
        host.finish();
    }
}
