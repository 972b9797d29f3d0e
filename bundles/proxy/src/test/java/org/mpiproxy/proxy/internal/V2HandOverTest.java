package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;

/**
 * A v2 job handed from one proxy (one revision of the bundle) to the next: the streams in both
 * directions go on from the rings' marks, output not yet acknowledged is sent again by the taker,
 * a TERMINATE under way is answered with the exact exit status, replays stay refused.
 */
class V2HandOverTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final long JOB = 0x5678L;
    private static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private final List<V2Dispatcher> dispatchers = new ArrayList<>();

    private V2Dispatcher proxy() {
        V2Dispatcher d = new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                        Duration.ofSeconds(300)),
                coreId -> launcher, transport::wakeup, Runnable::run, timer, () -> NOW);
        dispatchers.add(d);
        return d;
    }

    @AfterEach
    void tearDown() {
        dispatchers.forEach(V2Dispatcher::close);
        timer.shutdownNow();
    }

    private List<V2HeaderFlyweight> deliver(V2Dispatcher proxy, ByteBuffer datagram) {
        proxy.onDatagram(datagram, HOST, transport);
        proxy.doWork(transport);
        return replies();
    }

    private List<V2HeaderFlyweight> replies() {
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(HOST, s.target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), NOW));
            list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
        }
        return list;
    }

    private static void offerInt(MessageRing ring, int value) {
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value);
        assertTrue(ring.offer(3, 1, 9, b, 0, 4));
    }

    private static int takeInt(MessageRing ring) {
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, ring.pollRecord(3, b, 0, 1));
        return b.getInt(0);
    }

    @Test
    void shouldGoOnStreamingBothWaysAndAnswerTerminateWithTheExitStatus() {
        V2Dispatcher old = proxy();
        List<V2HeaderFlyweight> r = deliver(old, host.execWithOutput(JOB, 1, 3, "prog"));
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        r = deliver(old, host.exec(JOB, 2, 0, 3, "prog"));
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        FakeChannel one = channels.channel(JOB, 1);

        // host to rank: fragment 0 stored
        r = deliver(old, host.sendInts(JOB, 1, 0, 5, true, 10));
        assertEquals(1, r.get(0).ack());
        // rank to host: three fragments sent, the first acknowledged
        offerInt(one.fromRank, 1);
        offerInt(one.fromRank, 2);
        offerInt(one.fromRank, 3);
        assertEquals(3, deliver(old, host.recv(JOB, 1, 0, 8)).size());
        deliver(old, host.recv(JOB, 1, 1, 8));
        // an output line sent, not acknowledged
        old.outputListener().onOutput(JOB, 1, RankOutputListener.Stream.STDOUT, "before", false);
        old.doWork(transport);
        r = replies();
        assertEquals(1, r.size());
        assertEquals(V2HeaderDescriptor.OP_OUTPUT, r.get(0).operation());
        // rank 2 is being terminated when the proxy is updated
        ByteBuffer terminate = host.terminate(JOB, 2);
        ByteBuffer replayed = terminate.duplicate();
        assertEquals(0, deliver(old, terminate).size(), "no answer while rank 2 runs");

        Map<String, Object> state = old.handOver();
        assertEquals(0, deliver(old, host.recv(JOB, 1, 1, 8)).size(), "the old revision is closed");
        // a line the launcher still gives the old revision's listener after the hand-over
        old.outputListener().onOutput(JOB, 1, RankOutputListener.Stream.STDOUT, "late", false);

        V2Dispatcher next = proxy();
        next.adoptOutput(state);
        assertEquals(java.util.Set.of(JOB), next.adopt(state));
        JobInfo job = next.jobs().get(0);
        assertEquals(JOB, job.jobId());
        assertEquals(List.of(RankInfo.State.RUNNING, RankInfo.State.TERMINATING),
                job.ranks().stream().map(RankInfo::state).toList());

        // the output line not acknowledged is sent again at once, new lines follow it; the RECV
        // window still open gets the fragments not acknowledged again, cut from the ring
        next.doWork(transport);
        r = replies();
        List<V2HeaderFlyweight> output = r.stream().filter(h -> h.operation() == V2HeaderDescriptor.OP_OUTPUT).toList();
        assertEquals(List.of(0L, 1L), output.stream().map(V2HeaderFlyweight::sequence).toList());
        assertEquals(List.of("before", "late"), output.stream().map(V2HandOverTest::text).toList());
        List<V2HeaderFlyweight> data = r.stream().filter(h -> h.operation() == V2HeaderDescriptor.OP_RECV).toList();
        assertEquals(List.of(1L, 2L), data.stream().map(V2HeaderFlyweight::sequence).toList());
        assertEquals(List.of(2, 3), data.stream().map(h -> h.buffer().getInt(h.payloadOffset())).toList());
        next.outputListener().onOutput(JOB, 1, RankOutputListener.Stream.STDOUT, "after", false);
        next.doWork(transport);
        r = replies();
        assertEquals(2, r.get(0).sequence());
        assertEquals("after", text(r.get(0)));
        deliver(next, host.outputAck(JOB, 1, V2HeaderDescriptor.STREAM_STDOUT, 3));

        // host to rank: fragment 1 follows 0, a repeated 0 is a duplicate
        r = deliver(next, host.sendInts(JOB, 1, 1, 5, true, 11));
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        assertEquals(2, r.get(0).ack());
        r = deliver(next, host.sendInts(JOB, 1, 0, 5, true, 10));
        assertEquals(2, r.get(0).ack());
        assertEquals(10, takeInt(one.toRank));
        assertEquals(11, takeInt(one.toRank));
        assertEquals(MessageRing.EMPTY, one.toRank.peekDatatype(), "each fragment stored once");

        // rank to host: what follows, once the host acknowledged what came again
        offerInt(one.fromRank, 4);
        r = deliver(next, host.recv(JOB, 1, 3, 8));
        assertEquals(List.of(3L), r.stream().map(V2HeaderFlyweight::sequence).toList());
        assertEquals(List.of(4), r.stream().map(h -> h.buffer().getInt(h.payloadOffset())).toList());

        // the TERMINATE under way is answered once rank 2 exits; its replay stays refused
        assertEquals(0, deliver(next, replayed).size(), "a replayed request is dropped");
        launcher.processes.get(1).exitWith(3);
        next.doWork(transport);
        r = replies();
        assertEquals(1, r.size());
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, r.get(0).operation());
        assertEquals(2, r.get(0).rank());
        assertEquals(3, r.get(0).argument(), "the exact exit status");
        assertTrue(channels.channel(JOB, 2).closed, "the ended rank's channel, mapped again, is released by the taker");

        launcher.processes.get(0).exitWith(0);
        next.outputListener().onEnd(JOB, 1, RankOutputListener.Stream.STDOUT);
        r = deliver(next, host.terminate(JOB, 1));
        assertEquals(1, r.size());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        assertEquals(0, r.get(0).argument());
        assertTrue(next.jobs().get(0).ranks().stream().allMatch(i -> i.state() == RankInfo.State.EXITED));
    }

    @Test
    void shouldKeepEveryValueOfAV2JobButTheProcessServicesInTheStateFile() throws Exception {
        V2Dispatcher old = proxy();
        deliver(old, host.execWithOutput(JOB, 1, 3, "prog"));
        deliver(old, host.exec(JOB, 2, 0, 3, "prog"));
        deliver(old, host.sendInts(JOB, 1, 0, 5, true, 10));
        old.outputListener().onOutput(JOB, 1, RankOutputListener.Stream.STDOUT, "line", false);
        old.doWork(transport);
        launcher.processes.get(1).exitWith(3);
        Map<String, Object> state = new java.util.HashMap<>();
        state.put("v2", old.handOver());
        NodeRestart.prepare(state, null);
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("mpiproxy-state-");
        StateCodec codec = NodeRestart.write(state, dir);
        for (String dropped : codec.dropped()) {
            assertTrue(dropped.startsWith("state.v2.authenticator") || dropped.startsWith("state.v2.pmi")
                    || dropped.startsWith("state.v2.lateOutput"), "left out of the state file: " + codec.dropped());
        }
        Map<String, Object> read = NodeRestart.take(dir, null);
        java.nio.file.Files.deleteIfExists(dir);
        Map<?, ?> job = (Map<?, ?>) ((List<?>) ((Map<?, ?>) read.get("v2")).get("jobs")).get(0);
        assertEquals(2, ((List<?>) job.get("ranks")).size());
        // the rank that ended before the shutdown comes back ended, with its status, through a new revision
        V2Dispatcher next = proxy();
        next.adoptOutput(RankHandOver.asMap(read.get("v2")));
        assertEquals(java.util.Set.of(JOB), next.adopt(RankHandOver.asMap(read.get("v2"))));
        next.doWork(transport);
        org.mpiproxy.api.RankInfo two = next.jobs().get(0).ranks().stream().filter(i -> i.rankId() == 2)
                .findFirst().orElseThrow();
        assertEquals(3, two.exitStatus(), "the exact status of the rank that ended before the shutdown");
    }

    @Test
    void shouldStopTheRanksOfAJobThatCannotBeRestored() {
        V2Dispatcher old = proxy();
        deliver(old, host.exec(JOB, 1, 0, 3, "prog"));
        Map<String, Object> state = old.handOver();
        @SuppressWarnings("unchecked")
        Map<String, Object> job = (Map<String, Object>) ((List<?>) state.get("jobs")).get(0);
        job.put("keyId", "one");
        V2Dispatcher next = proxy();
        next.adoptOutput(state);
        assertEquals(java.util.Set.of(), next.adopt(state));
        assertEquals(1, launcher.processes.get(0).stops.size(), "the rank of a job that cannot be taken over is stopped");
        assertEquals(List.of(), next.jobs());
    }

    @Test
    void shouldStopTheRanksOfV2JobsWhenTheNextRevisionDoesNotServeV2() {
        V2Dispatcher old = proxy();
        deliver(old, host.exec(JOB, 1, 0, 3, "prog"));
        Map<String, Object> state = new java.util.HashMap<>();
        state.put("v2", old.handOver());
        assertEquals(java.util.Set.of(JOB), HandOver.jobIds(state));

        HandOver.takeV2(state, null, Duration.ofSeconds(2));
        assertEquals(List.of(Duration.ofSeconds(2)), launcher.processes.get(0).stops,
                "v2 is disabled in the new revision: the rank is stopped with the stop grace");
    }

    private static String text(V2HeaderFlyweight h) {
        byte[] b = new byte[h.payloadLength()];
        h.buffer().get(h.payloadOffset(), b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
