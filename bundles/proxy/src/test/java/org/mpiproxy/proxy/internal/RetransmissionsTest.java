package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import javax.management.MBeanServer;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyControl;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/** The JMX attribute Retransmissions follows v2 hosts that lose replies and ask again. */
class RetransmissionsTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x77L;
    private static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Dispatcher dispatcher = new V2Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
            new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                    Duration.ofSeconds(300)),
            coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);
    private ProxyManagement management;

    @AfterEach
    void tearDown() {
        if (management != null) {
            management.deactivate();
        }
        dispatcher.close();
        timer.shutdownNow();
    }

    /** Delivers a request and returns how many replies the proxy sent, which the host then loses. */
    private int deliverAndLoseTheReplies(ByteBuffer datagram) {
        dispatcher.onDatagram(datagram, HOST, transport);
        dispatcher.doWork(transport);
        return transport.take().size();
    }

    private long retransmissions(MBeanServer server) throws Exception {
        return (Long) server.getAttribute(new ObjectName(ProxyMXBean.OBJECT_NAME), "Retransmissions");
    }

    @Test
    void shouldCountRequestsRepeatedForLostRepliesAndDataSentAgain() throws Exception {
        MBeanServer server = MBeanServerFactory.newMBeanServer();
        management = new ProxyManagement(status(), control(), server);
        assertEquals(0L, retransmissions(server));

        assertEquals(1, deliverAndLoseTheReplies(host.exec(JOB, 1, 0, 2, "prog")));
        assertEquals(0L, retransmissions(server), "a first request is no retransmission");
        assertEquals(1, deliverAndLoseTheReplies(host.exec(JOB, 1, 0, 2, "prog")));
        assertEquals(1L, retransmissions(server), "the EXEC repeated after its reply was lost");

        assertEquals(1, deliverAndLoseTheReplies(host.sendInts(JOB, 1, 0, 5, true, 1, 2)));
        assertEquals(1, deliverAndLoseTheReplies(host.sendInts(JOB, 1, 0, 5, true, 1, 2)));
        assertEquals(2L, retransmissions(server), "the SEND repeated after its ACK was lost");

        ByteBuffer data = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 9);
        assertTrue(channels.channel(JOB, 1).fromRank.offer(3, 1, 4, data, 0, 4));
        assertEquals(1, deliverAndLoseTheReplies(host.recv(JOB, 1, 0, 8)));
        assertEquals(2L, retransmissions(server));
        dispatcher.onDatagram(host.recv(JOB, 1, 0, 8), HOST, transport);
        List<RecordingTransport.Sent> again = transport.take();
        assertEquals(1, again.size());
        V2HeaderFlyweight reply = new V2HeaderFlyweight().wrap(again.get(0).bytes, 0);
        assertEquals(V2HeaderDescriptor.OP_RECV, reply.operation());
        assertEquals(9, reply.buffer().getInt(reply.payloadOffset()), "the same data, sent again");
        assertEquals(3L, retransmissions(server), "the RECV data sent again after the host lost it");
        assertFalse(channels.channel(JOB, 1).fromRank.isEmpty(), "kept in the ring until acknowledged");
        assertEquals(0, channels.channel(JOB, 1).fromRank.consumerMark());
        dispatcher.onDatagram(host.recv(JOB, 1, 1, 8), HOST, transport);
        assertEquals(0, transport.take().stream()
                .filter(s -> new V2HeaderFlyweight().wrap(s.bytes, 0).payloadLength() > 0).count(),
                "acknowledged: nothing sent again");
        assertTrue(channels.channel(JOB, 1).fromRank.isEmpty(), "released once acknowledged");
        assertEquals(1, channels.channel(JOB, 1).fromRank.consumerMark());
    }

    private ProxyStatus status() {
        return new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return dispatcher.jobs();
            }

            @Override
            public Map<String, Long> counters() {
                return dispatcher.counters();
            }
        };
    }

    private static ProxyControl control() {
        return new ProxyControl() {
            @Override
            public List<Integer> signal(long jobId, int rankId, String signal) {
                return List.of();
            }

            @Override
            public Path outputFile(long jobId, int rankId, boolean stderr) {
                return Path.of("x");
            }

            @Override
            public JobInfo exec(String program, List<String> args, List<Integer> cores) {
                return null;
            }

            @Override
            public List<String> programs() {
                return List.of();
            }

            @Override
            public List<HealthResult> health() {
                return List.of();
            }
        };
    }
}
