package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderFlyweight;

class UdpHostTransportTest {

    private static final int INT = MpiDatatype.INT.code();
    private static final int UCHAR = MpiDatatype.UNSIGNED_CHAR.code();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final ByteArrayOutputStream diagnosticBytes = new ByteArrayOutputStream();
    private final PrintStream diagnostics = new PrintStream(diagnosticBytes, true, StandardCharsets.UTF_8);
    private final Map<Integer, ByteBuffer> streams = new ConcurrentHashMap<>();
    private FakeProxy proxy;
    private UdpHostTransport host;

    @AfterEach
    void tearDown() throws Exception {
        if (host != null) {
            host.finish();
        }
        if (proxy != null) {
            proxy.close();
            assertNull(proxy.failure());
        }
    }

    /** Starts everything and serves RECV requests from {@link #streams}, in v1-sized datagrams. */
    private final FakeProxy.Behaviour serving = (d, p) -> {
        FakeProxy.STARTS_EVERYTHING.on(d, p);
        V1HeaderFlyweight h = d.header();
        if (h.operation() == OP_RECV) {
            serve(p, d, h.rankId(), h.datatype(), (int) h.datacount());
        }
    };

    private void serve(FakeProxy p, FakeProxy.Datagram d, int rank, int datatype, int count) throws IOException {
        int size = MpiDatatype.sizeOf(datatype);
        ByteBuffer stream = streams.get(rank);
        for (int done = 0; done < count; ) {
            int k = Math.min(MAX_PAYLOAD_LENGTH / size, count - done);
            byte[] payload = new byte[k * size];
            stream.get(payload);
            p.reply(d.source(), OP_RECV, 0, rank, 0, datatype, k, payload);
            done += k;
        }
    }

    private UdpHostTransport start(int ranks, String program, List<String> args, Duration timeout) throws IOException {
        List<HostfileEntry> nodes = new java.util.ArrayList<>();
        for (int r = 1; r <= ranks; r++) {
            nodes.add(proxy.node(r - 1));
        }
        return UdpHostTransport.start(nodes, program, args, timeout, diagnostics);
    }

