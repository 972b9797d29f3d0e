package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.Status;
import org.mpiproxy.mpi.internal.ChannelRankTransport;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.TagMatcher;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * Tags end to end: ranks (threads over real mapped rings) and the v2 host (over real UDP and
 * the dispatcher) send tagged messages and receive them MPI-style, out of their sending order,
 * by tag, any tag and any source; messages of many fragments keep their boundaries.
 */
class V2TagsTest {

    private static final int INT = MpiDatatype.INT.code();
    private static final int BIG = 50_000;

    @TempDir
    Path dir;

    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

    @AfterEach
    void tearDown() {
        if (transport != null) {
            transport.close();
        }
        if (dispatcher != null) {
            dispatcher.close();
        }
        launches.shutdownNow();
        timer.shutdownNow();
    }

    private static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        return b;
    }

    private static ByteBuffer big(int rank) {
        ByteBuffer b = ByteBuffer.allocate(BIG * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < BIG; i++) {
            b.putInt(4 * i, rank * 1_000_000 + i);
        }
        return b;
    }

    /** Sends tags 3, 1 (many records), 2; receives 11 before 10 though 10 came first; answers with tag 4. */
    private static void rank(ChannelRankTransport rank, int id) {
        TagMatcher matcher = new TagMatcher(rank);
        rank.send(INT, 3, ints(id * 100 + 1), 0, 1, 0);
        rank.send(INT, 1, big(id), 0, BIG, 0);
        rank.send(INT, 2, ints(id * 100 + 2), 0, 1, 0);
        ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        Status eleven = matcher.recv(INT, b, 0, 4, 0, 11);
        int first = b.getInt(0);
        Status ten = matcher.recv(INT, b, 0, 4, TagMatcher.ANY_SOURCE, 10);
        int second = b.getInt(0);
        if (!eleven.equals(new Status(0, 11, 1)) || !ten.equals(new Status(0, 10, 1))) {
            throw new IllegalStateException("statuses " + eleven + " " + ten);
        }
        rank.send(INT, 4, ints(first * 10 + second), 0, 1, 0);
    }

    private int start() throws IOException {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString()));
        ProcessLauncher launcher = ThreadRanks.launcher((rank, request) -> rank(rank, request.rankId()));
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300)),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, dispatcher);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 4 << 20, 4 << 20, 65507), () -> front);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void shouldMatchTaggedMessagesBySourceAndTagBothWays() throws IOException {
        int port = start();
        V2HostTransport host = V2HostTransport.start(List.of(
                new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port, 0),
                new HostfileEntry(2, new byte[] {127, 0, 0, 1}, port, 0)), "tags", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        TagMatcher matcher = new TagMatcher(host);
        ByteBuffer b = ByteBuffer.allocate(BIG * 4).order(ByteOrder.LITTLE_ENDIAN);
        // tag 2 is each rank's last message: the others are kept
        Set<Integer> sources = new HashSet<>();
        for (int i = 0; i < 2; i++) {
            Status s = matcher.recv(INT, b, 0, BIG, TagMatcher.ANY_SOURCE, 2);
            assertEquals(2, s.tag());
            assertEquals(1, s.count());
            assertEquals(s.source() * 100 + 2, b.getInt(0));
            sources.add(s.source());
        }
        assertEquals(Set.of(1, 2), sources);
        for (int r = 1; r <= 2; r++) {
            assertEquals(new Status(r, 3, 1), matcher.recv(INT, b, 0, BIG, r, TagMatcher.ANY_TAG));
            assertEquals(r * 100 + 1, b.getInt(0));
            assertEquals(new Status(r, 1, BIG), matcher.recv(INT, b, 0, BIG, r, 1));
            assertEquals(-1, big(r).mismatch(b), "first differing byte of the big message of rank " + r);
        }
        assertEquals(0, matcher.keptMessages());
        for (int r = 1; r <= 2; r++) {
            host.send(INT, 10, ints(7), 0, 1, r);
            host.send(INT, 11, ints(8), 0, 1, r);
        }
        for (int r = 1; r <= 2; r++) {
            assertEquals(new Status(r, 4, 1), matcher.recv(INT, b, 0, 4, r, 4));
            assertEquals(87, b.getInt(0));
        }
        assertArrayEquals(new int[] {0, 0, 0}, host.finish());
    }
}
