package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.Doorbell;

class ProtocolFrontTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final ProxySettings settings = new ProxySettings(Path.of("logs"), 1 << 16, Duration.ofSeconds(30),
            Duration.ofSeconds(1));
    private final V1Dispatcher v1 = new V1Dispatcher(channels, settings, core -> launcher, () -> { }, Runnable::run,
            timer);
    private final V2Dispatcher v2 = new V2Dispatcher(channels, settings,
            new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 64, 1448,
                    Duration.ofSeconds(300)), core -> launcher, () -> { }, Runnable::run, timer, () -> 1000L);
    private final ProtocolFront front = new ProtocolFront(v1, true, v2);

    @AfterEach
    void tearDown() {
        front.close();
    }

    @Test
    void shouldRouteByFirstByteAndDropV1WhenDisabled() {
        front.v1Enabled(false);
        front.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), HOST, transport);
        assertEquals(0, transport.take().size());
        assertEquals(0, launcher.requests.size());
        assertEquals(1L, front.counters().get("v1.disabled"));

        front.onDatagram(new V2Datagrams(1000L).exec(9, 1, 0, 2, "prog"), HOST, transport);
        front.doWork(transport);
        assertEquals(1, transport.take().size(), "v2 still served");
        assertEquals(1, launcher.requests.size());

        front.v1Enabled(true);
        front.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), HOST, transport);
        assertEquals(2, launcher.requests.size(), "v1 served again");
        assertEquals(2, front.jobs().size());
    }

    @Test
    void shouldCountADoorbellAndAnswerNothing() {
        front.onDatagram(Doorbell.datagram(), new InetSocketAddress("127.0.0.1", 45000), transport);
        assertEquals(0, transport.take().size(), "a doorbell has no answer");
        assertEquals(1L, front.counters().get("doorbells.heard"));
        assertEquals(0L, v1.counter(ProxyCounter.INVALID_SHORT), "not a short v1 datagram");
        // the same bytes plus one are a bad v1 datagram, not a doorbell
        ByteBuffer longer = ByteBuffer.allocate(Doorbell.LENGTH + 1).put(Doorbell.datagram()).put((byte) 0).flip();
        front.onDatagram(longer, HOST, transport);
        assertEquals(1L, front.counters().get("doorbells.heard"));
        assertEquals(1L, v1.counter(ProxyCounter.INVALID_SHORT));
    }

    @Test
    void shouldDropV2WhenDisabled() {
        ProtocolFront v1Only = new ProtocolFront(v1, true, null);
        v1Only.onDatagram(new V2Datagrams(1000L).exec(9, 1, 0, 2, "prog"), HOST, transport);
        assertEquals(0, transport.take().size());
        assertEquals(0, launcher.requests.size());
        assertEquals(1L, v1Only.counters().get("v2.disabled"));
        assertEquals(0L, v1Only.counters().get("invalid.op"), "a v2 datagram never reaches the v1 decoder");
    }
}
