package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.mpiproxy.channel.shm.BackoffIdler;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/** Streams and round trips over raw loopback UDP and through the embedded proxy. */
final class UdpBenchmarks {

    static final int CHAR = MpiDatatype.CHAR.code();
    static final int INT = MpiDatatype.INT.code();

    /** The back-off of the rank threads of the streams; {@link IdlerSideBySide} swaps it. */
    static java.util.function.Supplier<BackoffIdler> rankIdler = BackoffIdler::new;
    static final int V1_PAYLOAD = V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
    static final int V1_DATAGRAM = V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;

    private UdpBenchmarks() {
    }

    /** Outcome of one stream. */
    record Stream(long sent, long received, double seconds, int messageBytes, String detail) {
        double perSecond() {
            return received / seconds;
        }

        double megabytesPerSecond() {
            return received * (double) messageBytes / seconds / 1e6;
        }

        double loss() {
            return sent == 0 ? 0 : 1.0 - (double) received / sent;
        }
    }

    private static DatagramChannel open() throws IOException {
        DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET);
        ch.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        ch.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
        ch.bind(new InetSocketAddress("127.0.0.1", 0));
        return ch;
    }

    /** Java to Java over loopback, blocking DatagramChannels and direct buffers, as fast as possible. */
    @SuppressWarnings("try") // closing the receiver early ends its blocking receive
    static Stream rawStream(int size, Duration duration) throws Exception {
        try (DatagramChannel rx = open(); DatagramChannel tx = open()) {
            tx.connect(rx.getLocalAddress());
            long[] counts = new long[3]; // received, first, last
            Thread receiver = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(size + 1);
                try {
                    while (true) {
                        buf.clear();
                        rx.receive(buf);
                        long now = System.nanoTime();
                        if (counts[0]++ == 0) {
                            counts[1] = now;
                        }
                        counts[2] = now;
                    }
                } catch (IOException e) {
                    // closed: the stream is over
                }
            }, "raw-udp-receiver");
            receiver.start();
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            long sent = 0;
            long end = System.nanoTime() + duration.toNanos();
            while (System.nanoTime() < end) {
                buf.clear();
                tx.write(buf);
                sent++;
            }
            Thread.sleep(200);
            rx.close();
            receiver.join();
            return new Stream(sent, counts[0], (counts[2] - counts[1]) / 1e9, size, "");
        }
    }

    /** Host to rank: 1448-byte SENDs through the proxy into the rank's ring, read by a rank thread. */
    static Stream proxySendStream(ProxyFixture proxy, Duration duration, int messageBytes) throws Exception {
        return proxySendStream(proxy, duration, messageBytes, () -> { }, () -> { });
    }

    /** An action around the stream (after the rank started, before it is terminated). */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    static Stream proxySendStream(ProxyFixture proxy, Duration duration, int messageBytes, Step before, Step after)
            throws Exception {
        try (V1Host host = new V1Host(proxy.address)) {
            startIdleRank(proxy, host);
            before.run();
            try (MappedRankChannel rank = MappedRankChannel.map(proxy.channelFile(1))) {
                MappedMessageRing ring = rank.toRank();
                AtomicBoolean running = new AtomicBoolean(true);
                long[] counts = new long[3]; // bytes, first, last
                Thread consumer = new Thread(() -> {
                    ByteBuffer dst = ByteBuffer.allocateDirect(1 << 16);
                    BackoffIdler idler = rankIdler.get();
                    while (running.get()) {
                        int n = ring.poll(CHAR, dst, 0, dst.capacity());
                        if (n > 0) {
                            long now = System.nanoTime();
                            if (counts[0] == 0) {
                                counts[1] = now;
                            }
                            counts[0] += n;
                            counts[2] = now;
                            idler.reset();
                        } else {
                            idler.idle();
                        }
                    }
                }, "rank-consumer");
                consumer.start();
                long sent = 0;
                long end = System.nanoTime() + duration.toNanos();
                while (System.nanoTime() < end) {
                    host.send(1, CHAR, V1_PAYLOAD, V1_PAYLOAD);
                    sent++;
                }
                Thread.sleep(300);
                running.set(false);
                consumer.join();
                after.run();
                long datagrams = counts[0] / V1_PAYLOAD;
                java.util.Map<String, Long> c = proxy.proxy.counters();
                String detail = "proxy got " + c.get("datagrams.in") + " of " + sent + ", held " + c.get("send.held")
                        + ", dropped " + c.get("send.dropped");
                double seconds = (counts[2] - counts[1]) / 1e9;
                stopRank(host);
                if (messageBytes == V1_PAYLOAD) {
                    return new Stream(sent, datagrams, seconds, V1_DATAGRAM, detail);
                }
                return new Stream(sent * V1_PAYLOAD / messageBytes, counts[0] / messageBytes, seconds, messageBytes, detail);
            }
        }
    }

    /** Rank to host: a rank thread fills its ring, one RECV asks for everything, replies are counted. */
    static Stream proxyRecvStream(ProxyFixture proxy, Duration duration) throws Exception {
        try (V1Host host = new V1Host(proxy.address)) {
            startIdleRank(proxy, host);
            try (MappedRankChannel rank = MappedRankChannel.map(proxy.channelFile(1))) {
                MappedMessageRing ring = rank.fromRank();
                AtomicBoolean running = new AtomicBoolean(true);
                long[] produced = new long[1];
                Thread producer = new Thread(() -> {
                    ByteBuffer src = ByteBuffer.allocateDirect(V1_PAYLOAD);
                    BackoffIdler idler = rankIdler.get();
                    while (running.get()) {
                        if (ring.offer(CHAR, V1_PAYLOAD, src, 0, V1_PAYLOAD)) {
                            produced[0]++;
                            idler.reset();
                        } else {
                            idler.idle();
                        }
                    }
                }, "rank-producer");
                producer.start();
                host.recv(1, CHAR, 2_000_000L * V1_PAYLOAD);
                long received = 0;
                long first = 0;
                long last = 0;
                long end = System.nanoTime() + duration.toNanos();
                while (true) {
                    V1HeaderFlyweight h = host.receive();
                    long now = System.nanoTime();
                    if (h.operation() == V1HeaderDescriptor.OP_RECV && host.lastLength() == V1_DATAGRAM) {
                        if (received++ == 0) {
                            first = now;
                        }
                        last = now;
                    }
                    if (now >= end) {
                        break;
                    }
                }
                running.set(false);
                producer.join();
                long sentByProxy = proxy.proxy.counters().getOrDefault("recv.replies", received);
                stopRank(host);
                return new Stream(sentByProxy, received, (last - first) / 1e9, V1_DATAGRAM, "proxy sent " + sentByProxy);
            }
        }
    }

    /** Blocking ping-pong of one int between two Java threads; round-trip times in microseconds. */
    @SuppressWarnings("try") // closing the echo socket early ends its blocking receive
    static Samples rawPingPong(int warmup, int rounds) throws Exception {
        try (DatagramChannel echo = open(); DatagramChannel client = open()) {
            client.connect(echo.getLocalAddress());
            Thread echoer = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(64);
                try {
                    while (true) {
                        buf.clear();
                        java.net.SocketAddress from = echo.receive(buf);
                        buf.flip();
                        echo.send(buf, from);
                    }
                } catch (IOException e) {
                    // closed: done
                }
            }, "raw-echo");
            echoer.start();
            ByteBuffer buf = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
            Samples samples = new Samples();
            for (int i = 0; i < warmup + rounds; i++) {
                buf.clear().putInt(0, i).limit(4);
                long t0 = System.nanoTime();
                client.write(buf);
                buf.clear();
                client.read(buf);
                long t1 = System.nanoTime();
                if (i >= warmup) {
                    samples.add((t1 - t0) / 1e3);
                }
            }
            echo.close();
            echoer.join();
            return samples;
        }
    }

    /**
     * One int host to rank and back: SEND of one int and a RECV of one int, answered when the
     * rank thread (waiting with the library's back-off) has echoed the int into its ring.
     */
    static Samples proxyRoundTrip(ProxyFixture proxy, int warmup, int rounds) throws Exception {
        return proxyRoundTrip(proxy, warmup, rounds, BackoffIdler::new);
    }

    /** As {@link #proxyRoundTrip(ProxyFixture, int, int)}, the rank thread waiting with the given idler. */
    static Samples proxyRoundTrip(ProxyFixture proxy, int warmup, int rounds,
            java.util.function.Supplier<BackoffIdler> rankIdler) throws Exception {
        try (V1Host host = new V1Host(proxy.address)) {
            startIdleRank(proxy, host);
            try (MappedRankChannel rank = MappedRankChannel.map(proxy.channelFile(1))) {
                MappedMessageRing in = rank.toRank();
                MappedMessageRing out = rank.fromRank();
                AtomicBoolean running = new AtomicBoolean(true);
                Thread echoer = new Thread(() -> {
                    ByteBuffer buf = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
                    BackoffIdler idler = rankIdler.get();
                    while (running.get()) {
                        if (in.poll(INT, buf, 0, 1) == 1) {
                            while (!out.offer(INT, 1, buf, 0, 4)) {
                                Thread.onSpinWait();
                            }
                            idler.reset();
                        } else {
                            idler.idle();
                        }
                    }
                }, "rank-echo");
                echoer.start();
                Samples samples = new Samples();
                for (int i = 0; i < warmup + rounds; i++) {
                    long t0 = System.nanoTime();
                    host.sendInt(1, i);
                    host.recv(1, INT, 1);
                    V1HeaderFlyweight h = host.receive();
                    long t1 = System.nanoTime();
                    if (h.operation() != V1HeaderDescriptor.OP_RECV || h.result() != MpiErrors.SUCCESS) {
                        throw new IllegalStateException("unexpected reply op=" + h.operation() + " result=" + h.result());
                    }
                    if (i >= warmup) {
                        samples.add((t1 - t0) / 1e3);
                    }
                }
                running.set(false);
                echoer.join();
                stopRank(host);
                return samples;
            }
        }
    }

    static void startIdleRank(ProxyFixture proxy, V1Host host) throws IOException {
        host.exec(1, 2, "idle");
        int result = host.await(V1HeaderDescriptor.OP_EXEC);
        if (result != MpiErrors.SUCCESS) {
            throw new IllegalStateException("EXEC idle failed with " + result + "; counters " + proxy.proxy.counters());
        }
    }

    static void stopRank(V1Host host) throws IOException {
        host.terminate(1);
        host.await(V1HeaderDescriptor.OP_TERMINATE);
    }
}
