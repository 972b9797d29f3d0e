package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.internal.ChannelRankTransport;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * The v2 host library against the v2 dispatcher over a real UDP socket and real mapped rings;
 * ranks are threads of this JVM using the rank side of the library.
 */
class V2EndToEndTest {

    @TempDir
    Path dir;

    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private V2Dispatcher dispatcher;
    private UdpTransport transport;
    /** How long the dispatcher's TERMINATE waits for a rank's exit before stopping it. */
    private Duration terminateTimeout = Duration.ofSeconds(30);
    /** Datagrams from the host this says to lose never reach the dispatcher: the network lost them. */
    private java.util.function.Predicate<ByteBuffer> lose = datagram -> false;

    /** What a rank thread does with its channel. */
    interface RankBody {
        void run(ChannelRankTransport rank, LaunchRequest request);
    }

    private int start(int datagramSize, String node, RankBody body) throws Exception {
        return start(datagramSize, node, 1 << 20, body, () -> { });
    }

    /** @param afterDatagram runs on the receive thread after each datagram was handled */
    private int start(int datagramSize, String node, int ringCapacity, RankBody body, Runnable afterDatagram)
            throws Exception {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString(),
                        "ring.capacity", ringCapacity));
        ProcessLauncher launcher = ThreadRanks.launcher(body::run, request -> request.rankId() * 10);
        dispatcher = new V2Dispatcher(channels,
                new ProxySettings(dir.resolve("logs"), 1 << 20, terminateTimeout, Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, node, Duration.ofSeconds(30), 1024, datagramSize,
                        Duration.ofSeconds(300)),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels,
                new ProxySettings(dir.resolve("logs"), 1 << 20, terminateTimeout, Duration.ofSeconds(1)),
                core -> launcher, () -> { }, launches, timer), false, dispatcher);
        DatagramHandler handler = new DatagramHandler() {
            @Override
            public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
                if (lose.test(datagram)) {
                    return;
                }
                front.onDatagram(datagram, source, replies);
                afterDatagram.run();
            }

            @Override
            public int doWork(DatagramTransport replies) {
                return front.doWork(replies);
            }

            @Override
            public boolean hasPendingWork() {
                return front.hasPendingWork();
            }
        };
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 8 << 20, 8 << 20, 65507), () -> handler);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

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

    private static List<HostfileEntry> hostfile(int port, int ranks) {
        HostfileEntry[] entries = new HostfileEntry[ranks];
        for (int i = 0; i < ranks; i++) {
            entries[i] = new HostfileEntry(i + 1, new byte[] {127, 0, 0, 1}, port, 0);
        }
        return List.of(entries);
    }

    @Test
    void shouldMove64MiBOfDoublesToARankAndBackIntact() throws Exception {
        int doubles = 64 * 1024 * 1024 / Double.BYTES;
        int port = start(65000, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocateDirect(doubles * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.DOUBLE.code(), b, 0, doubles, 0);
            rank.send(MpiDatatype.DOUBLE.code(), b, 0, doubles, 0);
        });
        ByteBuffer out = ByteBuffer.allocateDirect(doubles * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < doubles; i++) {
            out.putDouble(i * Double.BYTES, Math.sqrt(i) - i * 0.5);
        }
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "echo", List.of(), V2Datagrams.KEYS, 65000,
                Duration.ofSeconds(60), System.err);
        host.send(MpiDatatype.DOUBLE.code(), out, 0, doubles, 1);
        ByteBuffer back = ByteBuffer.allocateDirect(doubles * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        host.recv(MpiDatatype.DOUBLE.code(), back, 0, doubles, 1);
        assertEquals(-1, out.mismatch(back), "first differing byte");
        assertArrayEquals(new int[] {0, 10}, host.finish());
    }

    @Test
    void shouldSendAgainOnTheWindowUpdateWhenAFullRingRefusedFragmentsAndLoseNothing() throws Exception {
        int ints = 64 * 1024;
        java.util.concurrent.CountDownLatch refused = new java.util.concurrent.CountDownLatch(1);
        AtomicReference<ByteBuffer> received = new AtomicReference<>();
        // a 4 KiB ring holds two 1344-byte fragments, fewer than the host's first window of 8
        int port = start(1448, "127.0.0.1", 4096, (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocateDirect(ints * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            try {
                // read only once the proxy has refused a fragment: the host then waits for the window update
                if (!refused.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            rank.recv(MpiDatatype.INT.code(), b, 0, ints, 0);
            received.set(b);
        }, () -> {
            if (dispatcher.counter(V2Counter.SEND_RING_FULL) > 0) {
                refused.countDown();
            }
        });
        ByteBuffer out = ByteBuffer.allocateDirect(ints * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ints; i++) {
            out.putInt(i * Integer.BYTES, i * 31 + 7);
        }
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        host.send(MpiDatatype.INT.code(), out, 0, ints, 1);
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(-1, out.mismatch(received.get()), "first differing byte");
        assertEquals(true, dispatcher.counter(V2Counter.SEND_WINDOW_UPDATES) > 0, "window updates sent");
        assertEquals(ints * (long) Integer.BYTES, dispatcher.counter(V2Counter.SEND_BYTES), "every byte stored once");
    }

    /**
     * Section 7's timer rule: the host's retransmit timeout doubles only while nothing is
     * acknowledged and goes back to its initial value (20 ms) on an ack that advances. The network
     * loses every SEND until fragment 0 went out 7 times (the timeout has doubled to 1 s by then),
     * lets that one through and loses the rest again: the first fragment not acknowledged must come
     * again after about 20 ms, not after the 1 s it would take had the timeout kept its back-off.
     */
    @Test
    void shouldSendAgainAfterTheInitialTimeoutOnceAnAckAdvancedAfterABackOff() throws Exception {
        int ints = 16 * 1024;
        AtomicReference<ByteBuffer> received = new AtomicReference<>();
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(ints * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, ints, 0);
            received.set(b);
        });
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        List<Long> zeroSent = new java.util.ArrayList<>();
        Map<Long, Long> firstSeenAfterAck = new java.util.HashMap<>();
        long[] resend = {-1, 0}; // sequence, nanoseconds after its first sending since the ack
        int[] phase = {0}; // 0: lose until fragment 0 went 7 times; 1: lose, watch for a resend; 2: lose nothing
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND || phase[0] == 2) {
                return false;
            }
            long now = System.nanoTime();
            long sequence = header.sequence();
            if (phase[0] == 0) {
                if (sequence == 0) {
                    zeroSent.add(now);
                    if (zeroSent.size() == 7) {
                        phase[0] = 1;
                        return false;
                    }
                }
                return true;
            }
            Long first = firstSeenAfterAck.putIfAbsent(sequence, now);
            if (first != null) {
                resend[0] = sequence;
                resend[1] = now - first;
                phase[0] = 2;
            }
            return true;
        };
        ByteBuffer out = ByteBuffer.allocate(ints * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ints; i++) {
            out.putInt(i * Integer.BYTES, i * 13 + 5);
        }
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        host.send(MpiDatatype.INT.code(), out, 0, ints, 1);
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(-1, out.mismatch(received.get()), "first differing byte");

        long backedOff = zeroSent.get(6) - zeroSent.get(5);
        assertEquals(true, backedOff >= Duration.ofMillis(500).toNanos(),
                "the timeout doubled while nothing was acknowledged: " + backedOff / 1_000_000 + " ms before the 7th");
        assertEquals(1, resend[0], "fragment 1, the first not acknowledged, is sent again");
        assertEquals(true, resend[1] < Duration.ofMillis(400).toNanos(), "sent again " + resend[1] / 1_000_000
                + " ms after the ack of fragment 0: the timeout did not go back to 20 ms");
    }

    /**
     * Messages of one fragment go eagerly: the network loses the first sending of every seventh
     * one, yet the rank gets all 3000 in order, each stored once, because the kept copies go again
     * after the retransmit timeout while the host sends more and while {@code finish} waits.
     */
    @Test
    void shouldDeliverEveryEagerMessageOnceAndInOrderWhenTheNetworkLosesSome() throws Exception {
        int messages = 3000;
        AtomicReference<String> seen = new AtomicReference<>("nothing");
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < messages; i++) {
                rank.recv(MpiDatatype.INT.code(), b, 0, 1, 0);
                if (b.getInt(0) != i * 3 + 1) {
                    seen.set("message " + i + " was " + b.getInt(0));
                    return;
                }
            }
            seen.set("all");
        });
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        java.util.Set<Long> lostOnce = java.util.concurrent.ConcurrentHashMap.newKeySet();
        // the nonce of each lost first sending, and how many copies came again unchanged or signed again
        Map<Long, Long> lostNonces = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicInteger unchanged = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger resigned = new java.util.concurrent.atomic.AtomicInteger();
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND) {
                return false;
            }
            Long first = lostNonces.get(header.sequence());
            if (first != null) {
                (first == header.nonce() ? unchanged : resigned).incrementAndGet();
            }
            if (header.sequence() % 7 == 3 && lostOnce.add(header.sequence())) {
                lostNonces.put(header.sequence(), header.nonce());
                return true;
            }
            return false;
        };
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < messages; i++) {
            one.putInt(0, i * 3 + 1);
            host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
        }
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals("all", seen.get());
        assertEquals(messages / 7 + (messages % 7 > 3 ? 1 : 0), lostOnce.size(), "first sendings lost");
        assertEquals(messages * (long) Integer.BYTES, dispatcher.counter(V2Counter.SEND_BYTES),
                "every message stored once");
        // resent soon after its signature, a fragment goes out as it was signed: no second MAC
        assertEquals(true, unchanged.get() >= lostOnce.size() / 2,
                unchanged.get() + " lost fragments came again unchanged, " + resigned.get() + " signed again");
    }

    /**
     * A hole sent again and lost again: the host has every kept copy out and nothing else in flight
     * (it waits in {@code flush}), so no reply can show the second loss. It goes once more after the
     * hole probe time (1 ms here), before the retransmit timeout (2 ms at least). The lost fragment
     * is the last but one: only the reply to the last shows the hole, and nothing is sent after its
     * resend whose reply could show that loss instead of the probe. A run in which a pause of the
     * machine let the timeout come first says nothing about the probe and is run again (a host
     * without the probe times out every time).
     */
    @Test
    void shouldSendALostHoleOnceMoreBeforeTheRetransmitTimeout() throws Exception {
        int messages = 10;
        AtomicReference<String> seen = new AtomicReference<>("nothing");
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < messages; i++) {
                rank.recv(MpiDatatype.INT.code(), b, 0, 1, 0);
                if (b.getInt(0) != i) {
                    seen.set("message " + i + " was " + b.getInt(0));
                    return;
                }
            }
            seen.set("all");
        });
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        java.util.concurrent.atomic.AtomicInteger sendings = new java.util.concurrent.atomic.AtomicInteger();
        int lost = messages - 2;
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            // the first sending of the last fragment but one and its first resend are lost
            return header.operation() == org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND
                    && header.sequence() == lost && sendings.incrementAndGet() <= 2;
        };
        Map<String, Long> c = Map.of();
        for (int run = 0; run < 3; run++) {
            sendings.set(0);
            seen.set("nothing");
            V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS,
                    1448, Duration.ofSeconds(60), System.err);
            ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < messages; i++) {
                host.send(MpiDatatype.INT.code(), one.putInt(0, i), 0, 1, 1);
            }
            host.flush(1);
            c = host.sendCounters();
            assertArrayEquals(new int[] {0, 10}, host.finish());
            assertEquals("all", seen.get());
            if (c.get("send.timeouts") == 0) {
                break;
            }
        }
        assertEquals(0, c.get("send.timeouts"), "no retransmit timeout in three runs: " + c);
        assertEquals(1, c.get("send.resent.hole"), "the reply to the last fragment showed the hole: " + c);
        assertEquals(1, c.get("send.hole.probes"), "the lost resend went once more as a probe: " + c);
        assertEquals(3, sendings.get(), "fragment " + lost + " went three times: " + c);
    }

    /**
     * After a retransmit timeout only the first fragment not acknowledged goes again (a proxy holds
     * those after it that arrived); the ones it misses too follow one reply apart. With every SEND
     * lost for 150 ms, ten kept fragments cost one resend per timeout, not ten.
     */
    @Test
    void shouldSendOnlyTheFirstFragmentNotAcknowledgedAgainAfterATimeout() throws Exception {
        int messages = 10;
        AtomicReference<Integer> sum = new AtomicReference<>();
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            int total = 0;
            for (int i = 0; i < messages; i++) {
                rank.recv(MpiDatatype.INT.code(), b, 0, 1, 0);
                total = total * 31 + b.getInt(0);
            }
            sum.set(total);
        });
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        long until = System.nanoTime() + Duration.ofMillis(150).toNanos();
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            return header.operation() == org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND && System.nanoTime() < until;
        };
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        int expected = 0;
        for (int i = 0; i < messages; i++) {
            host.send(MpiDatatype.INT.code(), one.putInt(0, i + 7), 0, 1, 1);
            expected = expected * 31 + i + 7;
        }
        host.flush(1);
        Map<String, Long> c = host.sendCounters();
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(expected, sum.get());
        assertEquals(true, c.get("send.timeouts") >= 2, "timeouts while every SEND was lost: " + c);
        assertEquals(c.get("send.timeouts"), c.get("send.resent.timeout"), "one fragment per timeout: " + c);
    }

    /**
     * An eager send returns before the proxy has the message: with every SEND lost for 300 ms the
     * call still returns at once; the kept copy reaches the rank later, and {@code finish}
     * terminates the rank only after the proxy acknowledged it.
     */
    @Test
    void shouldReturnFromAnEagerSendBeforeItsAcknowledgementAndDeliverItBeforeTerminating() throws Exception {
        AtomicReference<Integer> got = new AtomicReference<>();
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, 1, 0);
            got.set(b.getInt(0));
        });
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        long until = System.nanoTime() + Duration.ofMillis(300).toNanos();
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        java.util.Set<Long> nonces = java.util.concurrent.ConcurrentHashMap.newKeySet();
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND) {
                return false;
            }
            nonces.add(header.nonce());
            return System.nanoTime() < until;
        };
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 4242);
        long t0 = System.nanoTime();
        host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
        long tookMillis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(true, tookMillis < 250, "send waited " + tookMillis + " ms for an acknowledgement");
        assertEquals(null, got.get(), "nothing reached the rank yet");
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(4242, got.get());
        // the copies sent 200 ms or more after the first were signed again, with a fresh nonce
        assertEquals(true, nonces.size() >= 2, "nonces of the fragment's copies: " + nonces);
    }

    /** The refusal of an eager message (the rank has ended) is thrown by the next send to that rank. */
    @Test
    void shouldThrowTheRefusalOfAnEagerMessageFromTheNextSend() throws Exception {
        int port = start(1448, "127.0.0.1", (rank, request) -> { });
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "gone", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (dispatcher.jobs().stream().flatMap(j -> j.ranks().stream())
                .noneMatch(r -> r.state() == org.mpiproxy.api.RankInfo.State.EXITED) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
        MpiException e = null;
        for (int i = 0; i < 50 && e == null; i++) {
            Thread.sleep(20);
            try {
                host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
            } catch (MpiException thrown) {
                e = thrown;
            }
        }
        assertEquals(true, e != null, "no send threw the refusal");
        assertEquals(MpiErrors.ERR_TRUNCATE, e.errorCode());
        assertEquals(true, e.getMessage().contains("rank 1 refused data: MPI_ERR_TRUNCATE"), e.getMessage());
        host.finish();
    }

    @Test
    void shouldRunTwoJobsWithTwoRanksEachOverDefaultDatagrams() throws Exception {
        int count = 100_000;
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, count, 0);
            for (int i = 0; i < count; i++) {
                b.putInt(4 * i, b.getInt(4 * i) + request.rankId());
            }
            rank.send(MpiDatatype.INT.code(), b, 0, count, 0);
        });
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Runnable job = () -> {
            try {
                V2HostTransport host = V2HostTransport.start(hostfile(port, 2), "add", List.of(), V2Datagrams.KEYS,
                        1448, Duration.ofSeconds(60), System.err);
                ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
                for (int r = 1; r <= 2; r++) {
                    for (int i = 0; i < count; i++) {
                        b.putInt(4 * i, i);
                    }
                    host.send(MpiDatatype.INT.code(), b, 0, count, r);
                }
                for (int r = 1; r <= 2; r++) {
                    host.recv(MpiDatatype.INT.code(), b, 0, count, r);
                    for (int i = 0; i < count; i++) {
                        assertEquals(i + r, b.getInt(4 * i));
                    }
                }
                assertArrayEquals(new int[] {0, 10, 20}, host.finish());
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        };
        Thread a = new Thread(job);
        Thread b = new Thread(job);
        a.start();
        b.start();
        a.join(120_000);
        b.join(120_000);
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(2, dispatcher.counter(V2Counter.JOBS_CREATED));
        assertEquals(2, dispatcher.counter(V2Counter.JOBS_FINISHED));
    }

    @Test
    void shouldRefuseAHostWithAnotherKeyAndStartNothing() throws Exception {
        int port = start(1448, "127.0.0.1", (rank, request) -> { });
        ClusterKeys wrong = ClusterKeys.of(Map.of(1, new byte[32]), 1);
        PrintStream quiet = new PrintStream(java.io.OutputStream.nullOutputStream());
        MpiException e = assertThrows(MpiException.class, () -> V2HostTransport.start(hostfile(port, 1), "x",
                List.of(), wrong, 1448, Duration.ofSeconds(2), quiet));
        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REQUESTS));
        assertEquals(true, dispatcher.counter(V2Counter.AUTH_BAD_MAC) > 0);
        assertEquals(false, Files.exists(dir.resolve("shm")) && Files.list(dir.resolve("shm")).findAny().isPresent());
    }

    @Test
    void shouldKeepAWaitingHostHearingFromANodeWhileItsRankTakesLongerThanTheSilenceToTerminate() throws Exception {
        // the rank ignores TERMINATE: the proxy stops it after its terminate timeout, four times the host's silence
        terminateTimeout = Duration.ofSeconds(2);
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        java.io.ByteArrayOutputStream diagnostics = new java.io.ByteArrayOutputStream();
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "waits", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), Duration.ofMillis(500), new PrintStream(diagnostics, true));
        long start = System.nanoTime();
        try {
            // 143: stopped by the proxy (a thread rank records SIGTERM's status), not given up as dead (-1)
            assertArrayEquals(new int[] {0, 143}, host.finish(), diagnostics.toString());
        } finally {
            never.countDown();
        }
        assertEquals(true, System.nanoTime() - start >= Duration.ofSeconds(2).toNanos(), "waited for the stop");
        assertEquals(true, host.terminateInterims(1) > 0, "interim replies");
        assertEquals(true, dispatcher.counter(V2Counter.TERMINATE_INTERIM) > 0);
        assertEquals(false, diagnostics.toString().contains("declared dead"), diagnostics.toString());
    }

    @Test
    void shouldGiveUpARankWhoseNodeFallsSilentWhileTerminatingAfterTheDeadNodeSilence() throws Exception {
        java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        java.io.ByteArrayOutputStream diagnostics = new java.io.ByteArrayOutputStream();
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "waits", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), Duration.ofMillis(500), new PrintStream(diagnostics, true));
        // the node goes away: no reply of any kind any more
        transport.close();
        long start = System.nanoTime();
        try {
            assertArrayEquals(new int[] {0, -1}, host.finish());
        } finally {
            never.countDown();
        }
        // without the rule the host waited its reply timeout and 45 s more
        assertEquals(true, System.nanoTime() - start < Duration.ofSeconds(20).toNanos(), "gave up after the silence");
        assertEquals(true, diagnostics.toString().contains("declared dead"), diagnostics.toString());
    }
}
