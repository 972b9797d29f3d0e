package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/** STATUS through the v2 dispatcher with real signed datagrams: entries, paging, unknown job and rank, replays. */
class V2DispatcherStatusTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final InetSocketAddress OPERATOR = new InetSocketAddress("127.0.0.1", 40003);
    static final long JOB = 0x5151L;
    static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private V2Dispatcher dispatcher = dispatcher(1448);

    private V2Dispatcher dispatcher(int datagramSize) {
        return new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1 << 16, datagramSize,
                        Duration.ofSeconds(300)),
                coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);
    }

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    private void deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        dispatcher.doWork(transport);
    }

    /** @return the replies sent to {@code target}, each checked as a host checks it */
    private List<ByteBuffer> replies(InetSocketAddress target) {
        List<ByteBuffer> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(target, s.target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(s.bytes.order(ByteOrder.LITTLE_ENDIAN));
        }
        return list;
    }

    private static String entry(ByteBuffer b, int index) {
        int o = V2HeaderDescriptor.HEADER_LENGTH + index * V2StatusDescriptor.ENTRY_LENGTH;
        return V2StatusDescriptor.rank(b, o) + " " + V2StatusDescriptor.stateName(V2StatusDescriptor.state(b, o))
                + " core " + V2StatusDescriptor.core(b, o) + " pid " + V2StatusDescriptor.pid(b, o) + " exit "
                + V2StatusDescriptor.exitStatus(b, o);
    }

    @Test
    void shouldListEveryRankOfTheJobWithStatePidCoreAndExitStatusToTheAsker() {
        deliver(host.exec(JOB, 1, 0, 4, "prog"), HOST);
        deliver(host.exec(JOB, 2, 3, 4, "prog"), HOST);
        deliver(host.exec(JOB, 3, 0, 4, "prog"), HOST);
        replies(HOST);
        launcher.processes.get(1).exitWith(137);
        launcher.processes.get(2).exitWith(3);
        dispatcher.doWork(transport);
        deliver(host.terminate(JOB, 3), HOST);
        assertEquals(MpiErrors.SUCCESS, new V2HeaderFlyweight().wrap(replies(HOST).get(0), 0).result());

        deliver(host.status(JOB, 0, 0), OPERATOR);
        List<ByteBuffer> r = replies(OPERATOR);
        assertEquals(1, r.size());
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(r.get(0), 0);
        assertEquals(V2HeaderDescriptor.OP_STATUS, h.operation());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY, h.flags());
        assertEquals(MpiErrors.SUCCESS, h.result());
        assertEquals(JOB, h.jobId());
        assertEquals(3, h.argument());
        assertEquals(0, h.ack());
        assertEquals(3 * V2StatusDescriptor.ENTRY_LENGTH, h.payloadLength());
        assertEquals("1 running core 0 pid 1000 exit -1", entry(r.get(0), 0));
        assertEquals("2 exited core 3 pid 1001 exit 137", entry(r.get(0), 1));
        assertEquals("3 finished core 0 pid 1002 exit 3", entry(r.get(0), 2));
        assertEquals(1, dispatcher.counter(V2Counter.STATUS_REQUESTS));
    }

    @Test
    void shouldAnswerOneRankAndRefuseARankTheJobDoesNotHave() {
        deliver(host.exec(JOB, 1, 0, 3, "prog"), HOST);
        deliver(host.exec(JOB, 2, 0, 3, "prog"), HOST);
        replies(HOST);
        deliver(host.status(JOB, 2, 0), OPERATOR);
        ByteBuffer one = replies(OPERATOR).get(0);
        assertEquals(1, new V2HeaderFlyweight().wrap(one, 0).argument());
        assertEquals("2 running core 0 pid 1001 exit -1", entry(one, 0));

        deliver(host.status(JOB, 7, 0), OPERATOR);
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(replies(OPERATOR).get(0), 0);
        assertEquals(MpiErrors.ERR_RANK, h.result());
        assertEquals(0, h.payloadLength());
    }

    @Test
    void shouldRefuseAnUnknownJobToTheAsker() {
        deliver(host.status(0x7777L, 0, 0), OPERATOR);
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(replies(OPERATOR).get(0), 0);
        assertEquals(V2HeaderDescriptor.OP_STATUS, h.operation());
        assertEquals(MpiErrors.ERR_COMM, h.result());
        assertEquals(0x7777L, h.jobId());
    }

    @Test
    void shouldPageWhenTheRanksDoNotFitOneDatagram() {
        dispatcher.close();
        // 104 bytes of header and MAC plus room for 2 entries
        dispatcher = dispatcher(104 + 2 * V2StatusDescriptor.ENTRY_LENGTH + 5);
        for (int r = 1; r <= 5; r++) {
            deliver(host.exec(JOB, r, 0, 6, "p"), HOST);
        }
        replies(HOST);
        List<String> seen = new ArrayList<>();
        long from = 0;
        int pages = 0;
        do {
            deliver(host.status(JOB, 0, from), OPERATOR);
            ByteBuffer page = replies(OPERATOR).get(0);
            V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(page, 0);
            assertEquals(from, h.sequence());
            for (int i = 0; i < h.argument(); i++) {
                seen.add(entry(page, i).split(" ")[0]);
            }
            from = h.ack();
            pages++;
        } while (from != 0 && pages < 10);
        assertEquals(List.of("1", "2", "3", "4", "5"), seen);
        assertEquals(3, pages);
    }

    @Test
    void shouldRefuseAReplayedStatusRequest() {
        deliver(host.exec(JOB, 1, 0, 2, "prog"), HOST);
        replies(HOST);
        ByteBuffer request = host.status(JOB, 0, 0);
        ByteBuffer copy = ByteBuffer.allocate(request.remaining()).put(request.duplicate()).flip();
        deliver(request, OPERATOR);
        assertEquals(1, replies(OPERATOR).size());
        deliver(copy, new InetSocketAddress("127.0.0.1", 40009));
        assertTrue(transport.take().isEmpty(), "a replayed STATUS must get no reply");
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_REPLAYED));
    }
}
