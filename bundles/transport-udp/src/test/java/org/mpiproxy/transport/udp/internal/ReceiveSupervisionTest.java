package org.mpiproxy.transport.udp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;

/** The receive thread survives what a handler throws, is reported and restarted when it dies, and tells when it is stuck. */
class ReceiveSupervisionTest {

    /** A ceiling that only catches hangs: every wait here ends with its event. */
    private static final long AWAIT_SECONDS = 60;

    /** What no loop survives: it ends the thread, as an {@link OutOfMemoryError} would. */
    static final class Fatal extends VirtualMachineError {
        private static final long serialVersionUID = 1L;

        Fatal() {
            super("made to end the receive thread");
        }
    }

    /**
     * Echoes every datagram, except one whose text is {@code throw}: that one throws the next of
     * {@link #failures}; and {@code block}, which waits on {@link #release} inside the handler.
     */
    static final class FaultyHandler implements DatagramHandler {
        final BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();
        final CountDownLatch blocked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
            String text = StandardCharsets.US_ASCII.decode(datagram.duplicate()).toString();
            if (text.equals("throw")) {
                throwUnchecked(failures.remove());
            }
            if (text.equals("block")) {
                blocked.countDown();
                try {
                    release.await(AWAIT_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            replies.send(datagram, source);
        }

        @Override
        public int doWork(DatagramTransport replies) {
            return 0;
        }

        @Override
        public boolean hasPendingWork() {
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void throwUnchecked(Throwable t) throws T {
        throw (T) t;
    }

    private final FaultyHandler handler = new FaultyHandler();
    private final AtomicLong clock = new AtomicLong(1_000);
    private final BlockingQueue<String> log = new LinkedBlockingQueue<>();
    private final BlockingQueue<Runnable> restarts = new LinkedBlockingQueue<>();
    private final ReceiveSupervision supervision = new ReceiveSupervision(clock::get,
            (restart, delay) -> restarts.add(restart), log::add);
    private UdpTransport transport;
    private DatagramChannel client;

    @AfterEach
    void tearDown() throws IOException {
        handler.release.countDown();
        if (transport != null) {
            transport.close();
        }
        if (client != null) {
            client.close();
        }
    }

    private void start() throws IOException {
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 65536, 65536, 1448), () -> handler,
                supervision);
        client = DatagramChannel.open();
        client.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client.socket().setSoTimeout((int) TimeUnit.SECONDS.toMillis(AWAIT_SECONDS));
    }

    private void send(String text) throws IOException {
        client.send(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)), transport.localAddress());
    }

    /** Sends {@code text} and waits for its echo: the receive thread served it. */
    private void assertServed(String text) throws IOException {
        send(text);
        assertEquals(text, receive());
    }

    /** @return the next echo; fails at the ceiling (the channel's own receive would wait forever) */
    private String receive() throws IOException {
        java.net.DatagramPacket packet = new java.net.DatagramPacket(new byte[2048], 2048);
        try {
            client.socket().receive(packet);
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("no echo within " + AWAIT_SECONDS + " s", e);
        }
        return new String(packet.getData(), 0, packet.getLength(), StandardCharsets.US_ASCII);
    }

    @Test
    void shouldServeTheNextDatagramsAfterAHandlerThrowsAnExceptionAnIoExceptionOrAnError() throws Exception {
        start();
        List<Throwable> thrown = List.of(new IllegalStateException("bad state"), new IOException("ring file"),
                new StackOverflowError("deep"), new AssertionError("broken invariant"),
                new InternalError("a fault occurred in an unsafe memory access operation"));
        Thread receiveThread = transport.receiveThread();
        for (Throwable t : thrown) {
            handler.failures.add(t);
            send("throw");
            assertServed("after " + t.getClass().getSimpleName());
        }

        assertEquals(thrown.size(), supervision.failures(), "each failure counted once");
        List<String> lines = new ArrayList<>();
        log.drainTo(lines);
        assertEquals(thrown.size(), lines.size(), "each failure logged once: " + lines);
        for (int i = 0; i < thrown.size(); i++) {
            String line = lines.get(i);
            assertTrue(line.startsWith("UDP receive loop: the handler, on a datagram from "
                    + client.getLocalAddress() + " failed: " + thrown.get(i)), line);
            assertTrue(line.endsWith("; serving on"), line);
            assertFalse(line.contains("\n"), "one line: " + line);
        }
        assertEquals(thrown.size(), transport.counters().get("errors"));
        assertSame(receiveThread, transport.receiveThread(), "the same thread served on");
        assertEquals(0, supervision.deaths());
        assertTrue(restarts.isEmpty());
    }

