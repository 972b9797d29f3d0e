package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/** A host talking v1 over a real socket to the dispatcher driven by the real receive loop. */
class UdpRoundTripTest {

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private V1Dispatcher dispatcher;
    private UdpTransport transport;
    private DatagramChannel host;

    @BeforeEach
    void setUp() throws Exception {
        dispatcher = new V1Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                coreId -> launcher, () -> transportRef.get().wakeup(), launches, new ScheduledThreadPoolExecutor(1));
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 16, 1 << 16, 65507),
                () -> dispatcher);
        transportRef.set(transport);
        host = DatagramChannel.open();
        host.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        // a ceiling for a reply that never comes, not a speed claim
        host.socket().setSoTimeout((int) Await.CEILING.toMillis());
    }

    @AfterEach
    void tearDown() throws Exception {
        transport.close();
        dispatcher.close();
        host.close();
    }

    private V1HeaderFlyweight request(ByteBuffer datagram) throws Exception {
        host.send(datagram, transport.localAddress());
        return receive();
    }

    private V1HeaderFlyweight receive() throws Exception {
        java.net.DatagramPacket packet = new java.net.DatagramPacket(new byte[2048], 2048);
        try {
            host.socket().receive(packet);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no reply within " + Await.CEILING.toSeconds() + " s", e);
        }
        ByteBuffer b = ByteBuffer.wrap(packet.getData(), 0, packet.getLength()).slice().order(ByteOrder.LITTLE_ENDIAN);
        return new V1HeaderFlyweight().wrap(b, 0);
    }

    @Test
    void shouldRunExecSendRecvTerminateOverUdp() throws Exception {
        V1HeaderFlyweight exec = request(V1Datagrams.exec(1, 0, 2, "mpiping"));
        assertEquals(V1HeaderDescriptor.OP_EXEC, exec.operation());
        assertEquals(MpiErrors.SUCCESS, exec.result());

        FakeChannel channel = channels.channel(launcher.requests.get(0).jobId(), 1);
        host.send(V1Datagrams.sendInts(1, 0xaabbccdd), transport.localAddress());
        host.send(V1Datagrams.recv(1, MpiDatatype.INT, 1), transport.localAddress());

        // the "rank": answers the ping once it arrives, on its own thread as a real rank would
        Thread rank = new Thread(() -> {
            Await.until(() -> !channel.toRank.isEmpty(), "the ping reached the rank");
            channel.fromRank.offerInts(0x12345678);
        });
        rank.start();
        V1HeaderFlyweight pong = receive();
        rank.join();
        assertEquals(V1HeaderDescriptor.OP_RECV, pong.operation());
        assertEquals(1, pong.datacount());
        assertEquals(16, pong.buffer().limit());
        assertEquals(0x12345678, pong.buffer().getInt(V1HeaderDescriptor.HEADER_LENGTH));

        host.send(V1Datagrams.terminate(1, 0), transport.localAddress());
        launcher.last().exitWith(0);
        V1HeaderFlyweight done = receive();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, done.operation());
        assertEquals(MpiErrors.SUCCESS, done.result());
        Await.until(() -> channels.released.contains(channel.jobId), "job released after the reply");
    }
}
