package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.HealthResult.Status;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.transport.udp.internal.ReceiveSupervision;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * The proxy's v1 and v2 front behind the real receive loop, with a handler that fails on one
 * datagram: the others are served, a dead receive thread is CRITICAL in the health checks until
 * it is restarted, and a thread stuck in the handler is named.
 */
class ServingHealthTest {

    static final long NOW = 1_767_225_600_000L;
    /** A datagram of this one byte makes the handler fail (neither v1 nor v2 is one byte long). */
    static final byte POISON = 0x55;
    static final byte BLOCK = 0x56;

    /** What no loop survives: it ends the receive thread, as an {@link OutOfMemoryError} would. */
    static final class Fatal extends VirtualMachineError {
        private static final long serialVersionUID = 1L;

        Fatal() {
            super("made to end the receive thread");
        }
    }

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private final V2Datagrams host2 = new V2Datagrams(NOW);
    private final BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();
    private final CountDownLatch blocked = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicLong clock = new AtomicLong(5_000);
    private final BlockingQueue<String> log = new LinkedBlockingQueue<>();
    private final BlockingQueue<Runnable> restarts = new LinkedBlockingQueue<>();
    private final ReceiveSupervision supervision = new ReceiveSupervision(clock::get,
            (restart, delay) -> restarts.add(restart), log::add);
    private ProtocolFront front;
    private UdpTransport transport;
    private DatagramChannel host;
    private HealthCheckComponent health;
    private int rank;

    /** Fails on {@link #POISON} with the next of {@link #failures}, blocks on {@link #BLOCK}, else the proxy. */
    private final DatagramHandler faulty = new DatagramHandler() {
        @Override
        public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
            if (datagram.remaining() == 1 && datagram.get(datagram.position()) == POISON) {
                throwUnchecked(failures.remove());
            }
            if (datagram.remaining() == 1 && datagram.get(datagram.position()) == BLOCK) {
                blocked.countDown();
                awaitRelease();
                return;
            }
            front.onDatagram(datagram, source, replies);
        }

        @Override
        public int doWork(DatagramTransport replies) {
            return front.doWork(replies);
        }