    @Test
    void shouldReportADeadThreadAtOnceAndServeAgainOnceRestarted() throws Exception {
        start();
        assertServed("before");
        Thread first = transport.receiveThread();
        handler.failures.add(new Fatal());
        send("throw");

        Runnable restart = restarts.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(restart, "a restart is scheduled when the thread dies");
        first.join(TimeUnit.SECONDS.toMillis(AWAIT_SECONDS));
        assertFalse(first.isAlive(), "the receive thread died");
        assertNotNull(supervision.death(), "dead before the restart");
        assertTrue(supervision.death().startsWith(Fatal.class.getName() + ": made to end the receive thread"),
                supervision.death());
        assertEquals(1, supervision.deaths());
        assertEquals(0, supervision.restarts());
        assertTrue(log.take().contains(" died: " + Fatal.class.getName()));

        restart.run();
        assertNull(supervision.death(), "alive again");
        assertEquals(1, supervision.restarts());
        assertEquals(1L, transport.counters().get("receive.restarts"));
        assertNotSame(first, transport.receiveThread());
        assertServed("after the restart");
        assertTrue(transport.receiveThread().isAlive());
    }

    @Test
    void shouldNotRestartAThreadThatDiedWhileTheTransportStops() throws Exception {
        start();
        handler.failures.add(new Fatal());
        send("throw");
        Runnable restart = restarts.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(restart);
        transport.close();
        restart.run();
        assertNotNull(supervision.death(), "a closed transport starts no thread");
        assertEquals(0, supervision.restarts());
    }

    @Test
    void shouldMeasureOnItsClockHowLongTheThreadIsInsideTheHandler() throws Exception {
        start();
        assertServed("idle");
        assertEquals(0, supervision.busyNanos(), "waiting for datagrams is not being stuck");
        clock.addAndGet(TimeUnit.HOURS.toNanos(1));
        // a pass under way while the clock moved ends; those after it start at the moved time
        transport.awaitPass();
        assertEquals(0, supervision.busyNanos(), "an idle hour is not being stuck");

        send("block");
        assertTrue(handler.blocked.await(AWAIT_SECONDS, TimeUnit.SECONDS));
        clock.addAndGet(TimeUnit.SECONDS.toNanos(42));
        assertEquals(TimeUnit.SECONDS.toNanos(42), supervision.busyNanos());

        handler.release.countDown();
        assertEquals("block", receive());
        assertServed("unblocked");
        transport.awaitPass();
        assertEquals(0, supervision.busyNanos(), "out of the handler (a new pass starts at the frozen clock)");
    }

    @Test
    void shouldLogABurstOfFailuresThenCountTheRestUntilTheNextWindow() {
        for (int i = 0; i < ReceiveSupervision.LOG_BURST + 5; i++) {
            supervision.failed("the handler", new IllegalStateException("n" + i));
        }
        assertEquals(ReceiveSupervision.LOG_BURST, log.size());
        assertEquals(ReceiveSupervision.LOG_BURST + 5, supervision.failures());
        clock.addAndGet(ReceiveSupervision.LOG_WINDOW_NANOS);
        supervision.failed("the handler", new IllegalStateException("later"));
        List<String> lines = new ArrayList<>();
        log.drainTo(lines);
        assertTrue(lines.get(lines.size() - 1).endsWith("(5 earlier failures not logged)"), lines.toString());
    }

    @Test
    void shouldWaitLongerBeforeEachRestartOfDeathsInARow() {
        List<Long> delays = new ArrayList<>();
        ReceiveSupervision s = new ReceiveSupervision(clock::get, (restart, delay) -> delays.add(delay), log::add);
        for (int i = 0; i < 12; i++) {
            s.died("t", new Fatal(), () -> { });
            s.restarted();
        }
        assertEquals(ReceiveSupervision.FIRST_RESTART_DELAY_NANOS, delays.get(0));
        assertEquals(2 * ReceiveSupervision.FIRST_RESTART_DELAY_NANOS, delays.get(1));
        assertEquals(ReceiveSupervision.MAX_RESTART_DELAY_NANOS, delays.get(11));
        s.served();
        s.died("t", new Fatal(), () -> { });
        assertEquals(ReceiveSupervision.FIRST_RESTART_DELAY_NANOS, delays.get(12), "a pass served ends the run");
    }

    @Test
    void shouldTellTheReceiveThreadsStateOverJmx() throws Exception {
        UdpTransportComponent component = new UdpTransportComponent();
        component.start(TestConfigs.of(UdpTransportComponent.Config.class, Map.of("port", 0)));
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(TransportMXBean.OBJECT_NAME);
            assertEquals(UdpTransport.THREAD_NAME, server.getAttribute(name, "ReceiveThreadName"));
            assertEquals(Boolean.TRUE, server.getAttribute(name, "ReceiveThreadAlive"));
            assertEquals("", server.getAttribute(name, "ReceiveThreadDeath"));
            assertEquals(0L, server.getAttribute(name, "ReceiveThreadBusyMillis"));
            assertEquals(0L, server.getAttribute(name, "ReceiveThreadRestarts"));
            assertEquals(0L, server.getAttribute(name, "ReceiveLoopFailures"));
            assertEquals("org.mpiproxy.Stuck.here(Stuck.java:7)", TransportManagement.innermostOwnFrame(
                    new StackTraceElement[] {new StackTraceElement("java.lang.Object", "wait", "Object.java", 1),
                        new StackTraceElement("org.mpiproxy.Stuck", "here", "Stuck.java", 7)}));
        } finally {
            component.deactivate();
        }
    }
}
