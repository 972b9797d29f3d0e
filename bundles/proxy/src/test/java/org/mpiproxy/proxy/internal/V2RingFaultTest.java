package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.RingFaultException;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/**
 * A v2 SEND whose ring write faults (the channel base full): its host gets an MPI_ERR_IO reply
 * with the reason, the job's ranks are stopped and the faulted rank ends FAILED; another job on
 * the node goes on.
 */
class V2RingFaultTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final long JOB = 0x1234L;
    static final long OTHER_JOB = 0x5678L;
    static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private final V2Dispatcher dispatcher = new V2Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
            new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                    Duration.ofSeconds(300)),
            coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    private List<V2HeaderFlyweight> deliver(ByteBuffer datagram) {
        dispatcher.onDatagram(datagram, HOST, transport);
        dispatcher.doWork(transport);
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(HOST, s.target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
        }
        return list;
    }

    private V2HeaderFlyweight single(ByteBuffer datagram) {
        List<V2HeaderFlyweight> replies = deliver(datagram);
        assertEquals(1, replies.size(), "replies");
        return replies.get(0);
    }

    private void start(long job, int rank) {
        assertEquals(MpiErrors.SUCCESS, single(host.exec(job, rank, 0, 3, "prog")).result());
    }

    private static String payload(V2HeaderFlyweight reply) {
        byte[] text = new byte[reply.payloadLength()];
        reply.buffer().get(reply.payloadOffset(), text);
        return new String(text, StandardCharsets.UTF_8);
    }

    @Test
    void shouldAnswerAFaultedSendWithTheReasonAndFailItsJobOnly() {
        start(JOB, 1);
        start(JOB, 2);
        start(OTHER_JOB, 1);
        FakeChannelManager.FakeChannel faulted = channels.channel(JOB, 1);
        String reason = "no space left in the channel base /dev/shm/mpiproxy for job " + Job.hex(JOB)
                + " rank 1 (ring toRank of " + faulted.path + ")";
        faulted.toRank.offerFault = new RingFaultException(reason, JOB, 1, faulted.path,
                new InternalError("a fault occurred in an unsafe memory access operation"));

        V2HeaderFlyweight reply = single(host.sendInts(JOB, 1, 0, 7, true, 1, 2, 3));

        assertEquals(V2HeaderDescriptor.OP_SEND, reply.operation());
        assertEquals(MpiErrors.ERR_IO, reply.result());
        assertEquals(1, reply.rank());
        assertEquals(reason, payload(reply));
        assertEquals(1, dispatcher.counter(V2Counter.JOBS_RING_FAULT));
        assertEquals(1, dispatcher.counter(V2Counter.ERRORS));
        // launches in order: job rank 1, job rank 2, other job rank 1
        assertEquals(1, launcher.processes.get(0).stops.size(), "the faulted rank is stopped");
        assertEquals(1, launcher.processes.get(1).stops.size(), "so is the rest of its job");
        assertEquals(0, launcher.processes.get(2).stops.size(), "another job is not");

        V2HeaderFlyweight other = single(host.sendInts(OTHER_JOB, 1, 0, 7, true, 4, 5));
        assertEquals(MpiErrors.SUCCESS, other.result(), "another job's SEND is acknowledged");
        assertEquals(1, other.ack());
        assertEquals(List.of(4, 5), ints(channels.channel(OTHER_JOB, 1).toRank.pollInts(16)));

        launcher.processes.get(0).exitWith(143);
        dispatcher.doWork(transport);
        V2HeaderFlyweight status = single(host.status(JOB, 1, 0));
        assertEquals(V2StatusDescriptor.STATE_FAILED,
                status.buffer().get(status.payloadOffset() + V2StatusDescriptor.STATE_OFFSET),
                "the faulted rank failed");
    }

    @Test
    void shouldAnswerAFaultThatNamesNoChannelAboutTheRequestsRank() {
        start(JOB, 1);
        channels.channel(JOB, 1).toRank.offerFault = new InternalError("a fault occurred in an unsafe memory access");

        V2HeaderFlyweight reply = single(host.sendInts(JOB, 1, 0, 7, true, 1));

        assertEquals(MpiErrors.ERR_IO, reply.result());
        String reason = payload(reply);
        assertTrue(reason.startsWith("a fault in the shared memory of job " + Job.hex(JOB) + " rank 1"), reason);
        assertEquals(1, launcher.processes.get(0).stops.size());
    }

    @Test
    void shouldAnswerAnyOtherFailureWithoutFailingTheJob() {
        start(JOB, 1);
        channels.channel(JOB, 1).toRank.offerFault = new IllegalStateException("broken");

        V2HeaderFlyweight reply = single(host.sendInts(JOB, 1, 0, 7, true, 1));

        assertEquals(MpiErrors.ERR_IO, reply.result());
        assertTrue(payload(reply).contains("IllegalStateException: broken"), payload(reply));
        assertEquals(0, launcher.processes.get(0).stops.size());
        assertEquals(0, dispatcher.counter(V2Counter.JOBS_RING_FAULT));
    }

    private static List<Integer> ints(int[] values) {
        List<Integer> list = new ArrayList<>();
        for (int v : values) {
            list.add(v);
        }
        return list;
    }
}
