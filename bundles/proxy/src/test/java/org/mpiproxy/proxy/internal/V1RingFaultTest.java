package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.RingFaultException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;

/**
 * A v1 SEND whose ring write faults: the host gets a SEND reply with MPI_ERR_IO and the reason,
 * its RECV waiting for the rank gets the same, its job is stopped; another host's job goes on.
 */
class V1RingFaultTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final InetSocketAddress OTHER_HOST = new InetSocketAddress("127.0.0.1", 40002);

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V1Dispatcher dispatcher = new V1Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(10)),
            coreId -> launcher, transport::wakeup, Runnable::run, timer);

    @AfterEach
    void tearDown() {
        dispatcher.close();
    }

    private List<RecordingTransport.Sent> deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        dispatcher.doWork(transport);
        return transport.take();
    }

    private FakeChannelManager.FakeChannel start(InetSocketAddress from) {
        List<RecordingTransport.Sent> sent = deliver(V1Datagrams.exec(1, 0, 2, "prog"), from);
        assertEquals(1, sent.size());
        assertEquals(MpiErrors.SUCCESS, sent.get(0).header.result());
        return channels.open.values().stream().reduce((a, b) -> b).orElseThrow();
    }

    private static String reason(RecordingTransport.Sent sent) {
        byte[] text = new byte[sent.bytes.limit() - V1HeaderDescriptor.HEADER_LENGTH];
        sent.bytes.get(V1HeaderDescriptor.HEADER_LENGTH, text);
        return new String(text, StandardCharsets.UTF_8);
    }

    @Test
    void shouldAnswerAFaultedSendAndTheWaitingRecvAndStopOnlyThatJob() {
        FakeChannelManager.FakeChannel faulted = start(HOST);
        FakeChannelManager.FakeChannel other = start(OTHER_HOST);
        String cause = "no space left in the channel base /dev/shm/mpiproxy for job "
                + Job.hex(faulted.jobId) + " rank 1 (ring toRank of " + faulted.path + ")";
        faulted.toRank.offerFault = new RingFaultException(cause, faulted.jobId, 1, faulted.path,
                new InternalError("a fault occurred in an unsafe memory access operation"));
        assertEquals(List.of(), deliver(V1Datagrams.recv(1, MpiDatatype.INT, 4), HOST), "the RECV waits");

        List<RecordingTransport.Sent> sent = deliver(V1Datagrams.sendInts(1, 1, 2, 3), HOST);

        assertEquals(2, sent.size(), "the waiting RECV and the SEND are answered");
        RecordingTransport.Sent recv = sent.get(0);
        assertEquals(V1HeaderDescriptor.OP_RECV, recv.header.operation());
        assertEquals(MpiErrors.ERR_IO, recv.header.result());
        assertEquals(cause, reason(recv));
        RecordingTransport.Sent send = sent.get(1);
        assertEquals(HOST, send.target);
        assertEquals(V1HeaderDescriptor.OP_SEND, send.header.operation());
        assertEquals(MpiErrors.ERR_IO, send.header.result());
        assertEquals(1, send.header.rankId());
        assertEquals(cause, reason(send));
        assertEquals(1, launcher.processes.get(0).stops.size(), "the job's rank is stopped");
        assertEquals(0, launcher.processes.get(1).stops.size(), "the other job's is not");
        assertEquals(1, dispatcher.counter(ProxyCounter.JOBS_RING_FAULT));

        assertEquals(List.of(), deliver(V1Datagrams.sendInts(1, 7, 8), OTHER_HOST));
        assertEquals(2, other.toRank.pollInts(8).length, "the other job's SEND reached its ring");
    }

    @Test
    void shouldAnswerAnInternalErrorOfTheRingAboutTheRequestsRank() {
        FakeChannelManager.FakeChannel faulted = start(HOST);
        faulted.toRank.offerFault = new InternalError("a fault occurred in an unsafe memory access operation");

        List<RecordingTransport.Sent> sent = deliver(V1Datagrams.sendInts(1, 1), HOST);

        assertEquals(1, sent.size());
        assertEquals(MpiErrors.ERR_IO, sent.get(0).header.result());
        String text = reason(sent.get(0));
        assertTrue(text.startsWith("a fault in the shared memory of job " + Job.hex(faulted.jobId) + " rank 1"), text);
        assertEquals(1, launcher.processes.get(0).stops.size());
    }
}
