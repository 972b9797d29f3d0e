package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mpiproxy.proxy.internal.V1Datagrams.exec;
import static org.mpiproxy.proxy.internal.V1Datagrams.range;
import static org.mpiproxy.proxy.internal.V1Datagrams.recv;
import static org.mpiproxy.proxy.internal.V1Datagrams.sendInts;
import static org.mpiproxy.proxy.internal.V1Datagrams.terminate;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;
import org.mpiproxy.proxy.internal.FakeLauncher.FakeProcess;
import org.mpiproxy.proxy.internal.RecordingTransport.Sent;

/**
 * A v1 job handed from one proxy (one revision of the bundle) to the next: ranks keep running,
 * held SENDs and queued RECVs are served by the taker, exits and TERMINATEs are answered exactly,
 * replies the old one could not send leave from the new one.
 */
class V1HandOverTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final ProxySettings SETTINGS =
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(10));

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final List<V1Dispatcher> dispatchers = new ArrayList<>();

    private V1Dispatcher proxy() {
        V1Dispatcher d = new V1Dispatcher(channels, SETTINGS, coreId -> launcher, transport::wakeup, Runnable::run,
                new ScheduledThreadPoolExecutor(1));
        dispatchers.add(d);
        return d;
    }

    @AfterEach
    void tearDown() {
        dispatchers.forEach(V1Dispatcher::close);
    }

    private static FakeChannel start(V1Dispatcher proxy, FakeChannelManager channels, FakeLauncher launcher,
                                     RecordingTransport transport, int rankId) {
        proxy.onDatagram(exec(rankId, 0, 3, "prog"), HOST, transport);
        proxy.doWork(transport);
        List<Sent> replies = transport.take();
        assertEquals(1, replies.size());
        assertEquals(MpiErrors.SUCCESS, replies.get(0).header.result());
        return channels.channel(launcher.requests.get(launcher.requests.size() - 1).jobId(), rankId);
    }

    @Test
    void shouldKeepEveryValueOfAV1JobButItsProcessHandlesInTheStateFile() throws Exception {
        channels.ringCapacity = 64;
        V1Dispatcher old = proxy();
        start(old, channels, launcher, transport, 1);
        start(old, channels, launcher, transport, 2);
        old.onDatagram(sendInts(1, range(0, 16)), HOST, transport);
        old.onDatagram(sendInts(1, range(16, 4)), HOST, transport);
        old.onDatagram(recv(2, MpiDatatype.INT, 2), HOST, transport);
        Map<String, Object> state = old.handOver();
        NodeRestart.prepare(state, null);
        StateCodec codec = new StateCodec();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            codec.write(out, state, "state");
        }
        assertEquals(Set.of(), codec.dropped(), "left out of the state file");
        assertTrue(new StateCodec().read(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray())))
                instanceof Map);
    }

    @Test
    void shouldServeTheJobsOfThePreviousRevisionWithTheirHeldAndQueuedData() {
        channels.ringCapacity = 64;
        V1Dispatcher old = proxy();
        FakeChannel one = start(old, channels, launcher, transport, 1);
        FakeChannel two = start(old, channels, launcher, transport, 2);
        long jobId = launcher.requests.get(0).jobId();
        old.onDatagram(sendInts(1, range(0, 16)), HOST, transport);
        old.onDatagram(sendInts(1, range(16, 4)), HOST, transport);
        old.onDatagram(recv(2, MpiDatatype.INT, 2), HOST, transport);
        assertTrue(transport.take().isEmpty());

        Map<String, Object> state = old.handOver();
        V1Dispatcher next = proxy();
        assertEquals(Set.of(jobId), next.adopt(state));

        for (FakeProcess p : launcher.processes) {
            assertTrue(p.stops.isEmpty(), "a rank was stopped by the hand-over");
        }
        assertFalse(one.closed || two.closed, "a channel was closed by the hand-over");
        assertTrue(channels.released.isEmpty(), "the job's directory was released by the hand-over");
        assertEquals(0, old.doWork(transport), "the old revision still works");

        assertArrayEquals(range(0, 16), one.toRank.pollInts(16));
        next.doWork(transport);
        assertArrayEquals(range(16, 4), one.toRank.pollInts(16), "the held SEND, delivered by the taker");
        two.fromRank.offerInts(7, 8);
        next.doWork(transport);
        List<Sent> replies = transport.take();
        assertEquals(1, replies.size());
        assertEquals(HOST, replies.get(0).target);
        assertEquals(2, replies.get(0).header.datacount(), "the queued RECV, answered by the taker");
        assertEquals(7, replies.get(0).intAt(0));
        assertEquals(8, replies.get(0).intAt(1));

        next.onDatagram(sendInts(1, 99), HOST, transport);
        assertArrayEquals(new int[] {99}, one.toRank.pollInts(4), "the host's job, found by its address");
        assertEquals(List.of(jobId), next.jobs().stream().map(JobInfo::jobId).toList());
        assertEquals(2, next.counter(ProxyCounter.EXEC_STARTED), "counters carried over");

        launcher.processes.get(0).exit.complete(3);
        next.onDatagram(terminate(1, 0), HOST, transport);
        next.doWork(transport);
        Sent terminated = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, terminated.header.operation());
        assertEquals(MpiErrors.SUCCESS, terminated.header.result());
        assertEquals(3, terminated.header.datacount(), "the exit status, watched by the taker");
        assertTrue(channels.channel(jobId, 1).closed, "the channel, mapped again by the taker, is closed by it");
    }

    @Test
    void shouldSendTheRepliesThePreviousRevisionCouldNotSend() {
        V1Dispatcher old = proxy();
        start(old, channels, launcher, transport, 1);
        start(old, channels, launcher, transport, 2);
        old.onDatagram(terminate(1, 0), HOST, transport);
        launcher.processes.get(0).exit.complete(0);
        // the exit's completion waits for the relay thread, which the hand-over stops

        Map<String, Object> state = old.handOver();
        assertTrue(transport.take().isEmpty());
        V1Dispatcher next = proxy();
        next.adopt(state);
        next.doWork(transport);
        Sent terminated = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, terminated.header.operation());
        assertEquals(1, terminated.header.rankId());
        assertEquals(0, terminated.header.datacount());
        assertEquals(1, next.jobs().get(0).ranks().stream().filter(r -> r.rankId() == 2).count());
    }

    @Test
    void shouldRestartTheWaitOfATerminateAndWatchAnExitThatCameDuringTheHandOver() {
        V1Dispatcher old = proxy();
        start(old, channels, launcher, transport, 1);
        old.onDatagram(terminate(1, 0), HOST, transport);
        Map<String, Object> state = old.handOver();
        launcher.processes.get(0).exit.complete(137);

        V1Dispatcher next = proxy();
        next.adopt(state);
        next.doWork(transport);
        Sent terminated = single();
        assertEquals(137, terminated.header.datacount());
    }

    @Test
    void shouldKillTheRanksOfAJobItCannotTakeOver() {
        V1Dispatcher old = proxy();
        start(old, channels, launcher, transport, 1);
        Map<String, Object> state = new HashMap<>(old.handOver());
        @SuppressWarnings("unchecked")
        Map<String, Object> job = new HashMap<>((Map<String, Object>) ((List<?>) state.get("jobs")).get(0));
        job.put("owner", "a value of another revision's type");
        state.put("jobs", List.of(job));

        V1Dispatcher next = proxy();
        assertEquals(Set.of(), next.adopt(state));
        assertTrue(next.jobs().isEmpty());
        assertEquals(List.of(Duration.ofSeconds(10)), launcher.processes.get(0).stops,
                "the rank is stopped through its own handle, with the stop grace");
    }

    @Test
    void shouldTakeOverHandlesOfAnotherApiRevisionThroughTheirJdkTypedParts() {
        V1Dispatcher old = proxy();
        FakeChannel before = start(old, channels, launcher, transport, 1);
        long jobId = launcher.requests.get(0).jobId();
        Map<String, Object> state = new HashMap<>(old.handOver());
        // what a taker sees after a refresh of the api bundle: handles it cannot cast
        @SuppressWarnings("unchecked")
        Map<String, Object> job = new HashMap<>((Map<String, Object>) ((List<?>) state.get("jobs")).get(0));
        @SuppressWarnings("unchecked")
        Map<String, Object> rank = new HashMap<>((Map<String, Object>) ((List<?>) job.get("ranks")).get(0));
        rank.put("channel", new Object());
        rank.put("process", new Object());
        job.put("ranks", List.of(rank));
        state.put("jobs", List.of(job));

        V1Dispatcher next = proxy();
        assertEquals(Set.of(jobId), next.adopt(state));
        FakeChannel again = channels.channel(jobId, 1);
        assertTrue(again != before, "the channel was mapped again through the channel manager");
        next.onDatagram(sendInts(1, 5), HOST, transport);
        assertArrayEquals(new int[] {5}, again.toRank.pollInts(4));

        next.onDatagram(V1Datagrams.terminate(1, 0), HOST, transport);
        launcher.processes.get(0).exit.complete(9);
        next.doWork(transport);
        Sent terminated = single();
        assertEquals(9, terminated.header.datacount(), "the exit, through the handed-over future");
        assertTrue(launcher.processes.get(0).stops.isEmpty());
    }

    @Test
    void shouldTakeTheBoxOnceAndRunItsExpiryWhenNobodyTakesIt() throws Exception {
        CountDownLatch takenExpiry = new CountDownLatch(1);
        java.util.Set<Thread> before = expiryThreads();
        assertTrue(HandOver.offer(Map.of("jobs", List.of()), Duration.ofMinutes(5), takenExpiry::countDown));
        java.util.Set<Thread> expiries = expiryThreads();
        expiries.removeAll(before);
        assertEquals(1, expiries.size(), "the box's expiry thread");
        assertEquals(Map.of("jobs", List.of()), HandOver.take());
        assertNull(HandOver.take(), "taken twice");
        // its window ends now: woken from its wait, the expiry decides, and its thread ends
        Thread expiry = expiries.iterator().next();
        expiry.interrupt();
        expiry.join(Await.CEILING.toMillis());
        assertFalse(expiry.isAlive(), "the expiry thread still waits");
        assertEquals(1, takenExpiry.getCount(), "a taken box expired");

        CountDownLatch expired = new CountDownLatch(1);
        assertTrue(HandOver.offer(Map.of("jobs", List.of()), Duration.ofMillis(100), expired::countDown));
        assertTrue(expired.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS), "expiry did not run");
        assertNull(HandOver.take(), "taken after its expiry");
    }

    private static java.util.Set<Thread> expiryThreads() {
        java.util.Set<Thread> threads = new java.util.HashSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("mpiproxy-handover-expiry")) {
                threads.add(t);
            }
        }
        return threads;
    }

    @Test
    void shouldRoundTripHeldSendsAndQueuedRecvs() {
        HeldSends held = new HeldSends();
        ByteBuffer data = ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        held.add(6, 2, data, 0, 8, Long.MAX_VALUE);
        held.add(1, 3, data, 2, 3, Long.MAX_VALUE);
        HeldSends copy = new HeldSends();
        copy.restore(held.export());
        assertEquals(2, copy.records());
        assertEquals(11, copy.heldBytes());
        assertEquals(6, copy.headDatatype());
        copy.pop();
        assertEquals(3, copy.headCount());
        assertEquals(3, copy.buffer().get(copy.headPayloadOffset()));

        PendingRecvQueue recvs = new PendingRecvQueue(8);
        recvs.offer(6, 100);
        recvs.offer(1, 7);
        recvs.consume(40);
        PendingRecvQueue again = new PendingRecvQueue(8);
        again.restore(recvs.export());
        assertEquals(2, again.size());
        assertEquals(60, again.headRemaining());
        again.pop();
        assertEquals(1, again.headDatatype());
    }

    private Sent single() {
        List<Sent> sent = transport.take();
        assertEquals(1, sent.size(), "datagrams sent: " + sent.size());
        return sent.get(0);
    }
}
