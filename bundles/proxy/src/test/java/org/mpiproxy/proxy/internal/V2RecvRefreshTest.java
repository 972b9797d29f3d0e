package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A RECV stream survives the loss of the dispatcher (as on a refresh of the proxy bundle): the
 * fragments sent but not acknowledged are still in the rank's channel file, and a new
 * dispatcher over the same files answers the host's next RECV with exactly what is missing.
 */
class V2RecvRefreshTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x5eedL;
    private static final long NOW = 1_767_225_600_000L;
    /** The dispatchers' clock: a host asks again for lost fragments only after its retransmit timeout. */
    private long now = NOW;
    private static final int INT = MpiDatatype.INT.code();

    @TempDir
    Path dir;

    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private final List<V2Dispatcher> dispatchers = new ArrayList<>();
    private final List<RankChannel> mappings = new ArrayList<>();

    /** Channels in mapped files: creates a rank's file, or maps it when it exists (as the shm manager). */
    private final class FileChannels implements ChannelManager {
        @Override
        public RankChannel open(long jobId, int rankId) throws IOException {
            Path file = jobDirectory(jobId).resolve("rank-" + rankId + ".chan");
            Files.createDirectories(file.getParent());
            RankChannel c = Files.exists(file) ? MappedRankChannel.map(file)
                    : MappedRankChannel.create(file, 65536, jobId, rankId);
            mappings.add(c);
            return c;
        }

        @Override
        public void remove(long jobId, int rankId) {
        }

        @Override
        public void release(long jobId) {
        }

        @Override
        public Path jobDirectory(long jobId) {
            return dir.resolve("job-" + Job.hex(jobId));
        }

        @Override
        public Path baseDirectory() {
            return dir;
        }
    }

    private V2Dispatcher newDispatcher() {
        V2Dispatcher d = new V2Dispatcher(new FileChannels(),
                new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                        Duration.ofSeconds(300)),
                coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> now);
        dispatchers.add(d);
        return d;
    }

    @AfterEach
    void tearDown() {
        for (V2Dispatcher d : dispatchers) {
            d.close();
        }
        for (RankChannel c : mappings) {
            c.close();
        }
        timer.shutdownNow();
    }

    private List<V2HeaderFlyweight> deliver(V2Dispatcher d, ByteBuffer datagram) {
        d.onDatagram(datagram, HOST, transport);
        d.doWork(transport);
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
        }
        return list;
    }

    private void exec(V2Dispatcher d) {
        List<V2HeaderFlyweight> r = deliver(d, host.exec(JOB, 1, 0, 2, "prog"));
        assertEquals(1, r.size());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
    }

    /** What the host has received in order: the elements, and the next fragment it wants. */
    private final List<Integer> received = new ArrayList<>();
    private long hostNext;

    /** Accepts the in-order fragments among {@code replies} below {@code limit} (the rest is "lost"). */
    private void take(List<V2HeaderFlyweight> replies, long limit) {
        for (V2HeaderFlyweight h : replies) {
            assertEquals(V2HeaderDescriptor.OP_RECV, h.operation());
            assertEquals(MpiErrors.SUCCESS, h.result());
            if (h.payloadLength() == 0 || h.sequence() != hostNext || h.sequence() >= limit) {
                continue;
            }
            assertEquals(INT, h.datatype());
            for (int i = 0; i < h.argument(); i++) {
                received.add(h.buffer().getInt(h.payloadOffset() + 4 * i));
            }
            hostNext++;
        }
    }

    @Test
    void shouldAnswerTheNextRecvAfterARefreshWithExactlyTheMissingElements() throws IOException {
        V2Dispatcher first = newDispatcher();
        exec(first);
        // the rank writes records of several sizes: some become several fragments
        int[] sizes = {1000, 7, 350, 1, 2000, 349, 351, 64, 900};
        int total = 0;
        try (MappedRankChannel rank = MappedRankChannel.map(dir.resolve("job-" + Job.hex(JOB)).resolve("rank-1.chan"))) {
            ByteBuffer b = ByteBuffer.allocate(8000).order(ByteOrder.LITTLE_ENDIAN);
            for (int size : sizes) {
                for (int i = 0; i < size; i++) {
                    b.putInt(4 * i, total + i);
                }
                assertTrue(rank.fromRank().offer(INT, size, 3, b, 0, 4 * size), "record of " + size);
                total += size;
            }
        }
        // (a) the host pulls 8 fragments and gets 0..4; it acknowledges them and gets 5..9 of the next
        take(deliver(first, host.recv(JOB, 1, 0, 8)), 5);
        assertEquals(5, hostNext);
        now += 20;
        take(deliver(first, host.recv(JOB, 1, 5, 8)), 10);
        assertEquals(10, hostNext);
        int before = received.size();
        assertTrue(before > 0 && before < total);

        // (b) the dispatcher is dropped with fragments 5..12 sent and 5.. not acknowledged
        MappedRankChannel look = MappedRankChannel.map(dir.resolve("job-" + Job.hex(JOB)).resolve("rank-1.chan"));
        mappings.add(look);
        assertEquals(5, look.fromRank().consumerMark(), "the ring knows the first unacknowledged fragment");
        assertTrue(!look.fromRank().isEmpty());
        dispatchers.remove(first);

        // (c) a new dispatcher over the same files answers the host's next RECV from 10
        V2Dispatcher second = newDispatcher();
        exec(second);
        for (int round = 0; round < 20 && received.size() < total; round++) {
            take(deliver(second, host.recv(JOB, 1, hostNext, 16)), Long.MAX_VALUE);
        }
        assertEquals(total, received.size(), "every element once");
        for (int i = 0; i < total; i++) {
            assertEquals(i, received.get(i), "element " + i + " in order");
        }
        assertEquals(5, second.counter(V2Counter.RECV_SKIPPED), "fragments 5..9 cut again and skipped");
        // acknowledging everything releases the ring
        deliver(second, host.recv(JOB, 1, hostNext, 16));
        assertTrue(look.fromRank().isEmpty());
        assertEquals(hostNext, look.fromRank().consumerMark());
    }

    @Test
    void shouldSendAgainFromTheFirstUnacknowledgedFragmentAfterARefresh() throws IOException {
        V2Dispatcher first = newDispatcher();
        exec(first);
        int total = 3000;
        try (MappedRankChannel rank = MappedRankChannel.map(dir.resolve("job-" + Job.hex(JOB)).resolve("rank-1.chan"))) {
            ByteBuffer b = ByteBuffer.allocate(4 * total).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < total; i++) {
                b.putInt(4 * i, i);
            }
            assertTrue(rank.fromRank().offer(INT, total / 2, MessageRing.MORE_RECORDS, b, 0, 2 * total));
            assertTrue(rank.fromRank().offer(INT, total / 2, 0, b, 2 * total, 2 * total));
        }
        take(deliver(first, host.recv(JOB, 1, 0, 4)), 2);
        take(deliver(first, host.recv(JOB, 1, 2, 4)), 2);
        assertEquals(2, hostNext);
        dispatchers.remove(first);

        V2Dispatcher second = newDispatcher();
        exec(second);
        List<V2HeaderFlyweight> r = deliver(second, host.recv(JOB, 1, 2, 256));
        assertEquals(2, r.get(0).sequence(), "continues at the first unacknowledged fragment");
        take(r, Long.MAX_VALUE);
        assertEquals(total, received.size());
        for (int i = 0; i < total; i++) {
            assertEquals(i, received.get(i), "element " + i);
        }
        assertEquals(V2HeaderDescriptor.FLAG_END_OF_MESSAGE,
                r.get(r.size() - 1).flags() & V2HeaderDescriptor.FLAG_END_OF_MESSAGE);
        assertEquals(0, second.counter(V2Counter.RECV_SKIPPED));
    }
}