    private static ByteBuffer ints(int from, int count) {
        ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            b.putInt(i * 4, from + i);
        }
        return b;
    }

    @Test
    void shouldSendExecWithRankCoreWorldSizeAndCommandLineToEveryNode() throws Exception {
        proxy = new FakeProxy(FakeProxy.STARTS_EVERYTHING);
        host = start(2, "mpiprime", List.of("100", "x"), TIMEOUT);

        assertEquals(3, host.size());
        List<FakeProxy.Datagram> execs = proxy.received(OP_EXEC);
        assertEquals(2, execs.size());
        for (int r = 1; r <= 2; r++) {
            V1HeaderFlyweight h = execs.get(r - 1).header();
            assertEquals(OP_EXEC, h.operation());
            assertEquals(0, h.result());
            assertEquals(r, h.rankId());
            assertEquals(r - 1, h.coreId());
            assertEquals(3, h.coreCount());
            assertEquals("mpiprime 100 x", new String(execs.get(r - 1).payload(), StandardCharsets.UTF_8));
            assertEquals(host.localAddress().getPort(), execs.get(r - 1).source().getPort());
        }
    }

    @Test
    void shouldFailStartWithProxyErrorAndReasonAndTerminateTheOthers() throws Exception {
        proxy = new FakeProxy((d, p) -> {
            V1HeaderFlyweight h = d.header();
            if (h.operation() == OP_EXEC) {
                int result = h.rankId() == 2 ? MpiErrors.ERR_IO : 0;
                byte[] reason = result == 0 ? new byte[0] : "no program 'nope' in programs".getBytes(StandardCharsets.UTF_8);
                p.reply(d.source(), OP_EXEC, result, h.rankId(), h.coreId(), 0, 0, reason);
            }
        });

        MpiException e = assertThrows(MpiException.class, () -> start(2, "nope", List.of(), TIMEOUT));

        assertEquals(MpiErrors.ERR_IO, e.errorCode());
        assertTrue(e.getMessage().contains("rank 2"), e.getMessage());
        assertTrue(e.getMessage().contains("no program 'nope' in programs"), e.getMessage());
        List<FakeProxy.Datagram> terminates = proxy.await(OP_TERMINATE, 2);
        assertEquals(1, terminates.get(0).header().rankId());
        assertEquals(2, terminates.get(1).header().rankId());
    }

    @Test
    void shouldTimeOutWhenAProxyNeverAnswersExec() throws Exception {
        proxy = new FakeProxy((d, p) -> { });

        MpiException e = assertThrows(MpiException.class, () -> start(1, "mpiping", List.of(), Duration.ofMillis(200)));

        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertTrue(e.getMessage().contains("no EXEC reply"), e.getMessage());
    }

    @Test
    void shouldRejectArgumentsThatV1CannotCarry() throws Exception {
        proxy = new FakeProxy(FakeProxy.STARTS_EVERYTHING);

        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class,
                () -> start(1, "prog", List.of("a b"), TIMEOUT)).errorCode());
        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class,
                () -> start(1, "../prog", List.of(), TIMEOUT)).errorCode());
        assertEquals(MpiErrors.ERR_ARG, assertThrows(MpiException.class,
                () -> start(1, "prog", List.of("x".repeat(MAX_PAYLOAD_LENGTH)), TIMEOUT)).errorCode());
        assertTrue(proxy.received(OP_EXEC).isEmpty());
    }

    @Test
    void shouldChunkIntSendIntoDenseDatagramsOfAtMost1448Bytes() throws Exception {
        proxy = new FakeProxy(FakeProxy.STARTS_EVERYTHING);
        host = start(2, "p", List.of(), TIMEOUT);
        ByteBuffer data = ints(1000, 1000);

        host.send(INT, data, 0, 1000, 2);

        List<FakeProxy.Datagram> sends = proxy.await(OP_SEND, 3);
        assertEquals(3, sends.size());
        ByteBuffer all = ByteBuffer.allocate(4000);
        int[] counts = new int[3];
        for (int i = 0; i < 3; i++) {
            FakeProxy.Datagram d = sends.get(i);
            V1HeaderFlyweight h = d.header();
            assertTrue(d.bytes().length <= MAX_DATAGRAM_LENGTH);
            assertEquals(OP_SEND, h.operation());
            assertEquals(2, h.rankId());
            assertEquals(1, h.coreId());
            assertEquals(INT, h.datatype());
            counts[i] = (int) h.datacount();
            assertEquals(HEADER_LENGTH + counts[i] * 4, d.bytes().length);
            all.put(d.payload());
        }
        assertArrayEquals(new int[] {359, 359, 282}, counts);
        assertArrayEquals(data.array(), all.array());
    }

    @Test
    void shouldChunkByteSendAndHonourOffset() throws Exception {
        proxy = new FakeProxy(FakeProxy.STARTS_EVERYTHING);
        host = start(1, "p", List.of(), TIMEOUT);
        byte[] bytes = new byte[3100];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7);
        }

        host.send(UCHAR, ByteBuffer.wrap(bytes), 100, 3000, 1);

        List<FakeProxy.Datagram> sends = proxy.await(OP_SEND, 3);
        assertEquals(List.of(1436L, 1436L, 128L), sends.stream().map(d -> d.header().datacount()).toList());
        ByteBuffer all = ByteBuffer.allocate(3000);
        sends.forEach(d -> all.put(d.payload()));
        assertArrayEquals(java.util.Arrays.copyOfRange(bytes, 100, 3100), all.array());
        assertTrue(sends.stream().allMatch(d -> d.header().datatype() == UCHAR));
    }

    @Test
    void shouldRequestAtMost64KiBPerRecvAndAssembleTheReplies() throws Exception {
        streams.put(1, ints(0, 40_000));
        proxy = new FakeProxy(serving);
        host = start(1, "p", List.of(), TIMEOUT);
        ByteBuffer dst = ByteBuffer.allocate(4 + 160_000).order(ByteOrder.LITTLE_ENDIAN);

        host.recv(INT, dst, 4, 40_000, 1);

        for (int i = 0; i < 40_000; i++) {
            assertEquals(i, dst.getInt(4 + i * 4));
        }
        List<FakeProxy.Datagram> requests = proxy.received(OP_RECV);
        assertEquals(List.of(16384L, 16384L, 7232L), requests.stream().map(d -> d.header().datacount()).toList());
        assertTrue(requests.stream().allMatch(d -> d.bytes().length == HEADER_LENGTH && d.header().datatype() == INT));
    }

    @Test
    void shouldKeepRepliesForAnotherRankWhileReceivingFromOne() throws Exception {
        streams.put(1, ints(0, 10));
        proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            V1HeaderFlyweight h = d.header();
            if (h.operation() == OP_RECV && h.rankId() == 1) {
                p.reply(d.source(), OP_RECV, 0, 2, 1, INT, 5, ints(100, 5).array());
                serve(p, d, 1, INT, (int) h.datacount());
            }
        });
        host = start(2, "p", List.of(), TIMEOUT);
        ByteBuffer one = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer two = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);

        host.recv(INT, one, 0, 10, 1);
        host.recv(INT, two, 0, 5, 2);

        assertArrayEquals(ints(0, 10).array(), one.array());
        assertArrayEquals(ints(100, 5).array(), two.array());
        assertTrue(proxy.received(OP_RECV).stream().allMatch(d -> d.header().rankId() == 1));
    }

    @Test
    void shouldFailRecvWithTheProxysErrorCode() throws Exception {
        proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            if (d.header().operation() == OP_RECV) {
                p.reply(d.source(), OP_RECV, MpiErrors.ERR_RANK, 1, 0, INT, 0, "rank 1 has exited".getBytes(StandardCharsets.UTF_8));
            }
        });
        host = start(1, "p", List.of(), TIMEOUT);

        MpiException e = assertThrows(MpiException.class, () -> host.recv(INT, ByteBuffer.allocate(4), 0, 1, 1));

        assertEquals(MpiErrors.ERR_RANK, e.errorCode());
        assertTrue(e.getMessage().contains("rank 1 has exited"), e.getMessage());
    }

    @Test
    void shouldFailRecvWhenTheRankSentAnotherDatatype() throws Exception {
        proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            if (d.header().operation() == OP_RECV) {
                p.reply(d.source(), OP_RECV, 0, 1, 0, UCHAR, 4, new byte[] {1, 2, 3, 4});
            }
        });
        host = start(1, "p", List.of(), TIMEOUT);

        MpiException e = assertThrows(MpiException.class, () -> host.recv(INT, ByteBuffer.allocate(4), 0, 1, 1));

        assertEquals(MpiErrors.ERR_TYPE, e.errorCode());
    }

    @Test
    void shouldDropMalformedRepliesAndTimeOut() throws Exception {
        proxy = new FakeProxy((d, p) -> {
            FakeProxy.STARTS_EVERYTHING.on(d, p);
            if (d.header().operation() == OP_RECV) {
                p.reply(d.source(), OP_RECV, 0, 1, 0, INT, 3, new byte[8]);
                p.reply(d.source(), OP_RECV, 0, 9, 0, INT, 1, new byte[4]);
                p.reply(d.source(), OP_RECV, 0, 1, 0, 99, 1, new byte[4]);
            }
        });
        // the timeout is the only way out of the RECV; long enough that the three replies, sent at
        // once, come before it on a busy machine
        host = start(1, "p", List.of(), Duration.ofSeconds(2));

        MpiException e = assertThrows(MpiException.class, () -> host.recv(INT, ByteBuffer.allocate(12), 0, 3, 1));

        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertTrue(e.getMessage().contains("no RECV reply from rank 1"), e.getMessage());
        assertEquals(3, host.droppedDatagrams());
    }

    @Test
    void shouldTerminateEveryRankAndReportNonZeroExitStatus() throws Exception {
        proxy = new FakeProxy((d, p) -> {
            V1HeaderFlyweight h = d.header();
            if (h.operation() == OP_EXEC) {
                p.reply(d.source(), OP_EXEC, 0, h.rankId(), h.coreId(), 0, 0, new byte[0]);
            } else if (h.operation() == OP_TERMINATE) {
                p.reply(d.source(), OP_TERMINATE, 0, h.rankId(), h.coreId(), 0, h.rankId() == 2 ? 3 : 0, new byte[0]);
            }
        });
        host = start(2, "p", List.of(), TIMEOUT);

        int[] statuses = host.finish();

        assertArrayEquals(new int[] {0, 0, 3}, statuses);
        List<FakeProxy.Datagram> terminates = proxy.received(OP_TERMINATE);
        assertEquals(2, terminates.size());
        assertEquals(1, terminates.get(1).header().coreId());
        assertEquals(HEADER_LENGTH, terminates.get(0).bytes().length);
        String report = diagnosticBytes.toString(StandardCharsets.UTF_8);
        assertTrue(report.contains("rank 2 on 127.0.0.1:" + proxy.port() + ":1 exited with status 3"), report);
        assertTrue(!report.contains("rank 1"), report);
        assertArrayEquals(statuses, host.finish());
        assertEquals(2, proxy.received(OP_TERMINATE).size());
    }
}
