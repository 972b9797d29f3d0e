package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * More than a million random and mutated datagrams through the front, the v1 and v2 decoders
 * and dispatch: no exception escapes (none is even caught and counted), and nothing that is not
 * an authentic v2 request or a v1 EXEC reaches a launcher or a channel.
 */
class DatagramFuzzTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 77;
    private static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final AtomicInteger launches = new AtomicInteger();
    private final ProcessLauncher refusingLauncher = request -> {
        launches.incrementAndGet();
        throw new LaunchException("fuzz: nothing is started");
    };
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final ProxySettings settings = new ProxySettings(Path.of("logs"), 1 << 16, Duration.ofSeconds(30),
            Duration.ofSeconds(1));
    private final V1Dispatcher v1 = new V1Dispatcher(channels, settings, core -> refusingLauncher, () -> { },
            Runnable::run, timer);
    private final V2Dispatcher v2 = new V2Dispatcher(channels, settings,
            new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1 << 16, 1448,
                    Duration.ofSeconds(300)), core -> refusingLauncher, () -> { }, Runnable::run, timer, () -> NOW);
    private final ProtocolFront front = new ProtocolFront(v1, true, v2);

    @AfterEach
    void tearDown() {
        front.close();
    }

    private void feed(ByteBuffer datagram) {
        front.onDatagram(datagram, HOST, transport);
        if (transport.sent.size() > 1000) {
            transport.sent.clear();
        }
    }

    @Test
    void shouldSurviveAMillionRandomAndMutatedDatagramsStartingNothing() {
        SplittableRandom random = new SplittableRandom(20261129);
        V2Datagrams host = new V2Datagrams(NOW);
        ByteBuffer[] valid = {
            host.exec(JOB, 1, 0, 3, "prog a"), host.sendInts(JOB, 1, 0, 5, true, 1, 2, 3), host.recv(JOB, 1, 0, 8),
            host.terminate(JOB, 1)
        };
        ByteBuffer scratch = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
        int fed = 0;
        for (int i = 0; i < 1_100_000; i++) {
            scratch.clear();
            int kind = random.nextInt(4);
            if (kind == 0) {
                // random bytes, any first byte but a v1 EXEC, any length up to beyond the limits
                int length = random.nextInt(1500);
                fill(scratch, 0, length, random);
                if (length > 0 && scratch.get(0) == 2) {
                    scratch.put(0, (byte) 3);
                }
                scratch.limit(length);
            } else if (kind == 1) {
                // random bytes behind the v2 magic
                int length = random.nextInt(1500);
                fill(scratch, 0, length, random);
                if (length > 0) {
                    scratch.put(0, (byte) V2HeaderDescriptor.MAGIC);
                }
                if (length > V2HeaderDescriptor.PAYLOAD_LENGTH_OFFSET + 2 && random.nextBoolean()) {
                    // a consistent declared length, so the MAC is what refuses it
                    scratch.putShort(V2HeaderDescriptor.PAYLOAD_LENGTH_OFFSET,
                            (short) Math.max(0, length - V2HeaderDescriptor.MIN_DATAGRAM_LENGTH));
                }
                scratch.limit(length);
            } else {
                // an authentic datagram with one to four bytes changed, or cut, or extended
                ByteBuffer original = valid[random.nextInt(valid.length)];
                int length = original.limit();
                scratch.put(0, original, 0, length);
                int mutation = random.nextInt(3);
                if (mutation == 0) {
                    int flips = 1 + random.nextInt(4);
                    for (int f = 0; f < flips; f++) {
                        int at = random.nextInt(length);
                        scratch.put(at, (byte) (scratch.get(at) ^ (1 + random.nextInt(255))));
                    }
                } else if (mutation == 1) {
                    length = random.nextInt(length);
                } else {
                    int extra = 1 + random.nextInt(64);
                    for (int j = 0; j < extra; j++) {
                        scratch.put(length + j, (byte) random.nextInt(256));
                    }
                    length += extra;
                }
                scratch.limit(length);
            }
            feed(scratch);
            fed++;
        }
        v1.doWork(transport);
        v2.doWork(transport);
        assertTrue(fed >= 1_000_000);
        assertEquals(0, launches.get(), "launch attempts");
        assertEquals(0, channels.open.size(), "channels opened");
        assertEquals(0, v1.counter(ProxyCounter.ERRORS), "exceptions caught in v1 dispatch");
        assertEquals(0, v2.counter(V2Counter.ERRORS), "exceptions caught in v2 dispatch");
        assertEquals(0, v2.counter(V2Counter.EXEC_REQUESTS), "no forged EXEC got past authentication");
        assertTrue(v2.counter(V2Counter.AUTH_BAD_MAC) > 100_000, "MAC refusals were exercised");
        assertTrue(v1.counter(ProxyCounter.INVALID_OP) > 10_000, "v1 refusals were exercised");
    }

    @Test
    void shouldSurviveAuthenticDatagramsWithRandomFields() {
        SplittableRandom random = new SplittableRandom(7);
        V2Datagrams host = new V2Datagrams(NOW);
        ByteBuffer b = V2Datagrams.buffer();
        for (int i = 0; i < 50_000; i++) {
            b.clear();
            int op = random.nextInt(8);
            int payload = random.nextInt(op == V2HeaderDescriptor.OP_EXEC ? 40 : V2HeaderDescriptor.maxPayload(1448) + 1);
            V2HeaderFlyweight h = host.header(b, op, random.nextBoolean() ? JOB : random.nextLong(),
                    random.nextInt(5)).flags(random.nextInt(4)).datatype(random.nextInt(16)).tag(random.nextInt())
                    .sequence(random.nextInt(4)).argument(random.nextInt(2000)).core(random.nextInt(3))
                    .payloadLength(payload);
            if (op == V2HeaderDescriptor.OP_EXEC) {
                for (int j = 0; j < payload; j++) {
                    b.put(V2HeaderDescriptor.HEADER_LENGTH + j, (byte) ('a' + random.nextInt(3)));
                }
            } else {
                fill(b, V2HeaderDescriptor.HEADER_LENGTH, payload, random);
            }
            if (op == V2HeaderDescriptor.OP_EXEC && random.nextInt(100) == 0) {
                h.argument(3).rank(1).jobId(JOB);
            }
            front.onDatagram(host.finish(b), HOST, transport);
            if (i % 64 == 0) {
                front.doWork(transport);
                transport.sent.clear();
            }
        }
        assertEquals(0, v2.counter(V2Counter.ERRORS), "exceptions caught in v2 dispatch");
        assertTrue(v2.counter(V2Counter.EXEC_REQUESTS) > 0);
        assertTrue(v2.counter(V2Counter.UNKNOWN_JOB) > 0);
    }

    private static void fill(ByteBuffer b, int from, int length, SplittableRandom random) {
        int j = from;
        int end = from + length;
        for (; j + 8 <= end; j += 8) {
            b.putLong(j, random.nextLong());
        }
        for (; j < end; j++) {
            b.put(j, (byte) random.nextInt(256));
        }
    }
}
