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
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.api.RankOutputListener.Stream;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/** OUTPUT through the v2 dispatcher: who gets lines, the datagrams' fields, acknowledgements, TERMINATE held. */
class V2DispatcherOutputTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final InetSocketAddress OTHER = new InetSocketAddress("127.0.0.1", 40002);
    static final long JOB = 0x4321L;
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
    private final RankOutputListener lines = dispatcher.outputListener();

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    private void deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        dispatcher.doWork(transport);
    }

    private List<V2HeaderFlyweight> replies() {
        return replies(HOST);
    }

    private List<V2HeaderFlyweight> replies(InetSocketAddress to) {
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(to, s.target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
        }
        return list;
    }

    private static String text(V2HeaderFlyweight h) {
        byte[] b = new byte[h.payloadLength()];
        h.buffer().get(V2HeaderDescriptor.HEADER_LENGTH, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void shouldStreamTheLinesOfARankWhoseExecAskedForThemToTheOwner() {
        deliver(host.execWithOutput(JOB, 1, 3, "prog"), HOST);
        deliver(host.exec(JOB, 2, 0, 3, "prog"), HOST);
        assertEquals(2, replies().size());
        lines.onOutput(JOB, 1, Stream.STDERR, "héllo", false);
        lines.onOutput(JOB, 2, Stream.STDOUT, "rank 2 did not ask", false);
        lines.onOutput(JOB, 1, Stream.STDOUT, "prompt> ", true);
        dispatcher.doWork(transport);
        List<V2HeaderFlyweight> r = replies();
        assertEquals(2, r.size());
        V2HeaderFlyweight err = r.get(0).tag() == V2HeaderDescriptor.STREAM_STDERR ? r.get(0) : r.get(1);
        V2HeaderFlyweight out = r.get(0) == err ? r.get(1) : r.get(0);
        assertEquals(V2HeaderDescriptor.OP_OUTPUT, err.operation());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY | V2HeaderDescriptor.FLAG_END_OF_MESSAGE, err.flags());
        assertEquals(JOB, err.jobId());
        assertEquals(1, err.rank());
        assertEquals(0, err.sequence());
        assertEquals(0, err.ack());
        assertEquals(0, err.argument());
        assertEquals("héllo", text(err));
        assertEquals(V2HeaderDescriptor.STREAM_STDOUT, out.tag());
        assertEquals(V2HeaderDescriptor.OUTPUT_PARTIAL, out.argument());
        assertEquals("prompt> ", text(out));
    }

    @Test
    void shouldAnswerTerminateOnlyAfterTheHostAcknowledgedTheRanksLastLines() {
        deliver(host.execWithOutput(JOB, 1, 2, "prog"), HOST);
        assertEquals(1, replies().size());
        lines.onOutput(JOB, 1, Stream.STDOUT, "last", false);
        deliver(host.terminate(JOB, 1), HOST);
        launcher.processes.get(0).exitWith(0);
        lines.onEnd(JOB, 1, Stream.STDOUT);
        lines.onEnd(JOB, 1, Stream.STDERR);
        dispatcher.doWork(transport);
        List<V2HeaderFlyweight> r = replies();
        assertEquals(1, r.size(), "only the line, no TERMINATE reply yet");
        assertEquals(V2HeaderDescriptor.OP_OUTPUT, r.get(0).operation());
        // an acknowledgement from another address is not the owner's
        deliver(host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 1), OTHER);
        assertEquals(MpiErrors.ERR_COMM, new V2HeaderFlyweight().wrap(transport.take().get(0).bytes, 0).result());
        dispatcher.doWork(transport);
        assertEquals(0, replies().size());
        deliver(host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 1), HOST);
        r = replies();
        assertEquals(1, r.size());
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, r.get(0).operation());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        assertTrue(channels.released.contains(JOB));
        assertEquals(1L, dispatcher.counters().get("v2.output.terminate.waits"));
    }

    @Test
    void shouldCountAnAcknowledgementBeyondWhatWasSentAsInvalid() {
        deliver(host.execWithOutput(JOB, 1, 2, "prog"), HOST);
        replies();
        deliver(host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 5), HOST);
        assertEquals(0, replies().size());
        assertEquals(1, dispatcher.counter(V2Counter.INVALID_SEQUENCE));
    }

    @Test
    void shouldStartAPlainExecAsGivenAndStreamItsOutputToTheNamedPort() {
        java.util.Map<String, String> env = new java.util.LinkedHashMap<>();
        env.put("GREETING", "hello world");
        deliver(host.execPlain(JOB, 1, 3, OTHER.getPort(), new org.mpiproxy.protocol.ExecCommand("hostname",
                List.of("-s", "two words"), env)), HOST);
        List<V2HeaderFlyweight> r = replies(HOST);
        assertEquals(1, r.size());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result(), "the EXEC reply goes to the owner");
        org.mpiproxy.api.LaunchRequest request = launcher.requests.get(0);
        assertTrue(request.plain());
        assertEquals("hostname", request.program());
        assertEquals(List.of("-s", "two words"), request.args());
        assertEquals("hello world", request.environment().get("GREETING"));
        assertTrue(request.environment().get("PMI_PORT").startsWith("127.0.0.1:"), request.environment().toString());
        assertTrue(Integer.parseInt(request.environment().get("PMI_ID")) > 0, "MPICH reads PMI_ID as a number");

        lines.onOutput(JOB, 1, Stream.STDOUT, "node-a", false);
        dispatcher.doWork(transport);
        r = replies(OTHER);
        assertEquals(1, r.size());
        assertEquals("node-a", text(r.get(0)));
        // the owner's port is not where this job's output is acknowledged
        deliver(host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 1), HOST);
        assertEquals(MpiErrors.ERR_COMM, new V2HeaderFlyweight().wrap(transport.take().get(0).bytes, 0).result());
        deliver(host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 1), OTHER);
        assertEquals(0, transport.take().size());
        assertEquals(0, dispatcher.counter(V2Counter.INVALID_SEQUENCE));
    }

    @Test
    void shouldRefuseAMalformedPlainExecWithItsReason() {
        ByteBuffer b = host.execPlain(JOB, 1, 2, 0, new org.mpiproxy.protocol.ExecCommand("prog", List.of("a"),
                java.util.Map.of()));
        new V2HeaderFlyweight().wrap(b, 0).payloadLength(9);
        deliver(host.resign(b), HOST);
        List<V2HeaderFlyweight> r = replies(HOST);
        assertEquals(1, r.size());
        assertEquals(MpiErrors.ERR_ARG, r.get(0).result());
        assertTrue(text(r.get(0)).contains("plain command ends after 1 of its 2 strings"), text(r.get(0)));
        assertTrue(launcher.requests.isEmpty());
    }

    @Test
    void shouldTakeAPmiFenceOnlyFromTheJobsOutputPort() {
        deliver(host.execPlain(JOB, 1, 2, OTHER.getPort(), new org.mpiproxy.protocol.ExecCommand("mpi-hello",
                List.of(), java.util.Map.of())), HOST);
        replies(HOST);
        deliver(host.pmiFence(JOB, 1, 0, 1, java.util.Map.of("card-0", "tcp#0")), HOST);
        assertEquals(MpiErrors.ERR_COMM, new V2HeaderFlyweight().wrap(transport.take().get(0).bytes, 0).result());
        deliver(host.pmiFence(JOB, 1, 0, 1, java.util.Map.of("card-0", "tcp#0")), OTHER);
        List<V2HeaderFlyweight> r = replies(OTHER);
        assertEquals(1, r.size());
        assertEquals(V2HeaderDescriptor.OP_PMI, r.get(0).operation());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        assertEquals(1, r.get(0).argument());
        assertEquals(1, r.get(0).ack());
        // fence 0 carries node attributes (PMI-2), one fragment each: taken; as several fragments it is no fence
        deliver(host.pmiFence(JOB, 0, 0, 1, java.util.Map.of("node-attr", "shm")), OTHER);
        assertEquals(MpiErrors.SUCCESS, replies(OTHER).get(0).result(), "node attributes are fence 0");
        deliver(host.pmiFence(JOB, 0, 0, 2, java.util.Map.of()), OTHER);
        assertEquals(MpiErrors.ERR_ARG, replies(OTHER).get(0).result(), "fence 0 of two fragments does not exist");
    }
}
