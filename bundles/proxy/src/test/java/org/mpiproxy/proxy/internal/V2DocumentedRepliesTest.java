package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;

/**
 * What docs/protocol-v2.md says the proxy answers, checked against the dispatcher: the worked
 * examples' reply fields (TERMINATE's core, the empty and the TRUNCATE RECV replies) and the
 * result codes sections 1, 5.2, 5.3 and 6 name.
 */
class V2DocumentedRepliesTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final InetSocketAddress OTHER = new InetSocketAddress("127.0.0.1", 40002);
    static final long JOB = 0x0123456789abcdefL;
    static final long NOW = 1_767_225_600_000L;

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

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    /** The hex example {@code name} of the specification, as bytes. */
    private static ByteBuffer documented(String name) throws IOException {
        String doc = Files.readString(Path.of("../../docs/protocol-v2.md"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("```hex example=" + name + "\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        assertTrue(m.find(), "the document has no example " + name);
        StringBuilder hex = new StringBuilder();
        for (String line : m.group(1).split("\n")) {
            if (!line.isBlank()) {
                hex.append(line.strip().substring(4).replace(" ", ""));
            }
        }
        return ByteBuffer.wrap(HexFormat.of().parseHex(hex.toString())).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Every header field but job, node, timestamp, nonce and key id (which the examples choose). */
    private static String fields(V2HeaderFlyweight h) {
        return "op=" + h.operation() + " flags=" + h.flags() + " result=" + h.result() + " datatype=" + h.datatype()
                + " rank=" + h.rank() + " tag=" + h.tag() + " sequence=" + h.sequence() + " ack=" + h.ack()
                + " argument=" + h.argument() + " core=" + h.core() + " payload=" + h.payloadLength();
    }

    private static void assertAsDocumented(String example, V2HeaderFlyweight reply) throws IOException {
        assertEquals(fields(new V2HeaderFlyweight().wrap(documented(example), 0)), fields(reply), example);
    }

    private void deliver(ByteBuffer datagram) {
        dispatcher.onDatagram(datagram, HOST, transport);
        dispatcher.doWork(transport);
    }

    private List<V2HeaderFlyweight> replies() {
        V2Authenticator verifier = V2Datagrams.hostVerifier();
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
        }
        return list;
    }

    private V2HeaderFlyweight single() {
        List<V2HeaderFlyweight> r = replies();
        assertEquals(1, r.size(), "replies");
        return r.get(0);
    }

    private FakeChannel start(int rank, int core, int worldSize) {
        deliver(host.exec(JOB, rank, core, worldSize, "prog"));
        V2HeaderFlyweight r = single();
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(core, r.core(), "the EXEC reply carries the core");
        return channels.channel(JOB, rank);
    }

    private static void offerInt(HeapMessageRing ring, int value) {
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value);
        assertTrue(ring.offer(3, 1, 0, b, 0, 4));
    }

    @Test
    void shouldAnswerTerminateAsDocumentedWithTheRanksCore() throws IOException {
        start(1, 3, 2);
        deliver(host.terminate(JOB, 1));
        launcher.processes.get(0).exitWith(3);
        dispatcher.doWork(transport);

        assertAsDocumented("terminate-reply", single());
        deliver(host.terminate(JOB, 1));
        assertAsDocumented("terminate-reply", single());
    }

    @Test
    void shouldAnswerRecvEmptyThenTruncateAtTheNextSequenceAsDocumented() throws IOException {
        FakeChannel channel = start(1, 0, 2);
        for (int v = 0; v < 4; v++) {
            offerInt(channel.fromRank, v);
        }
        deliver(host.recv(JOB, 1, 0, 8));
        assertEquals(4, replies().size(), "fragments 0..3");

        deliver(host.recv(JOB, 1, 4, 8));
        assertAsDocumented("recv-empty", single());

        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        assertAsDocumented("recv-truncate", single());
        deliver(host.recv(JOB, 1, 4, 8));
        assertAsDocumented("recv-truncate", single());
    }

    @Test
    void shouldRefuseARecvOfATerminatedRankWithErrRank() {
        start(1, 0, 3);
        start(2, 0, 3);
        deliver(host.terminate(JOB, 1));
        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, single().operation());

        deliver(host.recv(JOB, 1, 0, 8));
        V2HeaderFlyweight r = single();
        assertEquals(MpiErrors.ERR_RANK, r.result(), "a FINISHED rank is no longer a rank of the job");
        assertEquals(0, r.core(), "a refusal carries core 0");
    }

    @Test
    void shouldRefuseAnExecOfAnotherOwnerWithErrArgAndItsOtherRequestsWithErrComm() {
        start(1, 0, 3);

        dispatcher.onDatagram(host.exec(JOB, 2, 0, 3, "prog"), OTHER, transport);
        dispatcher.onDatagram(host.sendInts(JOB, 1, 0, 0, true, 1), OTHER, transport);
        dispatcher.onDatagram(host.recv(JOB, 1, 0, 8), OTHER, transport);
        dispatcher.onDatagram(host.terminate(JOB, 1), OTHER, transport);

        List<RecordingTransport.Sent> sent = transport.take();
        List<Integer> results = new ArrayList<>();
        for (RecordingTransport.Sent s : sent) {
            assertEquals(OTHER, s.target, "refused to their source");
            results.add(new V2HeaderFlyweight().wrap(s.bytes, 0).result());
        }
        assertEquals(List.of(MpiErrors.ERR_ARG, MpiErrors.ERR_COMM, MpiErrors.ERR_COMM, MpiErrors.ERR_COMM), results);
        assertEquals(1, launcher.requests.size(), "nothing started for the other address");
    }

    @Test
    void shouldRefuseASendWithANegativeTagOrToAnEndedRank() {
        start(1, 0, 2);
        ByteBuffer negative = host.sendInts(JOB, 1, 0, -1, true, 1);
        deliver(negative);
        assertEquals(MpiErrors.ERR_TAG, single().result());

        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        deliver(host.sendInts(JOB, 1, 0, 0, true, 1));
        V2HeaderFlyweight r = single();
        assertEquals(MpiErrors.ERR_TRUNCATE, r.result(), "the rank has ended: nothing is stored any more");
        assertEquals(0, r.ack());
    }

    @Test
    void shouldApplyANewNodeNameAtOnce() {
        start(1, 0, 2);
        assertEquals(List.of(), dispatcher.reconfigure(new V2Settings(V2Datagrams.KEYS, "node-b",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300))));

        deliver(host.recv(JOB, 1, 0, 8));
        List<RecordingTransport.Sent> refused = transport.take();
        assertEquals(1, refused.size(), "a request for the old name is for another node now: only a refusal");
        ByteBuffer refusal = refused.get(0).bytes;
        assertTrue(V2RefusalDescriptor.isRefusal(refusal, 0, refusal.limit()));
        assertEquals(V2RefusalDescriptor.REASON_WRONG_NODE, V2RefusalDescriptor.reason(refusal, 0));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_WRONG_NODE));
        deliver(new V2Datagrams(V2Datagrams.KEYS, "node-b", NOW).recv(JOB, 1, 0, 8));
        V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(transport.take().get(0).bytes, 0);
        assertEquals(MpiErrors.SUCCESS, r.result(), "the job runs on under the new name");
    }
}