        @Override
        public boolean hasPendingWork() {
            return front.hasPendingWork();
        }
    };

    private void awaitRelease() {
        try {
            release.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void throwUnchecked(Throwable t) throws T {
        throw (T) t;
    }

    @BeforeEach
    void setUp() throws Exception {
        ProxySettings settings = new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        V1Dispatcher v1 = new V1Dispatcher(channels, settings, core -> launcher, () -> transportRef.get().wakeup(),
                launches, timer);
        V2Dispatcher v2 = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE,
                Duration.ofSeconds(30), 1 << 16, 1448, Duration.ofSeconds(300)), core -> launcher,
                () -> transportRef.get().wakeup(), launches, timer, () -> NOW);
        front = new ProtocolFront(v1, true, v2);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 16, 1 << 16, 65507),
                () -> faulty, supervision);
        transportRef.set(transport);
        host = DatagramChannel.open();
        host.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        host.socket().setSoTimeout((int) Await.CEILING.toMillis());
        health = new HealthCheckComponent(TestConfigs.of(HealthCheckComponent.Config.class,
                Map.of("serving.stuck.seconds", 10)));
        health.transport = transport;
        // what the transport's bean tells, read from the transport itself (the bean is tested in its bundle)
        health.receiveThread = () -> new NodeHealth.ServingThread(transport.receiveThread().getName(),
                supervision.death() == null, supervision.death() == null ? "" : supervision.death(),
                TimeUnit.NANOSECONDS.toMillis(supervision.busyNanos()), innermostOwnFrame(transport.receiveThread()),
                supervision.restarts(), supervision.failures());
    }

    private static String innermostOwnFrame(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (!e.getClassName().startsWith("java.") && !e.getClassName().startsWith("jdk.")) {
                return e.getClassName() + "." + e.getMethodName() + "(" + e.getFileName() + ":" + e.getLineNumber() + ")";
            }
        }
        return "";
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
        transport.close();
        front.close();
        host.close();
        launches.shutdownNow();
        timer.shutdownNow();
    }

    private HealthResult serving() {
        return health.check().stream().filter(r -> r.check().equals(NodeHealth.SERVING)).findFirst().orElseThrow();
    }

    private ByteBuffer receive() throws IOException {
        java.net.DatagramPacket packet = new java.net.DatagramPacket(new byte[2048], 2048);
        try {
            host.socket().receive(packet);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no reply within " + Await.CEILING.toSeconds() + " s", e);
        }
        return ByteBuffer.wrap(packet.getData(), 0, packet.getLength()).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A v1 EXEC and a v2 STATUS are each answered. */
    private void assertV1AndV2Answered() throws IOException {
        rank++;
        host.send(V1Datagrams.exec(rank, 0, 64, "mpiping"), transport.localAddress());
        assertEquals(V1HeaderDescriptor.OP_EXEC, new V1HeaderFlyweight().wrap(receive(), 0).operation(), "v1 answered");
        host.send(host2.status(0x77, 0, 0), transport.localAddress());
        V2HeaderFlyweight reply = new V2HeaderFlyweight().wrap(receive(), 0);
        assertEquals(V2HeaderDescriptor.OP_STATUS, reply.operation(), "v2 answered");
        assertEquals(V2HeaderDescriptor.FLAG_REPLY, reply.flags() & V2HeaderDescriptor.FLAG_REPLY);
    }

    private void poison(Throwable t) throws IOException {
        failures.add(t);
        host.send(ByteBuffer.wrap(new byte[] {POISON}), transport.localAddress());
    }

    @Test
    void shouldAnswerV1AndV2AfterTheHandlerThrowsAnExceptionAnIoExceptionOrAnError() throws Exception {
        assertV1AndV2Answered();
        List<Throwable> thrown = List.of(new IllegalStateException("bad state"), new IOException("ring file"),
                new StackOverflowError(), new AssertionError("broken invariant"),
                new InternalError("a fault occurred in an unsafe memory access operation"));
        for (Throwable t : thrown) {
            poison(t);
            assertV1AndV2Answered();
        }
        List<String> lines = new ArrayList<>();
        log.drainTo(lines);
        assertEquals(thrown.size(), lines.size(), "one line per failure: " + lines);
        for (int i = 0; i < thrown.size(); i++) {
            assertTrue(lines.get(i).contains("on a datagram from " + host.getLocalAddress() + " failed: "
                    + thrown.get(i)), lines.get(i));
        }
        HealthResult serving = serving();
        assertEquals(Status.OK, serving.status(), serving.message());
        assertEquals(UdpTransport.THREAD_NAME + " serving (0 restarts, 5 failures survived)", serving.message());
    }

    @Test
    void shouldBeCriticalWhileTheReceiveThreadIsDeadAndServeAgainOnceRestarted() throws Exception {
        assertV1AndV2Answered();
        Thread first = transport.receiveThread();
        poison(new Fatal());
        Runnable restart = restarts.poll(Await.CEILING.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(restart, "the dying thread asked for its restart");
        first.join(Await.CEILING.toMillis());

        HealthResult dead = serving();
        assertEquals(Status.CRITICAL, dead.status(), dead.message());
        assertTrue(dead.message().startsWith(UdpTransport.THREAD_NAME + " died: " + Fatal.class.getName()
                + ": made to end the receive thread"), dead.message());
        assertEquals(Status.CRITICAL, HealthResult.worst(health.check()));

        restart.run();
        HealthResult again = serving();
        assertEquals(Status.OK, again.status(), again.message());
        assertEquals(UdpTransport.THREAD_NAME + " serving (1 restarts, 0 failures survived)", again.message());
        assertV1AndV2Answered();
    }

    @Test
    void shouldNameTheReceiveThreadStuckInTheHandlerBeyondTheLimitOnItsClock() throws Exception {
        host.send(ByteBuffer.wrap(new byte[] {BLOCK}), transport.localAddress());
        assertTrue(blocked.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
        clock.addAndGet(TimeUnit.SECONDS.toNanos(10));
        assertEquals(Status.OK, serving().status(), "at the limit, not beyond it");
        clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
        HealthResult stuck = serving();
        assertEquals(Status.CRITICAL, stuck.status(), stuck.message());
        assertTrue(stuck.message().startsWith(UdpTransport.THREAD_NAME + " stuck in the handler for 11 s (limit 10 s)"
                + " at " + ServingHealthTest.class.getName()), stuck.message());

        release.countDown();
        assertV1AndV2Answered();
        // the replies may leave within the blocked pass: wait for the thread to leave it
        Await.until(() -> supervision.busyNanos() == 0, "the receive thread left the blocked pass");
        assertEquals(Status.OK, serving().status());
    }

    /** The bean the probe reads, with the transport's attribute names. */
    public interface FakeTransportMXBean {
        String getReceiveThreadName();

        boolean isReceiveThreadAlive();

        String getReceiveThreadDeath();

        long getReceiveThreadBusyMillis();

        String getReceiveThreadAt();

        long getReceiveThreadRestarts();

        long getReceiveLoopFailures();
    }

    @Test
    void shouldReadTheReceiveThreadFromTheTransportsBean() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String name = "org.mpiproxy.test:type=ServingHealthTest";
        server.registerMBean(new FakeTransportMXBean() {
            public String getReceiveThreadName() {
                return "receive";
            }

            public boolean isReceiveThreadAlive() {
                return false;
            }

            public String getReceiveThreadDeath() {
                return "java.lang.OutOfMemoryError: Java heap space";
            }

            public long getReceiveThreadBusyMillis() {
                return 0;
            }

            public String getReceiveThreadAt() {
                return "";
            }

            public long getReceiveThreadRestarts() {
                return 2;
            }

            public long getReceiveLoopFailures() {
                return 3;
            }
        }, new ObjectName(name));
        try {
            assertEquals(new NodeHealth.ServingThread("receive", false, "java.lang.OutOfMemoryError: Java heap space",
                    0, "", 2, 3), ReceiveThreadProbe.of(server, name).read());
            health.receiveThread = ReceiveThreadProbe.of(server, "org.mpiproxy.test:type=Missing");
            HealthResult unreadable = serving();
            assertEquals(Status.WARN, unreadable.status());
            assertTrue(unreadable.message().startsWith("cannot read the receive thread's state"), unreadable.message());
        } finally {
            server.unregisterMBean(new ObjectName(name));
        }
    }

    @Test
    void shouldBeCriticalWithoutATransport() {
        health.transport = null;
        assertEquals(new HealthResult(NodeHealth.SERVING, Status.CRITICAL,
                "no receive thread: no UDP transport is running"), serving());
    }
}
