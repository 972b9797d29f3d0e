package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * The refusal of a request that did not verify (docs/protocol-v2.md 3.5): 16 bytes with the
 * request's key id and nonce, sent only for a key or MAC mismatch, a wrong node or a clock out of
 * skew, rate-limited per source and globally; and STATUS of job 0, the probe, counted as a probe.
 */
class V2DispatcherRefusalTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final long NOW = 1_767_225_600_000L;
    static final ClusterKeys OTHER_KEYS = ClusterKeys.of(Map.of(1, new byte[32]), 1);

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Dispatcher dispatcher = new V2Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
            new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1 << 16, 1448,
                    Duration.ofSeconds(300)),
            coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    private List<RecordingTransport.Sent> deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        return transport.take();
    }

    @Test
    void shouldRefuseARequestSignedWithAnotherKeyWithItsKeyIdAndNonceOnly() {
        V2Datagrams stranger = new V2Datagrams(OTHER_KEYS, V2Datagrams.NODE, NOW);
        ByteBuffer exec = stranger.exec(0x77, 1, 0, 2, "prog");
        long nonce = new V2HeaderFlyweight().wrap(exec, 0).nonce();

        List<RecordingTransport.Sent> sent = deliver(exec, HOST);

        assertEquals(1, sent.size());
        ByteBuffer refusal = sent.get(0).bytes;
        assertEquals(HOST, sent.get(0).target);
        assertEquals(V2RefusalDescriptor.LENGTH, refusal.limit());
        assertTrue(refusal.limit() < exec.limit(), "smaller than the request");
        assertTrue(V2RefusalDescriptor.isRefusal(refusal, 0, refusal.limit()));
        assertEquals(V2RefusalDescriptor.REASON_NOT_VERIFIED, V2RefusalDescriptor.reason(refusal, 0));
        assertEquals(1, V2RefusalDescriptor.keyId(refusal, 0));
        assertEquals(nonce, V2RefusalDescriptor.nonce(refusal, 0));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_BAD_MAC));
        assertEquals(1, dispatcher.counter(V2Counter.REFUSALS_SENT));
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REQUESTS), "nothing of it was interpreted");
        assertTrue(launcher.requests.isEmpty());
    }

    @Test
    void shouldTellAKeyHolderAWrongNodeAndAClockOutOfSkew() {
        V2Datagrams elsewhere = new V2Datagrams(V2Datagrams.KEYS, "node-b", NOW);
        ByteBuffer refusal = deliver(elsewhere.exec(0x77, 1, 0, 2, "prog"), HOST).get(0).bytes;
        assertEquals(V2RefusalDescriptor.REASON_WRONG_NODE, V2RefusalDescriptor.reason(refusal, 0));

        V2Datagrams late = new V2Datagrams(NOW - 31_000);
        refusal = deliver(late.exec(0x77, 1, 0, 2, "prog"), new InetSocketAddress("127.0.0.2", 40001)).get(0).bytes;
        assertEquals(V2RefusalDescriptor.REASON_STALE, V2RefusalDescriptor.reason(refusal, 0));

        V2Datagrams early = new V2Datagrams(NOW + 31_000);
        refusal = deliver(early.exec(0x77, 1, 0, 2, "prog"), new InetSocketAddress("127.0.0.3", 40001)).get(0).bytes;
        assertEquals(V2RefusalDescriptor.REASON_FUTURE, V2RefusalDescriptor.reason(refusal, 0));
    }

    @Test
    void shouldNotRefuseMalformedOrReplayedDatagrams() {
        V2Datagrams host = new V2Datagrams(NOW);
        ByteBuffer exec = host.exec(0x77, 1, 0, 2, "prog");
        ByteBuffer copy = ByteBuffer.allocate(exec.limit()).put(exec.duplicate()).flip();
        deliver(exec, HOST);

        assertEquals(List.of(), deliver(copy, new InetSocketAddress("127.0.0.9", 1)), "a replay gets nothing");
        ByteBuffer shortOne = ByteBuffer.allocate(103);
        shortOne.put(0, (byte) V2HeaderDescriptor.MAGIC);
        assertEquals(List.of(), deliver(shortOne, HOST), "too short: nothing");
        ByteBuffer badLength = new V2Datagrams(OTHER_KEYS, V2Datagrams.NODE, NOW).exec(0x77, 1, 0, 2, "prog");
        badLength.limit(badLength.limit() - 1);
        assertEquals(List.of(), deliver(badLength, HOST), "bad length: nothing");
        assertEquals(0, dispatcher.counter(V2Counter.REFUSALS_SENT));
    }

    /**
     * The limits count on a clock the test moves: what they allow depends on the time that passed
     * for them, not on how fast this machine runs the loops.
     */
    @Test
    void shouldRefuseAtMostOncePerSourceAddressPerIntervalAndLimitAllSources() {
        long[] nanos = {0};
        dispatcher.refusalClock(() -> nanos[0]);
        V2Datagrams stranger = new V2Datagrams(OTHER_KEYS, V2Datagrams.NODE, NOW);
        int sent = 0;
        for (int port = 1; port <= 10; port++) {
            // another port of the same address is the same source
            sent += deliver(stranger.exec(0x77, 1, 0, 2, "prog"), new InetSocketAddress("127.0.0.1", port)).size();
        }
        assertEquals(1, sent);
        assertEquals(9, dispatcher.counter(V2Counter.REFUSALS_LIMITED));
        nanos[0] += RefusalLimiter.PER_SOURCE_NANOS - 1;
        assertEquals(0, deliver(stranger.exec(0x77, 1, 0, 2, "prog"), new InetSocketAddress("127.0.0.1", 11)).size(),
                "within the source's interval");
        nanos[0] += 1;
        assertEquals(1, deliver(stranger.exec(0x77, 1, 0, 2, "prog"), new InetSocketAddress("127.0.0.1", 12)).size(),
                "the source's interval is over");

        // the bucket (64 a second) was full again after those 100 ms, one is spent: 63 are left
        int addresses = 0;
        for (int i = 0; i < 200; i++) {
            InetSocketAddress from = new InetSocketAddress("10.0." + (i / 250) + "." + (i % 250 + 1), 5000);
            addresses += deliver(stranger.exec(0x77, 1, 0, 2, "prog"), from).size();
        }
        assertEquals(RefusalLimiter.GLOBAL_PER_SECOND - 1, addresses, "refusals to 200 sources at once");
        nanos[0] += java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(500);
        for (int i = 200; i < 400; i++) {
            InetSocketAddress from = new InetSocketAddress("10.0." + (i / 250) + "." + (i % 250 + 1), 5000);
            addresses += deliver(stranger.exec(0x77, 1, 0, 2, "prog"), from).size();
        }
        assertEquals(RefusalLimiter.GLOBAL_PER_SECOND - 1 + RefusalLimiter.GLOBAL_PER_SECOND / 2, addresses,
                "half a second later, half a second's refusals more");
    }

    @Test
    void shouldAnswerTheProbeStatusOfJobZeroAsAProbeWithoutAWarningCounter() {
        V2Datagrams host = new V2Datagrams(NOW);
        ByteBuffer probe = host.status(0, 0, 0x1234);

        List<RecordingTransport.Sent> sent = deliver(probe, HOST);

        assertEquals(1, sent.size());
        ByteBuffer reply = sent.get(0).bytes;
        assertEquals(V2Authenticator.OK, V2Datagrams.hostVerifier().verifyReply(reply, 0, reply.limit(), NOW));
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(reply, 0);
        assertEquals(V2HeaderDescriptor.OP_STATUS, h.operation());
        assertEquals(MpiErrors.ERR_COMM, h.result());
        assertEquals(0x1234, h.sequence(), "the sequence is echoed: the prober matches the reply by it");
        assertEquals(1, dispatcher.counter(V2Counter.STATUS_PROBES));
        assertEquals(0, dispatcher.counter(V2Counter.UNKNOWN_JOB));
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REJECTED));
    }
}
