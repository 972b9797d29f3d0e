package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;

class V2DispatcherTest {

    static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    static final InetSocketAddress OTHER = new InetSocketAddress("127.0.0.1", 40002);
    static final long JOB = 0x1234L;
    static final long NOW = 1_767_225_600_000L;

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final V2Datagrams host = new V2Datagrams(NOW);
    private final V2Authenticator verifier = V2Datagrams.hostVerifier();
    private long now = NOW;
    private V2Dispatcher dispatcher;

    @BeforeEach
    void setUp() {
        dispatcher = create(1448);
    }

    private V2Dispatcher create(int datagramSize) {
        return create(datagramSize, Runnable::run);
    }

    private V2Dispatcher create(int datagramSize, java.util.concurrent.Executor launches) {
        return new V2Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, datagramSize,
                        Duration.ofSeconds(300)),
                coreId -> launcher, transport::wakeup, launches, timer, () -> now);
    }

    @AfterEach
    void tearDown() {
        dispatcher.close();
        timer.shutdownNow();
    }

    private void deliver(ByteBuffer datagram) {
        deliver(datagram, HOST);
    }

    private void deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
        dispatcher.doWork(transport);
    }

    /** Replies since the last call, each checked as a host would check it. */
    private List<V2HeaderFlyweight> replies() {
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            assertEquals(HOST, s.target);
            assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(), now));
            V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(s.bytes, 0);
            assertEquals(V2HeaderDescriptor.FLAG_REPLY, h.flags() & V2HeaderDescriptor.FLAG_REPLY);
            list.add(h);
        }
        return list;
    }

    private V2HeaderFlyweight single() {
        List<V2HeaderFlyweight> r = replies();
        assertEquals(1, r.size(), "replies");
        return r.get(0);
    }

    private FakeChannel startRank(int rank) {
        deliver(host.exec(JOB, rank, 0, 3, "prog a b"));
        V2HeaderFlyweight r = single();
        assertEquals(V2HeaderDescriptor.OP_EXEC, r.operation());
        assertEquals(MpiErrors.SUCCESS, r.result());
        return channels.channel(JOB, rank);
    }

    @Test
    void shouldStartARankOnceForRepeatedExecs() {
        startRank(1);
        assertEquals(1, launcher.requests.size());
        assertEquals(JOB, launcher.requests.get(0).jobId());
        assertEquals(List.of("a", "b"), launcher.requests.get(0).args());
        deliver(host.exec(JOB, 1, 0, 3, "prog a b"));
        assertEquals(MpiErrors.SUCCESS, single().result());
        assertEquals(1, launcher.requests.size());
        assertEquals(1, dispatcher.counter(V2Counter.EXEC_DUPLICATE));
    }

    @Test
    void shouldRefuseForgedRequestsWithoutLaunchAndAnswerOnlyWithRateLimitedRefusals() {
        ByteBuffer flipped = host.exec(JOB, 1, 0, 3, "prog");
        flipped.put(80, (byte) (flipped.get(80) ^ 1));
        deliver(flipped);
        V2Datagrams otherKey = new V2Datagrams(ClusterKeys.of(Map.of(1, new byte[32]), 1), V2Datagrams.NODE, NOW);
        deliver(otherKey.exec(JOB, 1, 0, 3, "prog"));
        V2Datagrams otherNode = new V2Datagrams(V2Datagrams.KEYS, "node-b", NOW);
        deliver(otherNode.exec(JOB, 1, 0, 3, "prog"));
        host.now = NOW - 31_000;
        deliver(host.exec(JOB, 1, 0, 3, "prog"));
        host.now = NOW + 31_000;
        deliver(host.exec(JOB, 1, 0, 3, "prog"));
        host.now = NOW;
        ByteBuffer truncated = host.exec(JOB, 1, 0, 3, "prog");
        truncated.limit(truncated.limit() - 1);
        deliver(truncated);
        assertEquals(0, launcher.requests.size());
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size(), "one refusal: the others from the same address within 100 ms are not sent");
        assertTrue(V2RefusalDescriptor.isRefusal(sent.get(0).bytes, 0, sent.get(0).bytes.limit()));
        assertEquals(1, dispatcher.counter(V2Counter.REFUSALS_SENT));
        assertEquals(4, dispatcher.counter(V2Counter.REFUSALS_LIMITED), "no refusal for the truncated one");
        assertEquals(0, channels.open.size());
        assertEquals(2, dispatcher.counter(V2Counter.AUTH_BAD_MAC));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_WRONG_NODE));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_STALE));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_FUTURE));
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_BAD_LENGTH));
    }

    @Test
    void shouldRefuseAReplayedExecEvenAfterTheJobEnded() {
        ByteBuffer exec = host.exec(JOB, 1, 0, 3, "prog");
        ByteBuffer copy = ByteBuffer.allocate(exec.remaining());
        copy.put(0, exec, 0, exec.remaining());
        deliver(exec);
        single();
        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        deliver(host.terminate(JOB, 1));
        assertEquals(MpiErrors.SUCCESS, single().result());
        deliver(copy);
        assertEquals(0, transport.take().size());
        assertEquals(1, launcher.requests.size());
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_REPLAYED));
    }

    @Test
    void shouldStoreSendFragmentsOnceAndInOrder() {
        FakeChannel channel = startRank(1);
        deliver(host.sendInts(JOB, 1, 0, 7, false, 1, 2));
        V2HeaderFlyweight ack = single();
        assertEquals(V2HeaderDescriptor.OP_SEND, ack.operation());
        assertEquals(1, ack.ack());
        assertTrue(ack.argument() > 0);
        deliver(host.sendInts(JOB, 1, 0, 7, false, 1, 2));
        assertEquals(1, single().ack());
        deliver(host.sendInts(JOB, 1, 2, 7, true, 5));
        V2HeaderFlyweight gap = single();
        assertEquals(1, gap.ack(), "out of order: held, not stored; the reply names the hole");
        assertEquals(2, gap.sequence());
        assertEquals(List.of(7 | MessageRing.MORE_RECORDS), channel.toRank.tagWords());
        deliver(host.sendInts(JOB, 1, 1, 7, true, 3, 4));
        assertEquals(3, single().ack(), "the hole filled: the held fragment is stored after it");
        assertEquals(List.of(7 | MessageRing.MORE_RECORDS, 7, 7), channel.toRank.tagWords());
        assertEquals(List.of(1, 2, 3, 4, 5), boxed(channel.toRank.pollInts(10)));
        assertEquals(1, dispatcher.counter(V2Counter.SEND_DUPLICATE));
        assertEquals(1, dispatcher.counter(V2Counter.SEND_OUT_OF_ORDER));
        assertEquals(1, dispatcher.counter(V2Counter.SEND_HELD));
        assertEquals(3, channel.toRank.producerMark());
    }

    @Test
    void shouldHoldFragmentsPastAHoleOnlyWithinItsSlotsAndStoreThemInOrder() {
        FakeChannel channel = startRank(1);
        // 0 lost; 1..3 held; one far beyond the held slots is dropped as before
        for (int s = 1; s <= 3; s++) {
            deliver(host.sendInts(JOB, 1, s, 7, true, 10 * s));
            assertEquals(0, single().ack());
        }
        deliver(host.sendInts(JOB, 1, 1000, 7, true, 99));
        assertEquals(0, single().ack());
        deliver(host.sendInts(JOB, 1, 2, 7, true, 20));
        assertEquals(0, single().ack(), "a duplicate of a held fragment changes nothing");
        deliver(host.sendInts(JOB, 1, 0, 7, true, 0));
        assertEquals(4, single().ack());
        assertEquals(List.of(0, 10, 20, 30), boxed(channel.toRank.pollInts(10)));
        assertEquals(3, dispatcher.counter(V2Counter.SEND_HELD));
        deliver(host.sendInts(JOB, 1, 4, 7, true, 40));
        assertEquals(5, single().ack());
        assertEquals(List.of(40), boxed(channel.toRank.pollInts(10)));
    }

    @Test
    void shouldAnswerAFullRingWithWindowZeroAndLoseNothing() {
        FakeChannel channel = startRank(1);
        int[] big = new int[1024];
        long s = 0;
        int stored = 0;
        while (true) {
            deliver(host.sendInts(JOB, 1, s, 0, true, java.util.Arrays.copyOf(big, 300)));
            V2HeaderFlyweight ack = single();
            if (ack.ack() == s) {
                assertEquals(0, ack.argument(), "a refused fragment comes with window 0");
                break;
            }
            stored++;
            s++;
        }
        assertTrue(stored > 0);
        assertEquals(300, channel.toRank.pollInts(300).length);
        deliver(host.sendInts(JOB, 1, s, 0, true, java.util.Arrays.copyOf(big, 300)));
        assertEquals(s + 1, single().ack());
    }

    @Test
    void shouldSendOneWindowUpdateOnceARingThatRefusedAFragmentHasRoomAgain() {
        FakeChannel channel = startRank(1);
        int[] big = new int[300];
        long s = 0;
        while (true) {
            deliver(host.sendInts(JOB, 1, s, 0, true, big));
            if (single().ack() == s) {
                break;
            }
            s++;
        }
        // a second refusal of the same stall owes no second update
        deliver(host.sendInts(JOB, 1, s, 0, true, big));
        assertEquals(0, single().argument());
        assertTrue(dispatcher.hasPendingWork(), "the receive thread keeps watching the ring");
        dispatcher.doWork(transport);
        assertEquals(0, transport.take().size(), "still full: no update");
        assertTrue(s >= 4, "stored " + s);
        assertEquals(300, channel.toRank.pollInts(300).length);
        dispatcher.doWork(transport);
        assertEquals(0, transport.take().size(), "room for one of " + s + " fragments: no update yet");
        for (long i = 1; i < s; i++) {
            assertEquals(300, channel.toRank.pollInts(300).length);
        }
        dispatcher.doWork(transport);
        V2HeaderFlyweight update = single();
        assertEquals(V2HeaderDescriptor.OP_SEND, update.operation());
        assertEquals(MpiErrors.SUCCESS, update.result());
        assertEquals(s, update.ack(), "the next sequence expected");
        assertEquals(s, update.sequence());
        assertTrue(update.argument() > 0, "a window above 0");
        dispatcher.doWork(transport);
        assertEquals(0, transport.take().size(), "one update per stall");
        assertFalse(dispatcher.hasPendingWork());
        assertEquals(1, dispatcher.counter(V2Counter.SEND_WINDOW_UPDATES));
        deliver(host.sendInts(JOB, 1, s, 0, true, big));
        assertEquals(s + 1, single().ack());
    }

    @Test
    void shouldForgetAStalledSenderWhoseRankEnded() {
        FakeChannel channel = startRank(1);
        int[] big = new int[300];
        long s = 0;
        while (true) {
            deliver(host.sendInts(JOB, 1, s, 0, true, big));
            if (single().ack() == s) {
                break;
            }
            s++;
        }
        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        transport.take();
        // room again, but nobody will read what the host would send: no update
        for (long i = 0; i < s; i++) {
            assertEquals(300, channel.toRank.pollInts(300).length);
        }
        dispatcher.doWork(transport);
        assertEquals(0, transport.take().size());
        assertEquals(0, dispatcher.counter(V2Counter.SEND_WINDOW_UPDATES));
        assertFalse(dispatcher.hasPendingWork());
    }

    @Test
    void shouldNotResendFragmentsStillInFlightWhenARecvOnlyAcknowledges() {
        FakeChannel channel = startRank(1);
        offerInts(channel.fromRank, 9, true, 1);
        offerInts(channel.fromRank, 9, true, 2);
        offerInts(channel.fromRank, 9, true, 3);
        deliver(host.recv(JOB, 1, 0, 8));
        assertEquals(3, replies().size());
        // an early acknowledgement of fragment 0 while 1 and 2 are on their way: nothing again
        now += V2Dispatcher.RESEND_AFTER_MILLIS - 1;
        deliver(host.recv(JOB, 1, 1, 8));
        assertEquals(0, replies().size(), "no duplicates and no empty reply");
        assertEquals(1, channel.fromRank.consumerMark());
        assertEquals(2, dispatcher.counter(V2Counter.RECV_IN_FLIGHT));
        // the same request again: the host lost them; sent again at once
        deliver(host.recv(JOB, 1, 1, 8));
        List<V2HeaderFlyweight> r = replies();
        assertEquals(2, r.size());
        assertEquals(List.of(2), ints(r.get(0)));
        assertEquals(List.of(3), ints(r.get(1)));
        // progress, and a fragment sent long enough ago: sent again
        now += V2Dispatcher.RESEND_AFTER_MILLIS;
        deliver(host.recv(JOB, 1, 2, 8));
        r = replies();
        assertEquals(1, r.size());
        assertEquals(2, r.get(0).sequence());
        assertEquals(3, dispatcher.counter(V2Counter.RECV_RESENT));
    }

    @Test
    void shouldPullRankDataBySequenceAndResendWithoutConsumingTwice() {
        FakeChannel channel = startRank(1);
        offerInts(channel.fromRank, 9, false, 1, 2, 3);
        offerInts(channel.fromRank, 9, true, 4);
        offerInts(channel.fromRank, 3, true, 5, 6);
        deliver(host.recv(JOB, 1, 0, 8));
        List<V2HeaderFlyweight> r = replies();
        assertEquals(3, r.size());
        assertEquals(0, r.get(0).sequence());
        assertEquals(9, r.get(0).tag());
        assertEquals(0, r.get(0).flags() & V2HeaderDescriptor.FLAG_END_OF_MESSAGE);
        assertEquals(V2HeaderDescriptor.FLAG_END_OF_MESSAGE, r.get(1).flags() & V2HeaderDescriptor.FLAG_END_OF_MESSAGE);
        assertEquals(3, r.get(2).tag());
        assertEquals(2, r.get(2).argument());
        assertEquals(List.of(5, 6), ints(r.get(2)));
        // the replies were lost: after its retransmit timeout the host asks again from 1
        now += 20;
        deliver(host.recv(JOB, 1, 1, 8));
        r = replies();
        assertEquals(2, r.size());
        assertEquals(1, r.get(0).sequence());
        assertEquals(List.of(4), ints(r.get(0)));
        assertEquals(List.of(5, 6), ints(r.get(1)));
        // fragments 1 and 2 are not acknowledged yet: they stay in the ring, the mark says 1
        assertFalse(channel.fromRank.isEmpty());
        assertEquals(1, channel.fromRank.consumerMark());
        // nothing new: the request waits; data written later is sent by doWork
        deliver(host.recv(JOB, 1, 3, 8));
        V2HeaderFlyweight empty = single();
        assertEquals(0, empty.argument(), "an empty reply: alive, nothing yet");
        assertEquals(0, empty.payloadLength());
        assertEquals(3, empty.sequence());
        assertTrue(channel.fromRank.isEmpty(), "acknowledged up to 3: released from the ring");
        assertEquals(3, channel.fromRank.consumerMark());
        assertTrue(dispatcher.hasPendingWork());
        offerInts(channel.fromRank, 0, true, 7);
        dispatcher.doWork(transport);
        V2HeaderFlyweight late = single();
        assertEquals(3, late.sequence());
        assertEquals(List.of(7), ints(late));
        // below the acknowledged sequence: refused
        deliver(host.recv(JOB, 1, 0, 8));
        assertEquals(0, replies().size());
        assertEquals(1, dispatcher.counter(V2Counter.INVALID_SEQUENCE));
    }

    @Test
    void shouldNeitherHearNorAnswerAJobWhoseKeyWasRemoved() {
        FakeChannel channel = startRank(1);
        deliver(host.recv(JOB, 1, 0, 8));
        assertEquals(0, single().argument(), "nothing yet: the request waits");
        byte[] newKey = V2Datagrams.KEY.clone();
        newKey[0] ^= 1;
        ClusterKeys rotated = ClusterKeys.of(Map.of(2, newKey), 2);
        assertEquals(List.of(), dispatcher.reconfigure(new V2Settings(rotated, V2Datagrams.NODE,
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300))));

        offerInts(channel.fromRank, 0, true, 7);
        dispatcher.doWork(transport);
        assertEquals(0, transport.take().size(), "no reply under the removed key");
        assertEquals(1, dispatcher.counter(V2Counter.REPLIES_KEY_REMOVED));
        deliver(host.recv(JOB, 1, 0, 8));
        List<RecordingTransport.Sent> refusal = transport.take();
        assertEquals(1, refusal.size());
        assertTrue(V2RefusalDescriptor.isRefusal(refusal.get(0).bytes, 0, refusal.get(0).bytes.limit()),
                "only the unauthenticated refusal: the job is not answered");
        assertEquals(1, dispatcher.counter(V2Counter.AUTH_UNKNOWN_KEY), "the old key is not heard");

        assertEquals(List.of("v2.skew.seconds", "v2.datagram.size"), dispatcher.reconfigure(new V2Settings(rotated,
                V2Datagrams.NODE, Duration.ofSeconds(60), 1024, 9000, Duration.ofSeconds(300))),
                "values that wait for the next start");
    }

    @Test
    void shouldSplitARecordLargerThanADatagramIntoFragments() {
        FakeChannel channel = startRank(1);
        int[] values = new int[1000];
        for (int i = 0; i < values.length; i++) {
            values[i] = i * 3;
        }
        offerInts(channel.fromRank, 4, true, values);
        deliver(host.recv(JOB, 1, 0, 16));
        List<V2HeaderFlyweight> r = replies();
        int max = V2HeaderDescriptor.maxPayload(1448) / 4;
        assertEquals((1000 + max - 1) / max, r.size());
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < r.size(); i++) {
            assertEquals(i == r.size() - 1 ? V2HeaderDescriptor.FLAG_END_OF_MESSAGE : 0,
                    r.get(i).flags() & V2HeaderDescriptor.FLAG_END_OF_MESSAGE);
            assertEquals(4, r.get(i).tag());
            all.addAll(ints(r.get(i)));
        }
        assertEquals(boxed(values), all);
    }

    @Test
    void shouldKeepJobsApart() {
        startRank(1);
        deliver(host.sendInts(JOB + 1, 1, 0, 0, true, 1));
        V2HeaderFlyweight r = single();
        assertEquals(V2Dispatcher.UNKNOWN_JOB, r.result());
        deliver(host.sendInts(JOB, 2, 0, 0, true, 1));
        assertEquals(MpiErrors.ERR_RANK, single().result());
        // another host address cannot use the job
        dispatcher.onDatagram(host.recv(JOB, 1, 0, 1), OTHER, transport);
        List<RecordingTransport.Sent> sent = transport.take();
        assertEquals(1, sent.size());
        assertEquals(OTHER, sent.get(0).target);
        assertEquals(V2Dispatcher.UNKNOWN_JOB, new V2HeaderFlyweight().wrap(sent.get(0).bytes, 0).result());
        deliver(host.exec(JOB + 1, 1, 0, 2, "other"));
        assertEquals(MpiErrors.SUCCESS, single().result());
        assertEquals(2, dispatcher.jobs().size());
        assertEquals("v2", dispatcher.jobs().get(0).protocol());
    }

    @Test
    void shouldTerminateIdempotentlyWithTheExitStatus() {
        startRank(1);
        deliver(host.terminate(JOB, 1));
        assertEquals(0, replies().size());
        deliver(host.terminate(JOB, 1));
        assertEquals(V2HeaderDescriptor.OP_STATUS, single().operation(), "the repetition gets the interim reply");
        launcher.processes.get(0).exitWith(3);
        dispatcher.doWork(transport);
        V2HeaderFlyweight r = single();
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, r.operation());
        assertEquals(3, r.argument());
        deliver(host.terminate(JOB, 1));
        r = single();
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(3, r.argument());
        assertEquals(1, launcher.requests.size());
        assertTrue(channels.released.contains(JOB));
    }

    @Test
    void shouldStopARankAtOnceOnTerminateWithStopWithoutWaitingForTheTerminateTimeout() {
        startRank(1);
        deliver(host.terminate(JOB, 1, V2HeaderDescriptor.TERMINATE_STOP));
        assertEquals(0, replies().size(), "no reply before the rank exited");
        FakeLauncher.FakeProcess process = launcher.processes.get(0);
        // the terminate timeout is 30 s: a stop now signals at once, with the stop grace (1 s here)
        assertEquals(List.of(Duration.ofSeconds(1)), process.stops);
        assertEquals(1, dispatcher.counter(V2Counter.TERMINATE_STOPPED));
        deliver(host.terminate(JOB, 1, V2HeaderDescriptor.TERMINATE_STOP));
        assertEquals(V2HeaderDescriptor.OP_STATUS, single().operation());
        assertEquals(1, process.stops.size(), "a repeated stop signals nothing more");

        process.exitWith(128 + 15);
        dispatcher.doWork(transport);
        V2HeaderFlyweight r = single();
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, r.operation());
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(128 + 15, r.argument());
        assertTrue(channels.released.contains(JOB), "the job's channel directory is released");
    }

    @Test
    void shouldWaitForTheExitOnTerminateWithoutStop() {
        startRank(1);
        deliver(host.terminate(JOB, 1));
        assertEquals(List.of(), launcher.processes.get(0).stops, "a normal TERMINATE waits for the rank's exit");
        assertEquals(0, dispatcher.counter(V2Counter.TERMINATE_STOPPED));
    }

    @Test
    void shouldStopARankAlreadyTerminatingWhenATerminateWithStopFollows() {
        startRank(1);
        deliver(host.terminate(JOB, 1));
        assertEquals(0, replies().size());
        FakeLauncher.FakeProcess process = launcher.processes.get(0);
        assertEquals(List.of(), process.stops);
        deliver(host.terminate(JOB, 1, V2HeaderDescriptor.TERMINATE_STOP));
        assertEquals(List.of(Duration.ofSeconds(1)), process.stops);
        assertEquals(V2HeaderDescriptor.OP_STATUS, single().operation());
    }

    @Test
    void shouldStopARankStillStartingAsSoonAsItsProcessExists() {
        dispatcher.close();
        List<Runnable> launches = new ArrayList<>();
        dispatcher = create(1448, launches::add);
        deliver(host.exec(JOB, 1, 0, 2, "prog"));
        deliver(host.terminate(JOB, 1, V2HeaderDescriptor.TERMINATE_STOP));
        assertEquals(1, launches.size());
        launches.get(0).run();
        dispatcher.doWork(transport);
        assertEquals(V2HeaderDescriptor.OP_EXEC, single().operation());
        assertEquals(List.of(Duration.ofSeconds(1)), launcher.processes.get(0).stops);
    }

    @Test
    void shouldAnswerARepeatedTerminateOfARankStillTerminatingWithAnInterimStatusReply() {
        startRank(1);
        deliver(host.terminate(JOB, 1));
        assertEquals(0, replies().size());
        deliver(host.terminate(JOB, 1));
        V2HeaderFlyweight r = single();
        assertEquals(V2HeaderDescriptor.OP_STATUS, r.operation(), "interim: not a TERMINATE reply");
        assertEquals(MpiErrors.SUCCESS, r.result());
        assertEquals(JOB, r.jobId());
        assertEquals(1, r.rank());
        assertEquals(1, r.argument());
        assertEquals(0, r.ack());
        assertEquals(org.mpiproxy.protocol.V2StatusDescriptor.ENTRY_LENGTH, r.payloadLength());
        ByteBuffer b = r.buffer();
        int entry = V2HeaderDescriptor.HEADER_LENGTH;
        assertEquals(1, org.mpiproxy.protocol.V2StatusDescriptor.rank(b, entry));
        assertEquals(org.mpiproxy.protocol.V2StatusDescriptor.STATE_TERMINATING,
                org.mpiproxy.protocol.V2StatusDescriptor.state(b, entry));
        assertEquals(launcher.processes.get(0).pid, org.mpiproxy.protocol.V2StatusDescriptor.pid(b, entry));
        assertEquals(-1, org.mpiproxy.protocol.V2StatusDescriptor.exitStatus(b, entry));
        assertEquals(1, dispatcher.counter(V2Counter.TERMINATE_INTERIM));

        deliver(host.terminate(JOB, 1));
        assertEquals(V2HeaderDescriptor.OP_STATUS, single().operation(), "every repetition is answered");
        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, single().operation());
    }

    @Test
    void shouldRefuseATerminateWithUnknownArgumentBitsAndLeaveTheRankAlone() {
        startRank(1);
        deliver(host.terminate(JOB, 1, 0x2));
        V2HeaderFlyweight r = single();
        assertEquals(V2HeaderDescriptor.OP_TERMINATE, r.operation());
        assertEquals(MpiErrors.ERR_ARG, r.result());
        assertEquals(1, dispatcher.counter(V2Counter.INVALID_ARGUMENT));
        assertEquals(List.of(), launcher.processes.get(0).stops);
        deliver(host.terminate(JOB, 1, V2HeaderDescriptor.TERMINATE_STOP));
        assertEquals(0, replies().size(), "the rank is still there to be terminated");
        assertEquals(1, launcher.processes.get(0).stops.size());
    }

    @Test
    void shouldTellAPendingRecvThatTheRankEnded() {
        FakeChannel channel = startRank(1);
        offerInts(channel.fromRank, 0, true, 1);
        deliver(host.recv(JOB, 1, 0, 4));
        assertEquals(1, replies().size());
        launcher.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        V2HeaderFlyweight r = single();
        assertEquals(V2Dispatcher.RANK_ENDED, r.result());
        assertEquals(1, r.sequence());
    }

    @Test
    void shouldExplainARefusedExecAndStartNothing() {
        deliver(host.exec(JOB, 5, 0, 3, "prog"));
        V2HeaderFlyweight r = single();
        assertEquals(MpiErrors.ERR_RANK, r.result());
        byte[] text = new byte[r.payloadLength()];
        r.buffer().get(r.payloadOffset(), text);
        assertEquals("rank 5 is not in 1..2", new String(text, StandardCharsets.UTF_8));
        deliver(host.exec(JOB, 1, 0, 3, "../bin/sh"));
        assertEquals(MpiErrors.ERR_ARG, single().result());
        deliver(host.exec(0, 1, 0, 3, "prog"));
        assertEquals(MpiErrors.ERR_ARG, single().result());
        assertEquals(0, launcher.requests.size());
    }

    private static void offerInts(HeapMessageRing ring, int tag, boolean last, int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            b.putInt(v);
        }
        assertTrue(ring.offer(3, values.length, tag | (last ? 0 : MessageRing.MORE_RECORDS), b, 0, values.length * 4));
    }

    private static List<Integer> ints(V2HeaderFlyweight h) {
        List<Integer> list = new ArrayList<>();
        for (int i = 0; i < h.argument(); i++) {
            list.add(h.buffer().getInt(h.payloadOffset() + 4 * i));
        }
        return list;
    }

    private static List<Integer> boxed(int[] values) {
        List<Integer> list = new ArrayList<>();
        for (int v : values) {
            list.add(v);
        }
        return list;
    }
}
