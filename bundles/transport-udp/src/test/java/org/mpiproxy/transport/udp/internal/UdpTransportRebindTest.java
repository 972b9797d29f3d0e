package org.mpiproxy.transport.udp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A changed address or port is applied in place; a bad one leaves the socket as it was. */
class UdpTransportRebindTest {

    /** How long a wait may take before the test counts it as hung; every wait here ends with its event. */
    private static final long CEILING_SECONDS = 60;

    private final RecordingHandler handler = new RecordingHandler();
    private UdpTransportComponent component;
    private DatagramChannel client;

    private static UdpTransportComponent.Config config(Object... keyValues) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return TestConfigs.of(UdpTransportComponent.Config.class, m);
    }

    @BeforeEach
    void setUp() throws Exception {
        component = new UdpTransportComponent();
        component.start(config("port", 0));
        component.bindHandler(handler);
        client = DatagramChannel.open();
    }

    @AfterEach
    void tearDown() throws Exception {
        component.deactivate();
        client.close();
    }

    private static int freePort() throws Exception {
        try (DatagramChannel probe = DatagramChannel.open()) {
            probe.bind(new InetSocketAddress("127.0.0.1", 0));
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }

    private void assertDelivered(InetSocketAddress to, byte value) throws Exception {
        client.send(ByteBuffer.wrap(new byte[] {value}), to);
        RecordingHandler.Received r = handler.received.poll(CEILING_SECONDS, TimeUnit.SECONDS);
        assertNotNull(r, "nothing delivered through " + to);
        assertEquals(value, r.bytes()[0]);
    }

    @Test
    void shouldMoveToTheNewPortAndReleaseTheOldOne() throws Exception {
        InetSocketAddress before = component.localAddress();
        assertDelivered(before, (byte) 1);
        int port = freePort();

        component.apply(config("port", port));

        assertEquals(port, component.localAddress().getPort());
        assertDelivered(component.localAddress(), (byte) 2);
        try (DatagramChannel old = DatagramChannel.open()) {
            old.bind(before);
        }
        assertEquals(2L, component.counters().get("datagrams.in"), "counters survive the rebind");
        javax.management.ObjectName name = new javax.management.ObjectName(TransportMXBean.OBJECT_NAME);
        javax.management.MBeanServer jmx = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        assertEquals(2L, jmx.getAttribute(name, "DatagramsIn"));
        assertEquals("127.0.0.1:" + port, jmx.getAttribute(name, "LocalAddress"));
    }

    /**
     * A buffer size or the largest datagram changes on the socket in force: a second socket on a
     * fixed port could not be bound while the first holds it.
     */
    @Test
    void shouldApplyNewBufferSizesOnTheSameFixedPort() throws Exception {
        java.util.List<String> problems = new java.util.ArrayList<>();
        UdpTransportComponent fixed = new UdpTransportComponent(
                new org.mpiproxy.api.config.CheckedConfiguration<>(UdpTransportComponent.Config.class), problems::add);
        int port = freePort();
        fixed.start(config("port", port));
        try {
            fixed.bindHandler(handler);
            InetSocketAddress address = fixed.localAddress();
            assertDelivered(address, (byte) 5);

            fixed.apply(config("port", port, "receive.buffer.size", 2097152, "send.buffer.size", 1048576,
                    "max.datagram.size", 1448));

            assertEquals(java.util.List.of(), problems);
            assertEquals(new UdpTransportSettings(address, 2097152, 1048576, 1448), fixed.settings());
            assertEquals(address, fixed.localAddress());
            assertDelivered(address, (byte) 6);
            assertEquals(2L, fixed.counters().get("datagrams.in"), "counters survive the change");
        } finally {
            fixed.deactivate();
        }
    }

    @Test
    void shouldKeepTheSocketWhenAValueIsBad() throws Exception {
        InetSocketAddress before = component.localAddress();
        component.apply(config("port", 70000));
        component.apply(config("port", 0, "max.datagram.size", 10));
        component.apply(config("address", "no-such-host.invalid"));
        assertEquals(before, component.localAddress());
        assertDelivered(before, (byte) 3);
    }

    @Test
    void shouldKeepTheSocketWhenTheNewPortIsTaken() throws Exception {
        InetSocketAddress before = component.localAddress();
        try (DatagramChannel squatter = DatagramChannel.open()) {
            squatter.bind(new InetSocketAddress("127.0.0.1", 0));
            int taken = ((InetSocketAddress) squatter.getLocalAddress()).getPort();
            component.apply(config("port", taken));
            assertEquals(before, component.localAddress());
            assertNotEquals(taken, component.localAddress().getPort());
            assertDelivered(before, (byte) 4);
        }
    }

    private static void awaitCalls(java.util.concurrent.atomic.AtomicInteger calls, int expected)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CEILING_SECONDS);
        synchronized (calls) {
            while (calls.get() < expected) {
                long left = deadline - System.nanoTime();
                org.junit.jupiter.api.Assertions.assertTrue(left > 0, "the handler was driven " + calls.get()
                        + " times, not " + expected);
                calls.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
        }
    }

    /**
     * The handler is the proxy's single-threaded duty cycle: while the socket moves, the old
     * receive thread must have left the handler before the new one enters it.
     */
    @Test
    void shouldNeverDriveTheHandlerFromTwoThreadsWhileMoving() throws Exception {
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        org.mpiproxy.api.DatagramHandler busy = new org.mpiproxy.api.DatagramHandler() {
            @Override
            public void onDatagram(ByteBuffer datagram, InetSocketAddress source,
                    org.mpiproxy.api.DatagramTransport replies) {
                doWork(replies);
            }

            @Override
            public int doWork(org.mpiproxy.api.DatagramTransport replies) {
                if (inside.incrementAndGet() > 1) {
                    overlaps.incrementAndGet();
                }
                // a while inside: a second thread coming in meanwhile is seen
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                inside.decrementAndGet();
                synchronized (calls) {
                    calls.incrementAndGet();
                    calls.notifyAll();
                }
                return 0;
            }

            @Override
            public boolean hasPendingWork() {
                return true;
            }
        };
        component.bindHandler(busy);

        for (int move = 0; move < 20; move++) {
            // the handler is driven on the current socket before it moves again
            awaitCalls(calls, calls.get() + 3);
            component.apply(config("port", freePort()));
        }
        awaitCalls(calls, calls.get() + 3);

        assertEquals(0, overlaps.get(), "calls into the handler while another thread was inside it");
    }
}
