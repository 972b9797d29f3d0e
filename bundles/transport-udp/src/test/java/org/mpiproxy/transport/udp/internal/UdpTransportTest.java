package org.mpiproxy.transport.udp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.DatagramHandler;

class UdpTransportTest {

    /** How long a wait may take before the test counts it as hung; every wait here ends with its event. */
    private static final long AWAIT_SECONDS = 60;
    /** How often a wait for a counter, which has no event to wait on, looks at it again. */
    private static final long LOOK_AGAIN_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final RecordingHandler handler = new RecordingHandler();
    private UdpTransport transport;
    private DatagramChannel client;

    @AfterEach
    void tearDown() throws IOException {
        if (transport != null) {
            transport.close();
        }
        if (client != null) {
            client.close();
        }
    }

    private void start(int maxDatagramSize) throws IOException {
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 65536, 65536, maxDatagramSize),
                () -> handler);
        client = DatagramChannel.open();
        client.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client.socket().setSoTimeout((int) TimeUnit.SECONDS.toMillis(AWAIT_SECONDS));
    }

    private void sendFromClient(byte[] bytes) throws IOException {
        client.send(ByteBuffer.wrap(bytes), transport.localAddress());
    }

    @Test
    void shouldBindEphemeralPortWhenPortIsZero() throws IOException {
        start(1448);
        assertTrue(transport.localAddress().getPort() > 0);
        assertEquals("127.0.0.1", transport.localAddress().getAddress().getHostAddress());
        assertEquals(1448, transport.maxDatagramSize());
    }

    @Test
    void shouldHandDatagramToHandlerInLittleEndianDirectBuffer() throws Exception {
        start(1448);
        byte[] payload = {2, 0, 1, 0, 0, 0, 3, 0, 7, 0, 0, 0};
        sendFromClient(payload);
        RecordingHandler.Received r = handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(r, "datagram not received");
        assertArrayEquals(payload, r.bytes());
        assertEquals(ByteOrder.LITTLE_ENDIAN, r.order());
        assertTrue(r.direct());
        assertEquals(client.getLocalAddress(), r.source());
    }

    @Test
    void shouldSendReplyToSource() throws Exception {
        start(1448);
        handler.echo = true;
        sendFromClient(new byte[] {1, 2, 3, 4});
        client.configureBlocking(true);
        client.socket().setSoTimeout((int) TimeUnit.SECONDS.toMillis(AWAIT_SECONDS));
        java.net.DatagramPacket packet = new java.net.DatagramPacket(new byte[64], 64);
        client.socket().receive(packet);
        assertEquals(4, packet.getLength());
        assertEquals(transport.localAddress(), packet.getSocketAddress());
        // the reply can arrive before the receive thread counts it: wait, bounded, for the count
        awaitCounter("datagrams.out", 1L);
        Map<String, Long> counters = transport.counters();
        assertEquals(1L, counters.get("datagrams.in"));
        assertEquals(1L, counters.get("datagrams.out"));
        assertEquals(4L, counters.get("bytes.in"));
        assertEquals(4L, counters.get("bytes.out"));
        assertEquals(0L, counters.get("send.failures"));
    }

    @Test
    void shouldPassOversizeDatagramOneByteLongerThanMaximum() throws Exception {
        start(600);
        sendFromClient(new byte[1000]);
        RecordingHandler.Received r = handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(r);
        assertEquals(601, r.bytes().length, "truncated to max + 1 so the handler can tell it is too long");
    }

    @Test
    void shouldRunDoWorkAfterWakeupWithoutDatagram() throws Exception {
        start(1448);
        awaitBlockedInSelect();
        CountDownLatch ran = new CountDownLatch(1);
        handler.onDoWork = ran::countDown;
        transport.wakeup();
        assertTrue(ran.await(AWAIT_SECONDS, TimeUnit.SECONDS), "doWork did not run after wakeup");
    }

    @Test
    void shouldBlockWhenIdleAndNoWorkIsPending() throws Exception {
        start(1448);
        awaitBlockedInSelect();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long tid = transport.receiveThread().getId();
        int callsBefore = handler.doWorkCalls.get();
        long cpuBefore = mx.getThreadCpuTime(tid);
        long wallStart = System.nanoTime();
        new CountDownLatch(1).await(200, TimeUnit.MILLISECONDS);
        long wall = System.nanoTime() - wallStart;
        long cpu = mx.getThreadCpuTime(tid) - cpuBefore;
        assertTrue(cpu < wall / 10, "idle receive thread used " + cpu + " ns CPU in " + wall + " ns");
        assertEquals(callsBefore, handler.doWorkCalls.get(), "idle loop must not call doWork");
    }

    @Test
    void shouldKeepPollingWhileHandlerHasPendingWork() throws Exception {
        start(1448);
        awaitBlockedInSelect();
        handler.pendingWork.set(true);
        transport.wakeup();
        int before = handler.doWorkCalls.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_SECONDS);
        while (handler.doWorkCalls.get() < before + 100 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(LOOK_AGAIN_NANOS);
        }
        assertTrue(handler.doWorkCalls.get() >= before + 100, "receive thread stopped polling");
        handler.pendingWork.set(false);
    }

    @Test
    void shouldKeepRunningWhenHandlerThrows() throws Exception {
        start(1448);
        handler.onDoWork = () -> {
            throw new IllegalStateException("boom");
        };
        transport.wakeup();
        sendFromClient(new byte[] {9});
        assertNotNull(handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS));
        sendFromClient(new byte[] {10});
        RecordingHandler.Received second = handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(second, "loop died after an exception");
        assertEquals(10, second.bytes()[0]);
        awaitCounter("errors", 1L);
        assertEquals(1L, transport.counters().get("errors"));
    }

    @Test
    void shouldKeepDatagramsInTheSocketUntilAHandlerIsBound() throws Exception {
        AtomicReference<DatagramHandler> bound = new AtomicReference<>();
        // the receive loop asks for the handler once at the start of every pass
        AtomicInteger passes = new AtomicInteger();
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 65536, 65536, 1448), () -> {
            synchronized (passes) {
                passes.incrementAndGet();
                passes.notifyAll();
            }
            return bound.get();
        });
        client = DatagramChannel.open();
        for (byte b = 1; b <= 3; b++) {
            client.send(ByteBuffer.wrap(new byte[] {b}), transport.localAddress());
        }
        // over loopback the datagrams are in the socket now: a pass that began later and ended had them to read
        awaitPasses(passes, passes.get() + 3);
        assertEquals(0L, transport.counters().get("datagrams.in"), "read while no handler was bound");
        RecordingHandler handler = new RecordingHandler();
        bound.set(handler);
        transport.wakeup();
        for (byte b = 1; b <= 3; b++) {
            RecordingHandler.Received received = handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS);
            assertNotNull(received, "datagram " + b + " lost while no handler was bound");
            assertEquals(b, received.bytes()[0]);
        }
    }

    @Test
    void shouldStopReceiveThreadOnClose() throws Exception {
        start(1448);
        Thread t = transport.receiveThread();
        transport.close();
        assertFalse(t.isAlive());
        transport = null;
    }

    @Test
    void shouldReportFailedSendToClosedTransport() throws Exception {
        start(1448);
        InetSocketAddress target = (InetSocketAddress) client.getLocalAddress();
        transport.close();
        assertFalse(transport.send(ByteBuffer.wrap(new byte[] {1}), target));
        assertEquals(1L, transport.counters().get("send.failures"));
        transport = null;
    }

    @Test
    void shouldFailToBindPortInUse() throws Exception {
        start(1448);
        int port = transport.localAddress().getPort();
        assertThrows(IOException.class, () -> new UdpTransport(
                UdpTransportSettings.of("127.0.0.1", port, 65536, 65536, 1448), () -> handler));
    }

    @Test
    void shouldOfferItsOwnDoorbellBeforeALongSleepWithPendingWork() throws Exception {
        handler.armAnswer = org.mpiproxy.api.DatagramHandler.SLEEP_UNTIL_RUNG;
        handler.pendingWork.set(true);
        start(1448);
        // the first long sleep comes after about a millisecond of shorter ones
        awaitCounter("doorbell.waits", 1L);
        assertTrue(transport.counters().get("doorbell.waits") >= 1, "slept until rung");
        assertEquals(org.mpiproxy.api.Doorbell.encode(transport.localAddress()), handler.armedWith.get());
        assertTrue(handler.armCalls.get() >= 1);
        // the doorbell datagram reaches the handler like any other
        client.send(org.mpiproxy.api.Doorbell.datagram(), transport.localAddress());
        assertNotNull(handler.received.poll(AWAIT_SECONDS, TimeUnit.SECONDS));
        handler.pendingWork.set(false);
    }

    @Test
    void shouldYieldForTheYieldTimeThenGrowParkTimeToMaximumAndResetIt() {
        AtomicLong clock = new AtomicLong();
        Backoff backoff = new Backoff(clock::get);
        // however many times it idles, it spins and yields while the clock stands within the yield time
        for (int i = 0; i < 1000; i++) {
            backoff.idle();
        }
        assertEquals(Backoff.MIN_PARK_NANOS, backoff.parkNanos(), "parked within the yield time");
        assertFalse(backoff.sleepsLongNext());
        clock.addAndGet(Backoff.YIELD_NANOS - 1);
        backoff.idle();
        assertEquals(Backoff.MIN_PARK_NANOS, backoff.parkNanos(), "parked a nanosecond early");
        clock.addAndGet(1);
        // the yield phase is over: each idle parks and doubles the park time
        for (int i = 0; i < 20; i++) {
            backoff.idle();
        }
        assertEquals(Backoff.MAX_PARK_NANOS, backoff.parkNanos());
        backoff.reset();
        assertEquals(Backoff.MIN_PARK_NANOS, backoff.parkNanos());
    }

    @Test
    void shouldWaitLongerOnlyAfterFiftyMillisecondsAndLongerStillAfterOneSecondWithoutWork() throws Exception {
        AtomicLong clock = new AtomicLong();
        Backoff backoff = new Backoff(clock::get);
        while (backoff.parkNanos() == Backoff.MIN_PARK_NANOS) {
            backoff.idle();
            clock.addAndGet(Backoff.YIELD_NANOS);
        }
        long parked = Backoff.MIN_PARK_NANOS; // the first park, in the loop above
        boolean sawDeepMaximum = false;
        try (java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
            while (backoff.parkNanos() < Backoff.LONG_MAX_PARK_NANOS) {
                long next = backoff.parkNanos();
                assertTrue(next <= Backoff.MAX_PARK_NANOS || parked >= Backoff.DEEP_IDLE_AFTER_NANOS,
                    "wait of " + next + " ns after " + parked + " ns");
                assertTrue(next <= Backoff.DEEP_MAX_PARK_NANOS
                    || parked >= Backoff.LONG_IDLE_AFTER_NANOS, "wait of " + next + " ns after " + parked + " ns");
                sawDeepMaximum |= next == Backoff.DEEP_MAX_PARK_NANOS;
                backoff.idle(selector);
                parked += next;
                assertTrue(parked < TimeUnit.SECONDS.toNanos(3), "reaches the long maximum");
            }
        }
        assertTrue(sawDeepMaximum, "8 ms waits between 50 ms and 1 s");
        assertTrue(parked >= Backoff.LONG_IDLE_AFTER_NANOS);
        backoff.reset();
        assertEquals(Backoff.MIN_PARK_NANOS, backoff.parkNanos());
    }

    /**
     * Waits for a counter the receive thread updates after the event the test saw; it has no event
     * of its own to wait on, so it is looked at every 0.1 ms, leaving the CPU to the receive thread.
     */
    private void awaitCounter(String name, long expected) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_SECONDS);
        while (transport.counters().get(name) < expected) {
            assertTrue(System.nanoTime() - deadline < 0, name + " not " + expected + " in " + AWAIT_SECONDS + " s: "
                    + transport.counters());
            LockSupport.parkNanos(LOOK_AGAIN_NANOS);
        }
    }

    /** Waits until the handler supplier was asked {@code expected} times in all. */
    private static void awaitPasses(AtomicInteger passes, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_SECONDS);
        synchronized (passes) {
            while (passes.get() < expected) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "the receive loop made " + passes.get() + " passes, not " + expected);
                passes.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
        }
    }

    private void awaitBlockedInSelect() {
        Thread t = transport.receiveThread();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_SECONDS);
        while (System.nanoTime() < deadline) {
            StackTraceElement[] stack = t.getStackTrace();
            for (StackTraceElement e : stack) {
                if (e.getMethodName().startsWith("select") || e.getMethodName().startsWith("doSelect")) {
                    return;
                }
            }
            LockSupport.parkNanos(LOOK_AGAIN_NANOS);
        }
        throw new AssertionError("receive thread never blocked in select: " + t.getState());
    }
}
