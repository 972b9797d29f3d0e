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
     * lets that one through and loses the rest again. The host's SEND timers then run on a held
     * clock, moved 100 ms once the host took the ack (it sends fragment 1 again for the hole that
     * ack shows): fragment 1, the first not acknowledged, must go once more, which a timeout still
     * backed off to 1 s would not do.
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
        HeldClock clock = new HeldClock();
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        List<Long> zeroSent = new java.util.ArrayList<>();
        java.util.Set<Long> sentAfterAck = new java.util.HashSet<>();
        long[] resent = {-1, -1}; // the sequence sent again after the ack, and how far the clock had moved then
        int[] phase = {0}; // 0: lose until fragment 0 went 7 times; 1: lose, watch for a resend; 2: lose nothing
        long moved = Duration.ofMillis(100).toNanos();
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND || phase[0] == 2) {
                return false;
            }
            long sequence = header.sequence();
            if (phase[0] == 0) {
                if (sequence == 0) {
                    zeroSent.add(clock.getAsLong());
                    if (zeroSent.size() == 7) {
                        // from here on the host's timers see only the moves of the test
                        clock.hold();
                        phase[0] = 1;
                        return false;
                    }
                }
                return true;
            }
            if (!sentAfterAck.add(sequence)) {
                resent[0] = sequence;
                resent[1] = clock.advanced();
                phase[0] = 2;
                return false;
            } else if (sequence == 1) {
                // sent again at once for the hole the ack of fragment 0 showed: the host took that ack
                clock.advance(moved);
            }
            return true;
        };
        ByteBuffer out = ByteBuffer.allocate(ints * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < ints; i++) {
            out.putInt(i * Integer.BYTES, i * 13 + 5);
        }
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err).sendClock(clock);
        callHolding(clock, () -> {
            host.send(MpiDatatype.INT.code(), out, 0, ints, 1);
            host.flush(1);
        }, "nothing went again 100 ms after the ack of fragment 0: the timeout kept its back-off");
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(-1, out.mismatch(received.get()), "first differing byte");

        long backedOff = zeroSent.get(6) - zeroSent.get(5);
        assertEquals(true, backedOff >= Duration.ofMillis(500).toNanos(),
                "the timeout doubled while nothing was acknowledged: " + backedOff / 1_000_000 + " ms before the 7th");
        assertEquals(1, resent[0], "fragment 1, the first not acknowledged, is sent again");
        assertEquals(moved, resent[1], "sent again once the clock had moved 100 ms past the ack");
    }

    /**
     * Messages of one fragment go eagerly: the network loses the first sending of every seventh
     * one, yet the rank gets all 3000 in order, each stored once. The kept copies go again as the
     * proxy's replies show them missing, while the host sends more and while {@code flush} waits
     * for all but the last; the last, lost too and sent after that {@code flush}, has no later one
     * whose reply could show it: the retransmit timeout sends it again while {@code finish} waits.
     * The host's SEND timers run on a held clock, moved by a second once the last was sent: until
     * then no copy can be older than the 200 ms within which a resent copy goes out as it was
     * signed (no second MAC), and the last one, sent again after that second, is signed again.
     */
    @Test
    void shouldDeliverEveryEagerMessageOnceAndInOrderWhenTheNetworkLosesSome() throws Exception {
        int messages = 3000;
        HeldClock clock = HeldClock.held();
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
        // the nonce of each lost first sending, and how many copies came again unchanged or signed
        // again while the clock was held still, and of the last one after it moved
        Map<Long, Long> lostNonces = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicInteger unchanged = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger resigned = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger lastResigned = new java.util.concurrent.atomic.AtomicInteger();
        long last = messages - 1;
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND) {
                return false;
            }
            Long first = lostNonces.get(header.sequence());
            if (first != null) {
                if (clock.advanced() == 0) {
                    (first == header.nonce() ? unchanged : resigned).incrementAndGet();
                } else if (header.sequence() == last && first != header.nonce()) {
                    lastResigned.incrementAndGet();
                }
            }
            if ((header.sequence() % 7 == 3 || header.sequence() == last) && lostOnce.add(header.sequence())) {
                lostNonces.put(header.sequence(), header.nonce());
                return true;
            }
            return false;
        };
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err).sendClock(clock);
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        callHolding(clock, () -> {
            for (int i = 0; i < last; i++) {
                host.send(MpiDatatype.INT.code(), one.putInt(0, i * 3 + 1), 0, 1, 1);
            }
            // nothing but the last can be missing after this, nor be sent again
            host.flush(1);
        }, "a lost fragment was not sent again for the hole the replies showed");
        host.send(MpiDatatype.INT.code(), one.putInt(0, (int) last * 3 + 1), 0, 1, 1);
        clock.advance(Duration.ofSeconds(1).toNanos());
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals("all", seen.get());
        assertEquals(messages / 7 + (messages % 7 > 3 ? 1 : 0) + (last % 7 == 3 ? 0 : 1), lostOnce.size(),
                "first sendings lost");
        assertEquals(messages * (long) Integer.BYTES, dispatcher.counter(V2Counter.SEND_BYTES),
                "every message stored once");
        // resent soon after its signature, a fragment goes out as it was signed: no second MAC
        assertEquals(0, resigned.get(), "copies signed again within 200 ms of the first signature");
        assertEquals(true, unchanged.get() >= lostOnce.size() - 1,
                unchanged.get() + " lost fragments came again unchanged before the last was sent");
        assertEquals(1, lastResigned.get(), "the last, sent again a second after it was signed, was signed again");
    }

    /**
     * A hole sent again and lost again: the host has every kept copy out and nothing else in flight
     * (it waits in {@code flush}), so no reply can show the second loss. It goes once more after the
     * hole probe time, before the retransmit timeout. The lost fragment is the last but one: only
     * the reply to the last shows the hole, and nothing is sent after its resend whose reply could
     * show that loss instead of the probe. The host's SEND timers run on a held clock: every round
     * trip measures 0, so the retransmit timeout sits at its floor (2 ms) and the probe at its
     * shortest (1 ms); once the resend is lost the clock moves 1.5 ms, and only the probe is due.
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
        HeldClock clock = HeldClock.held();
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        java.util.concurrent.atomic.AtomicInteger sendings = new java.util.concurrent.atomic.AtomicInteger();
        int lost = messages - 2;
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND || header.sequence() != lost) {
                return false;
            }
            // the first sending of the last fragment but one and its first resend are lost
            int sending = sendings.incrementAndGet();
            if (sending == 2) {
                clock.advance(Duration.ofMillis(1).toNanos() + Duration.ofMillis(1).toNanos() / 2);
            }
            return sending <= 2;
        };
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS,
                1448, Duration.ofSeconds(60), System.err).sendClock(clock);
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < messages; i++) {
            host.send(MpiDatatype.INT.code(), one.putInt(0, i), 0, 1, 1);
        }
        callHolding(clock, () -> host.flush(1), "fragment " + lost + " was not sent again after the probe time");
        Map<String, Long> c = host.sendCounters();
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals("all", seen.get());
        assertEquals(0, c.get("send.timeouts"), "no retransmit timeout: " + c);
        assertEquals(1, c.get("send.resent.hole"), "the reply to the last fragment showed the hole: " + c);
        assertEquals(1, c.get("send.hole.probes"), "the lost resend went once more as a probe: " + c);
        assertEquals(3, sendings.get(), "fragment " + lost + " went three times: " + c);
    }

    /**
     * Runs a host call that waits for what only a move of the held clock brings. The ceiling only
     * catches a host that never does it: the clock then moves by an hour, so that the retransmit
     * timeout ends the call and the job can finish, and the test fails with {@code failure}.
     */
    private static void callHolding(HeldClock clock, Runnable call, String failure) throws Exception {
        ExecutorService caller = Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<?> done = caller.submit(call);
            try {
                done.get(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                long moved = clock.advanced();
                clock.advance(Duration.ofHours(1).toNanos());
                done.get(60, java.util.concurrent.TimeUnit.SECONDS);
                throw new AssertionError(failure + " (the held clock had moved " + moved / 1000 + " µs)");
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof Error error) {
                    throw error;
                }
                throw (Exception) e.getCause();
            }
        } finally {
            caller.shutdownNow();
        }
    }

    /**
     * After a retransmit timeout only the first fragment not acknowledged goes again (a proxy holds
     * those after it that arrived); the ones it misses too follow one reply apart. With every SEND
     * lost until the first fragment went out three times (twice by a timeout: nothing arrived
     * that could show a hole), ten kept fragments cost one resend per timeout, not ten.
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
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        int[] firstSent = {0};
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND || firstSent[0] >= 3) {
                return false;
            }
            return header.sequence() != 0 || ++firstSent[0] < 3;
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
     * An eager send returns before the proxy has the message: with its first sending lost, the
     * call returns all the same; the kept copy reaches the rank later, and {@code finish}
     * terminates the rank only after the proxy acknowledged it. The host's SEND timers run on a
     * held clock, moved by a second once the send returned: the copy sent again after that second
     * was signed again, with a fresh nonce.
     */
    @Test
    void shouldReturnFromAnEagerSendBeforeItsAcknowledgementAndDeliverItBeforeTerminating() throws Exception {
        AtomicReference<Integer> got = new AtomicReference<>();
        int port = start(1448, "127.0.0.1", (rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, 1, 0);
            got.set(b.getInt(0));
        });
        HeldClock clock = HeldClock.held();
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "sink", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err).sendClock(clock);
        org.mpiproxy.protocol.V2HeaderFlyweight header = new org.mpiproxy.protocol.V2HeaderFlyweight();
        List<Long> nonces = new java.util.concurrent.CopyOnWriteArrayList<>();
        lose = datagram -> {
            header.wrap(datagram, datagram.position());
            if (header.operation() != org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND) {
                return false;
            }
            nonces.add(header.nonce());
            return nonces.size() == 1;
        };
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 4242);
        // a send that waited for its acknowledgement would wait for a timeout the held clock never brings
        callHolding(clock, () -> host.send(MpiDatatype.INT.code(), one, 0, 1, 1),
                "the send waited for the acknowledgement of its lost fragment");
        assertEquals(null, got.get(), "nothing reached the rank yet");
        clock.advance(Duration.ofSeconds(1).toNanos());
        assertArrayEquals(new int[] {0, 10}, host.finish());
        assertEquals(4242, got.get());
        assertEquals(2, nonces.size(), "copies of the fragment: " + nonces);
        assertEquals(false, nonces.get(0).equals(nonces.get(1)), "the copy sent a second later was signed again: "
                + nonces);
    }

    /**
     * The refusal of an eager message (the rank has ended) is thrown by the next send to that rank.
     * Messages go until one call throws: the reply with the refusal comes while later ones are
     * kept, and a call waits for replies once the kept copies are full.
     */
    @Test
    void shouldThrowTheRefusalOfAnEagerMessageFromTheNextSend() throws Exception {
        int port = start(1448, "127.0.0.1", (rank, request) -> { });
        V2HostTransport host = V2HostTransport.start(hostfile(port, 1), "gone", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(60), System.err);
        Await.until(() -> dispatcher.jobs().stream().flatMap(j -> j.ranks().stream())
                .anyMatch(r -> r.state() == org.mpiproxy.api.RankInfo.State.EXITED), "the rank exited");
        ByteBuffer one = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
        MpiException e = null;
        int sends = 1;
        for (; sends < 10_000 && e == null; sends++) {
            try {
                host.send(MpiDatatype.INT.code(), one, 0, 1, 1);
            } catch (MpiException thrown) {
                e = thrown;
            }
        }
        assertEquals(true, e != null, "none of " + sends + " sends threw the refusal");
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
        // the rank ignores TERMINATE: the proxy stops it after its terminate timeout, four times the host's
        // silence; that silence (1 s) is what a busy machine must not stall the proxy's thread for
        terminateTimeout = Duration.ofSeconds(4);
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
                Duration.ofSeconds(60), Duration.ofSeconds(1), new PrintStream(diagnostics, true));
        long start = System.nanoTime();
        try {
            // 143: stopped by the proxy (a thread rank records SIGTERM's status), not given up as dead (-1)
            assertArrayEquals(new int[] {0, 143}, host.finish(), diagnostics.toString());
        } finally {
            never.countDown();
        }
        assertEquals(true, System.nanoTime() - start >= terminateTimeout.toNanos(), "waited for the stop");
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
