package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.mpiproxy.channel.shm.BackoffIdler;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.mpi.internal.ChannelRankTransport;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.proxy.internal.EmbeddedProxy;
import org.mpiproxy.transport.udp.internal.UdpTransport;

/**
 * Streams through the embedded proxy over protocol v2, driven by the product's own host library
 * ({@link V2HostTransport}, what {@code Mpi.init} uses on rank 0) and read or written by a rank
 * thread over the rank's channel file.
 */
final class V2Benchmarks {

    static final int CHAR = UdpBenchmarks.CHAR;

    private V2Benchmarks() {
    }

    /** Starts a job of one rank ({@code idle}, which sleeps: a thread of this JVM plays the rank). */
    private static V2HostTransport start(ProxyFixture proxy) {
        HostfileEntry node = new HostfileEntry(1, new byte[] {127, 0, 0, 1}, proxy.address.getPort(), 0);
        ClusterKeys keys = ClusterKeys.load(Map.of(1, proxy.v2.keyFile()));
        return V2HostTransport.start(List.of(node), "idle", List.of(), keys, proxy.v2.datagramSize(),
                Duration.ofSeconds(30), new PrintStream(PrintStream.nullOutputStream()));
    }

    /** @return the payload bytes of one v2 datagram of the given size */
    static int maxPayload(int datagramSize) {
        return V2HeaderDescriptor.maxPayload(datagramSize);
    }

    /**
     * Host to rank: the host library sends messages of {@code messageBytes} for the duration; a
     * rank thread receives them whole with the mpi library's rank side
     * ({@link ChannelRankTransport#recv}). A message counts when all its bytes have been read
     * from the ring. Rate = messages per second between the first and the last arrival.
     */
    static UdpBenchmarks.Stream sendStream(ProxyFixture proxy, Duration duration, int messageBytes) throws Exception {
        return sendStream(proxy, duration, messageBytes, false);
    }

    /** Messages of the exact stream: this many distinct random contents, each stamped with its index. */
    private static final int PATTERNS = 8;

