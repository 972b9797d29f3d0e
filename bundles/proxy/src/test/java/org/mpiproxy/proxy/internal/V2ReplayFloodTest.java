package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.ReplayCache;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * The replay cache cannot be filled into silence (docs/protocol-v2.md 3.2, 3.5): 70 000 valid
 * STATUS requests from one source within the replay window, then an EXEC from it, get a visible
 * busy refusal, while other sources and other keys are served, the cache stays within its bounds,
 * and the source is served again once the window (on the proxy's clock, which the test moves) has
 * passed. The proxy's settings are the defaults: 65 536 nonces per key, 4096 per source, 30 s skew.
 */
class V2ReplayFloodTest {

    static final long NOW = 1_767_225_600_000L;
    static final byte[] SECOND_KEY = HexFormat.of().parseHex(
            "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f");
    static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, V2Datagrams.KEY, 2, SECOND_KEY), 1);
    static final InetSocketAddress FLOODER = new InetSocketAddress("10.0.0.1", 40001);
    static final InetSocketAddress OTHER = new InetSocketAddress("10.0.0.2", 40001);
    static final int FLOOD = 70_000;
    static final int CACHE = 65_536;
    static final int SHARE = V2Settings.DEFAULT_REPLAY_SOURCE_SHARE;
    /** The replay window: 2 * skew + 1 ms. */
    static final long WINDOW_MILLIS = 2 * 30_000 + 1;

    private final AtomicLong clock = new AtomicLong(NOW);
    private final long[] refusalNanos = {0};
    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Settings settings = new V2Settings(KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), CACHE, 1448,
            Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES, SHARE);
    private final V2Dispatcher dispatcher = new V2Dispatcher(channels,
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)), settings,
            coreId -> launcher, transport::wakeup, Runnable::run, timer, clock::get);
    private final V2Datagrams host = new V2Datagrams(KEYS, V2Datagrams.NODE, NOW);
    /** One buffer for the flood's requests: 70 000 of them need not be 70 000 buffers. */
    private final ByteBuffer probe = ByteBuffer.allocate(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);

    V2ReplayFloodTest() {
        dispatcher.refusalClock(() -> refusalNanos[0]);
    }

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    /** Sends {@code count} valid STATUS probes (job 0) from {@code sources}, in turn, each from a port of its own. */
    private void flood(int count, InetSocketAddress... sources) {
        for (int i = 0; i < count; i++) {
            probe.clear();
            host.header(probe, V2HeaderDescriptor.OP_STATUS, 0, 0).sequence(i);
            host.finish(probe);
            InetSocketAddress source = sources[i % sources.length];
            dispatcher.onDatagram(probe, new InetSocketAddress(source.getAddress(), 1024 + i % 50_000), transport);
            transport.sent.clear();
        }
    }

    private List<RecordingTransport.Sent> deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        dispatcher.doWork(transport);
        return transport.take();
    }

    /** Lets the refusals' per-source rate limit (100 ms) pass, on its own clock. */
    private void afterRefusalInterval() {
        refusalNanos[0] += RefusalLimiter.PER_SOURCE_NANOS;
    }

    private int remembered() {
        return replayCache().replaySize(1);
    }

    private V2Authenticator replayCache() {
        return dispatcher.authenticator();
    }

    private static long source(InetSocketAddress a) {
        return ReplayCache.sourceOf(a.getAddress());
    }

    private static void assertBusyRefusalOf(ByteBuffer request, List<RecordingTransport.Sent> sent,
                                            InetSocketAddress to) {
        assertEquals(1, sent.size(), "one answer, never silence");
        ByteBuffer refusal = sent.get(0).bytes;
        assertEquals(to, sent.get(0).target);
        assertTrue(V2RefusalDescriptor.isRefusal(refusal, 0, refusal.limit()));
        assertEquals(V2RefusalDescriptor.REASON_BUSY, V2RefusalDescriptor.reason(refusal, 0));
        assertEquals(new V2HeaderFlyweight().wrap(request, 0).nonce(), V2RefusalDescriptor.nonce(refusal, 0));
        assertEquals(new V2HeaderFlyweight().wrap(request, 0).keyId(), V2RefusalDescriptor.keyId(refusal, 0));
    }

    private static V2HeaderFlyweight reply(List<RecordingTransport.Sent> sent) {
        assertEquals(1, sent.size());
        return new V2HeaderFlyweight().wrap(sent.get(0).bytes, 0);
    }

    @Test
    void shouldRefuseAnExecBusyVisiblyAfterItsSourceSentSeventyThousandStatusRequests() {
        flood(FLOOD, FLOODER);

        assertEquals(SHARE, dispatcher.counter(V2Counter.STATUS_PROBES), "its share was served");
        assertEquals(FLOOD - SHARE, dispatcher.counter(V2Counter.AUTH_REPLAY_SOURCE_FULL));
        assertEquals(FLOOD - SHARE, dispatcher.counter(V2Counter.REFUSALS_SENT)
                + dispatcher.counter(V2Counter.REFUSALS_LIMITED), "every busy request was answered or counted");
        assertEquals(SHARE, remembered(), "the cache holds the source's share, no more");
        assertEquals(SHARE, replayCache().replaySizeOf(1, source(FLOODER)));

        afterRefusalInterval();
        ByteBuffer exec = host.exec(0x77, 1, 0, 2, "prog");
        assertBusyRefusalOf(exec, deliver(exec, FLOODER), FLOODER);
        assertEquals(0, dispatcher.counter(V2Counter.EXEC_REQUESTS), "nothing of it was done");
        assertTrue(launcher.requests.isEmpty());
        assertEquals(FLOOD - SHARE + 1, dispatcher.counter(V2Counter.AUTH_REPLAY_SOURCE_FULL));
    }

    @Test
    void shouldServeAnotherSourceAndAnotherKeyWhileOneSourceHoldsItsShare() {
        flood(FLOOD, FLOODER);

        ByteBuffer exec = host.exec(0x77, 1, 0, 2, "prog");
        V2HeaderFlyweight r = reply(deliver(exec, OTHER));
        assertEquals(V2HeaderDescriptor.OP_EXEC, r.operation());
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(1, launcher.requests.size());

        host.keyId = 2;
        r = reply(deliver(host.status(0, 0, 0), FLOODER));
        assertEquals(V2HeaderDescriptor.OP_STATUS, r.operation());
        assertEquals(2, r.keyId(), "the flooding source under another key: that key's cache has room");
        assertEquals(1, replayCache().replaySize(2));
        assertEquals(SHARE + 1, remembered());
    }

    @Test
    void shouldServeTheFloodingSourceAgainOnceTheWindowHasPassed() {
        flood(FLOOD, FLOODER);
        afterRefusalInterval();
        ByteBuffer refused = host.exec(0x77, 1, 0, 2, "prog");
        assertBusyRefusalOf(refused, deliver(refused, FLOODER), FLOODER);

        clock.addAndGet(WINDOW_MILLIS - 1);
        host.now = clock.get();
        afterRefusalInterval();
        ByteBuffer stillEarly = host.exec(0x77, 1, 0, 2, "prog");
        assertBusyRefusalOf(stillEarly, deliver(stillEarly, FLOODER), FLOODER);

        clock.incrementAndGet();
        host.now = clock.get();
        ByteBuffer exec = host.exec(0x77, 1, 0, 2, "prog");
        V2HeaderFlyweight r = reply(deliver(exec, FLOODER));
        assertEquals(V2HeaderDescriptor.OP_EXEC, r.operation());
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(1, launcher.requests.size());
        assertEquals(1, remembered(), "the flood's nonces left with the window");
    }

    @Test
    void shouldStayWithinTheCacheSizeAndAnswerBusyWhenManySourcesFillIt() throws Exception {
        InetSocketAddress[] sources = new InetSocketAddress[20];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 1, (byte) i}), 40001);
        }
        flood(100_000, sources);

        assertEquals(CACHE, remembered(), "full, never more");
        for (InetSocketAddress s : sources) {
            assertTrue(replayCache().replaySizeOf(1, source(s)) <= SHARE, s.toString());
        }
        assertTrue(dispatcher.counter(V2Counter.AUTH_REPLAY_CACHE_FULL) > 0);
        assertEquals(CACHE, dispatcher.counter(V2Counter.STATUS_PROBES));

        afterRefusalInterval();
        ByteBuffer exec = host.exec(0x77, 1, 0, 2, "prog");
        assertBusyRefusalOf(exec, deliver(exec, OTHER), OTHER);
        assertEquals(CACHE, remembered());
    }

    @Test
    void shouldRejectAShareBelowOneAndApplyANewShareAtTheNextStart() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new V2Settings(KEYS,
                V2Datagrams.NODE, Duration.ofSeconds(30), CACHE, 1448, Duration.ofSeconds(300),
                V2Settings.DEFAULT_MAX_MESSAGE_BYTES, StagedPrograms.MAX_FILE_BYTES, 0));
        assertEquals("v2.replay.source.share=0 must be >= 1", e.getMessage());
        assertEquals(List.of("v2.replay.source.share"), dispatcher.reconfigure(new V2Settings(KEYS, V2Datagrams.NODE,
                Duration.ofSeconds(30), CACHE, 1448, Duration.ofSeconds(300), V2Settings.DEFAULT_MAX_MESSAGE_BYTES,
                StagedPrograms.MAX_FILE_BYTES, 8)));
        assertEquals(SHARE, replayCache().sourceShare());
    }
}