    /**
     * As {@link #sendStream(ProxyFixture, Duration, int)}; with {@code exact}, message {@code i}
     * carries {@code i} in its first 8 bytes and one of {@value #PATTERNS} random contents after
     * them, and the rank compares every byte of every message it receives with what was sent: a
     * message lost, repeated, reordered or changed fails the stream.
     */
    static UdpBenchmarks.Stream sendStream(ProxyFixture proxy, Duration duration, int messageBytes, boolean exact)
            throws Exception {
        if (exact && messageBytes < Long.BYTES) {
            throw new IllegalArgumentException("an exact stream needs messages of 8 bytes or more");
        }
        ByteBuffer[] patterns = exact ? patterns(messageBytes) : null;
        Map<String, Long> before = proxy.proxy.counters();
        V2HostTransport host = start(proxy);
        try {
            Path file = proxy.channelFile(1);
            // the host sends one extra message after the timed ones, so the rank's last receive returns
            AtomicLong total = new AtomicLong(Long.MAX_VALUE);
            long[] counts = new long[3]; // messages, first, last
            Throwable[] failure = new Throwable[1];
            Thread rank = new Thread(() -> {
                ChannelRankTransport transport = ChannelRankTransport.map(file);
                try {
                    ByteBuffer dst = ByteBuffer.allocateDirect(messageBytes);
                    while (counts[0] < total.get()) {
                        transport.recv(CHAR, dst, 0, messageBytes, 0);
                        if (patterns != null) {
                            check(dst, counts[0], patterns);
                        }
                        long now = System.nanoTime();
                        if (counts[0]++ == 0) {
                            counts[1] = now;
                        }
                        counts[2] = now;
                    }
                } catch (RuntimeException e) {
                    failure[0] = e;
                } finally {
                    transport.finish();
                }
            }, "rank-v2-receiver");
            rank.start();
            ByteBuffer src = ByteBuffer.allocateDirect(messageBytes);
            long sent = 0;
            ThreadCpu cpu = new ThreadCpu(Thread.currentThread().getName(), UdpTransport.THREAD_NAME, rank.getName());
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() < end) {
                host.send(CHAR, 0, message(src, sent, patterns), 0, messageBytes, 1);
                sent++;
            }
            String busy = cpu.shares();
            total.set(sent + 1);
            host.send(CHAR, 0, message(src, sent, patterns), 0, messageBytes, 1);
            // sends return before their acknowledgement; retransmissions happen during calls
            host.flush(1);
            rank.join(30_000);
            if (rank.isAlive() || failure[0] != null) {
                rank.interrupt();
                throw new IllegalStateException("the rank received " + counts[0] + " of " + (sent + 1)
                        + " messages", failure[0]);
            }
            Map<String, Long> c = delta(before, proxy.proxy.counters());
            long fragments = c.get("v2.send.fragments");
            long stored = c.get("v2.send.stored");
            String detail = "fragments " + fragments + ", stored " + stored + ", resent " + (fragments - stored)
                    + " (ring full " + c.get("v2.send.ring.full") + ", duplicate " + c.get("v2.send.duplicate")
                    + ", out of order " + c.get("v2.send.out.of.order") + "); host " + hostResends(host)
                    + "; CPU " + busy;
            long received = counts[0] - 1; // the extra message is not timed
            return new UdpBenchmarks.Stream(sent, received, (counts[2] - counts[1]) / 1e9, messageBytes, detail);
        } finally {
            host.finish();
        }
    }

    /** @return what the host library sent again, and why */
    static String hostResends(V2HostTransport host) {
        Map<String, Long> h = host.sendCounters();
        return "sent " + h.get("send.fragments") + ", again for holes " + h.get("send.resent.hole") + " (probes "
                + h.get("send.hole.probes") + "), "
                + h.get("send.timeouts") + " timeouts (" + h.get("send.timeout.wait.micros") / 1000
                + " ms waited) sending " + h.get("send.resent.timeout") + " again";
    }

    private static ByteBuffer[] patterns(int messageBytes) {
        java.util.SplittableRandom random = new java.util.SplittableRandom(messageBytes);
        ByteBuffer[] patterns = new ByteBuffer[PATTERNS];
        for (int p = 0; p < PATTERNS; p++) {
            patterns[p] = ByteBuffer.allocateDirect(messageBytes);
            while (patterns[p].remaining() >= Long.BYTES) {
                patterns[p].putLong(random.nextLong());
            }
            while (patterns[p].hasRemaining()) {
                patterns[p].put((byte) random.nextInt());
            }
            patterns[p].clear();
        }
        return patterns;
    }

    /** @return message {@code index}: {@code src} as it is, or for an exact stream its pattern stamped with the index */
    private static ByteBuffer message(ByteBuffer src, long index, ByteBuffer[] patterns) {
        if (patterns == null) {
            return src;
        }
        ByteBuffer m = patterns[(int) (index % PATTERNS)];
        m.putLong(0, index);
        return m;
    }

    /** Throws unless {@code dst} holds message {@code index} exactly. */
    private static void check(ByteBuffer dst, long index, ByteBuffer[] patterns) {
        long stamped = dst.getLong(0);
        if (stamped != index) {
            throw new IllegalStateException("message " + index + " expected, message " + stamped + " received");
        }
        ByteBuffer expected = patterns[(int) (index % PATTERNS)];
        int at = dst.duplicate().position(Long.BYTES).mismatch(expected.duplicate().position(Long.BYTES));
        if (at >= 0) {
            throw new IllegalStateException("message " + index + " differs from what was sent at byte "
                    + (Long.BYTES + at));
        }
    }

    /**
     * Rank to host: a rank thread fills its ring with records of {@code recordBytes} (as
     * {@link UdpBenchmarks#proxyRecvStream} does), the host library receives them in chunks of
     * {@code chunkRecords} records for the duration. Rate = records per second.
     */
    static UdpBenchmarks.Stream recvStream(ProxyFixture proxy, Duration duration, int recordBytes, int chunkRecords)
            throws Exception {
        Map<String, Long> before = proxy.proxy.counters();
        V2HostTransport host = start(proxy);
        try (MappedRankChannel channel = MappedRankChannel.map(proxy.channelFile(1))) {
            MappedMessageRing ring = channel.fromRank();
            AtomicBoolean running = new AtomicBoolean(true);
            long[] produced = new long[1];
            Thread producer = new Thread(() -> {
                ByteBuffer src = ByteBuffer.allocateDirect(recordBytes);
                BackoffIdler idler = UdpBenchmarks.rankIdler.get();
                while (running.get()) {
                    if (ring.offer(CHAR, recordBytes, src, 0, recordBytes)) {
                        produced[0]++;
                        idler.reset();
                    } else {
                        idler.idle();
                    }
                }
            }, "rank-v2-producer");
            producer.start();
            ByteBuffer dst = ByteBuffer.allocateDirect(recordBytes * chunkRecords);
            long received = 0;
            long first = 0;
            long last = 0;
            ThreadCpu cpu = new ThreadCpu(Thread.currentThread().getName(), UdpTransport.THREAD_NAME, producer.getName());
            long end = System.nanoTime() + duration.toNanos();
            String busy;
            try {
                while (last < end) {
                    host.recv(CHAR, dst, 0, recordBytes * chunkRecords, 1);
                    last = System.nanoTime();
                    if (received == 0) {
                        // the first chunk includes the rank's start: it only marks the beginning
                        first = last;
                    }
                    received += chunkRecords;
                }
                busy = cpu.shares();
            } finally {
                running.set(false);
                producer.join();
            }
            Map<String, Long> c = delta(before, proxy.proxy.counters());
            long fragments = c.get("v2.recv.fragments");
            long resent = c.get("v2.recv.resent");
            String detail = "rank wrote " + produced[0] + ", proxy cut " + fragments + " fragments, resent " + resent
                    + ", RECV requests " + c.get("v2.recv.requests") + "; CPU " + busy;
            // the first chunk only marks the start
            long timed = received - chunkRecords;
            return new UdpBenchmarks.Stream(timed, timed, (last - first) / 1e9, recordBytes, detail);
        } finally {
            host.finish();
        }
    }

    /**
     * What authenticating one datagram costs on this machine now: HMAC-SHA256 over a datagram of
     * {@code datagramSize} bytes with the product's {@code V2Authenticator}, as the host (sign)
     * and the proxy (verify) each do once per fragment.
     *
     * @return the median of {@code rounds} signatures, in microseconds
     */
    static double signMicros(Path keyFile, int datagramSize, int rounds) {
        V2Authenticator auth = new V2Authenticator(ClusterKeys.load(Map.of(1, keyFile)), 1, 30_000, 1);
        ByteBuffer datagram = ByteBuffer.allocateDirect(datagramSize).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(datagram, 0).reset(V2HeaderDescriptor.OP_SEND, 0).keyId(1)
                .payloadLength(maxPayload(datagramSize));
        Samples samples = new Samples();
        for (int i = 0; i < rounds * 2; i++) {
            long t0 = System.nanoTime();
            auth.sign(datagram, 0);
            long t1 = System.nanoTime();
            if (i >= rounds) {
                samples.add((t1 - t0) / 1e3);
            }
        }
        return samples.median();
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new java.util.LinkedHashMap<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            d.put(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0L));
        }
        return d;
    }

    /** A fresh cluster key file (0600) in {@code dir}, as the distribution generates one. */
    static Path keyFile(Path dir) throws IOException {
        Path file = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(file);
        return file;
    }

    static EmbeddedProxy.V2 settings(Path keyFile, int datagramSize) {
        return new EmbeddedProxy.V2(keyFile, datagramSize);
    }
}
