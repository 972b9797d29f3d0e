package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.proxy.internal.FakeChannelManager.FakeChannel;
import org.mpiproxy.proxy.internal.FakeLauncher.FakeProcess;
import org.mpiproxy.proxy.internal.RecordingTransport.Sent;

class V1DispatcherTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final InetSocketAddress OTHER_HOST = new InetSocketAddress("127.0.0.1", 40002);
    private static final int INT = MpiDatatype.INT.code();

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher local = new FakeLauncher();
    private final FakeLauncher core = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private boolean coreLauncherPresent = true;
    private V1Dispatcher dispatcher;

    @BeforeEach
    void setUp() {
        create(new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(10)));
    }

    @AfterEach
    void tearDown() {
        dispatcher.close();
    }

    private void create(ProxySettings settings) {
        if (dispatcher != null) {
            dispatcher.close();
        }
        dispatcher = new V1Dispatcher(channels, settings,
                coreId -> coreId == 0 ? local : (coreLauncherPresent ? core : null), transport::wakeup,
                Runnable::run, timer);
    }

    private void deliver(ByteBuffer datagram) {
        deliver(datagram, HOST);
    }

    private void deliver(ByteBuffer datagram, InetSocketAddress from) {
        dispatcher.onDatagram(datagram, from, transport);
    }

    private Sent single() {
        List<Sent> sent = transport.take();
        assertEquals(1, sent.size(), "datagrams sent");
        return sent.get(0);
    }

    private FakeChannel startRank(int rankId, int worldSize) {
        return startRank(rankId, worldSize, HOST);
    }

    private FakeChannel startRank(int rankId, int worldSize, InetSocketAddress from) {
        deliver(exec(rankId, 0, worldSize, "prog a b"), from);
        dispatcher.doWork(transport);
        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_EXEC, reply.header.operation());
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        return channels.channel(local.requests.get(local.requests.size() - 1).jobId(), rankId);
    }

    private long counter(ProxyCounter c) {
        return dispatcher.counter(c);
    }

    /** @return rank {@code rankId} of job {@code jobId}, or null */
    private RankInfo rankInfo(long jobId, int rankId) {
        for (JobInfo job : dispatcher.jobs()) {
            for (RankInfo r : job.ranks()) {
                if (job.jobId() == jobId && r.rankId() == rankId) {
                    return r;
                }
            }
        }
        return null;
    }

    private RankInfo rankInfo(int rankId) {
        for (JobInfo job : dispatcher.jobs()) {
            for (RankInfo r : job.ranks()) {
                if (r.rankId() == rankId) {
                    return r;
                }
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ probe

    @Test
    void shouldAnswerTheLaunchersProbeTerminateOfRankZeroAsAProbeAndStopNothing() {
        FakeChannel rank = startRank(1, 2);

        deliver(terminate(0, 0), new InetSocketAddress("127.0.0.1", 40999));

        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, reply.header.operation());
        assertEquals(MpiErrors.ERR_RANK, reply.header.result());
        assertEquals(1, counter(ProxyCounter.PROBES));
        assertEquals(0, counter(ProxyCounter.TERMINATE_REQUESTS));
        assertEquals(0, counter(ProxyCounter.TERMINATE_UNKNOWN));
        assertEquals(0, counter(ProxyCounter.EXEC_REJECTED));
        assertEquals(RankInfo.State.RUNNING, rankInfo(1).state(), "nothing was stopped");
        assertTrue(rank != null);
    }

    // ------------------------------------------------------------------ EXEC

    @Test
    void shouldReplyToExecOnlyOnceTheRankHasStarted() {
        deliver(exec(1, 0, 3, "prog a b"));
        assertTrue(transport.take().isEmpty(), "no reply before the launch completes");
        assertTrue(transport.wakeups.get() > 0, "completion must wake the receive thread");
        assertEquals(1, channels.open.size(), "channel created synchronously");

        assertTrue(dispatcher.doWork(transport) > 0);
        Sent reply = single();
        assertEquals(HOST, reply.target);
        assertEquals(V1HeaderDescriptor.OP_EXEC, reply.header.operation());
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        assertEquals(1, reply.header.rankId());
        assertEquals(0, reply.header.coreId());
        assertEquals(0, reply.payloadLength());

        LaunchRequest request = local.requests.get(0);
        assertTrue(request.jobId() > 0);
        assertEquals(1, request.rankId());
        assertEquals(3, request.worldSize());
        assertEquals("prog", request.program());
        assertEquals(List.of("a", "b"), request.args());
        assertEquals(channels.channel(request.jobId(), 1).path(), request.channelPath());
        assertEquals(Path.of("logs", "job-" + Job.hex(request.jobId())), request.logDirectory());
        RankInfo info = rankInfo(1);
        assertEquals(RankInfo.State.RUNNING, info.state());
        assertEquals(1000, info.pid());
        assertEquals(1, counter(ProxyCounter.EXEC_STARTED));
    }

    @Test
    void shouldUseCoreLauncherForCoreAboveZero() {
        deliver(exec(1, 2, 2, "prog"));
        dispatcher.doWork(transport);
        assertEquals(MpiErrors.SUCCESS, single().header.result());
        assertTrue(local.requests.isEmpty());
        assertEquals(2, core.requests.get(0).coreId());
    }

    @Test
    void shouldRejectExecWithWorldSizeBelowTwo() {
        deliver(exec(1, 0, 1, "prog"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_ARG, reply.header.result());
        assertEquals(1, reply.header.rankId());
        assertTrue(reply.reason().contains("world size 1"), reply.reason());
        assertTrue(channels.open.isEmpty());
        assertTrue(dispatcher.jobs().isEmpty());
    }

    @Test
    void shouldRejectExecWithRankOutsideWorld() {
        deliver(exec(0, 0, 3, "prog"));
        assertEquals(MpiErrors.ERR_RANK, single().header.result());
        deliver(exec(3, 0, 3, "prog"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_RANK, reply.header.result());
        assertTrue(reply.reason().contains("1..2"), reply.reason());
        assertEquals(2, counter(ProxyCounter.EXEC_REJECTED));
    }

    @Test
    void shouldRejectExecWithBadCommand() {
        deliver(exec(1, 0, 2, ""));
        assertEquals(MpiErrors.ERR_ARG, single().header.result());
        deliver(exec(1, 0, 2, "../bin/sh -c x"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_ARG, reply.header.result());
        assertTrue(reply.reason().contains(".."), reply.reason());
        assertTrue(local.requests.isEmpty());
    }

    @Test
    void shouldReplyIoErrorWhenNoLauncherServesTheCore() {
        coreLauncherPresent = false;
        deliver(exec(1, 1, 2, "prog"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_IO, reply.header.result());
        assertTrue(reply.reason().contains("core 1"), reply.reason());
        assertTrue(channels.open.isEmpty());
    }

    @Test
    void shouldReplyIoErrorWithReasonWhenLaunchFails() {
        local.failWith = "no program 'prog' in programs";
        deliver(exec(1, 0, 2, "prog"));
        dispatcher.doWork(transport);
        Sent reply = single();
        assertEquals(MpiErrors.ERR_IO, reply.header.result());
        assertEquals("no program 'prog' in programs", reply.reason());
        long jobId = local.requests.get(0).jobId();
        assertTrue(channels.channel(jobId, 1).closed);
        assertTrue(channels.removed.contains(FakeChannelManager.key(jobId, 1)));
        assertEquals(RankInfo.State.FAILED, rankInfo(1).state());
        assertEquals(-1, rankInfo(1).pid());
        assertEquals(1, counter(ProxyCounter.EXEC_FAILED));
    }

    @Test
    void shouldReplyIoErrorWhenChannelCannotBeCreated() {
        channels.failOpen = new java.io.IOException("disk full");
        deliver(exec(1, 0, 2, "prog"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_IO, reply.header.result());
        assertTrue(reply.reason().contains("disk full"), reply.reason());
        assertTrue(dispatcher.jobs().isEmpty());
    }

    @Test
    void shouldAnswerRepeatedExecWithOriginalResult() {
        startRank(1, 2);
        deliver(exec(1, 0, 2, "other"));
        Sent reply = single();
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        assertEquals(1, local.requests.size(), "no second launch");
        assertEquals(1, counter(ProxyCounter.EXEC_DUPLICATE));
    }

    @Test
    void shouldRefuseAnExecNamingAnImage() {
        deliver(exec(1, 0, 2, "mpiping.lz4 7"));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_ARG, reply.header.result());
        assertEquals("'mpiping.lz4' is the LZ4 image of program 'mpiping' for remote cores, not a program: name"
                + " 'mpiping'", reply.reason());
        assertTrue(local.requests.isEmpty());
    }

    @Test
    void shouldStartANewJobWhenTheHostRetriesAfterAFailedExec() {
        core.failWith = "core 999 is not among the allowed CPUs";
        String[] log = captureErr(() -> {
            deliver(exec(1, 999, 2, "prog"));
            dispatcher.doWork(transport);
        });
        assertEquals(MpiErrors.ERR_IO, single().header.result());
        long failedJob = core.requests.get(0).jobId();

        String[] retry = captureErr(() -> {
            deliver(exec(1, 0, 2, "prog"));
            dispatcher.doWork(transport);
        });

        Sent reply = single();
        assertEquals(MpiErrors.SUCCESS, reply.header.result(), reply.reason());
        long newJob = local.requests.get(0).jobId();
        assertNotEquals(failedJob, newJob);
        assertTrue(channels.released.contains(failedJob), "the failed job's directory is gone");
        assertEquals(RankInfo.State.RUNNING, rankInfo(newJob, 1).state());
        assertEquals(0, counter(ProxyCounter.EXEC_DUPLICATE));
        assertTrue(String.join("\n", retry).contains("job " + Job.hex(failedJob) + " of 127.0.0.1:40001 has failed and"
                + " has no live rank"), String.join("\n", retry) + String.join("\n", log));
    }

    @Test
    void shouldRefuseAndLogARepeatedExecOfAFailedRankWhileTheJobHasLiveRanks() {
        dispatcher.supervision(new SupervisionSettings(false, Duration.ZERO, Duration.ZERO));
        startRank(2, 3);
        core.failWith = "core 999 is not among the allowed CPUs";
        deliver(exec(1, 999, 3, "prog"));
        dispatcher.doWork(transport);
        assertEquals(MpiErrors.ERR_IO, single().header.result());

        String[] log = captureErr(() -> deliver(exec(1, 999, 3, "prog")));

        Sent reply = single();
        assertEquals(MpiErrors.ERR_IO, reply.header.result());
        assertEquals("core 999 is not among the allowed CPUs", reply.reason());
        assertEquals(1, counter(ProxyCounter.EXEC_REJECTED));
        assertEquals(1, log.length, String.join("\n", log));
        assertTrue(log[0].contains("EXEC of rank 1 from 127.0.0.1:40001 refused with MPI_ERR_IO: rank 1 of job "),
                log[0]);
        assertTrue(log[0].contains("failed already (core 999 is not among the allowed CPUs) and the job still has"
                + " live ranks"), log[0]);
        assertEquals(1, core.requests.size(), "no second launch");
    }

    /** Runs {@code action} and returns the lines it logged (the test logger writes to System.err). */
    private static String[] captureErr(Runnable action) {
        java.io.PrintStream old = System.err;
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(bytes, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(old);
        }
        String text = bytes.toString(java.nio.charset.StandardCharsets.UTF_8).strip();
        return text.isEmpty() ? new String[0] : text.split("\n");
    }

    // ------------------------------------------------------------------ SEND

    @Test
    void shouldWriteSendStraightIntoRing() {
        FakeChannel channel = startRank(1, 2);
        deliver(sendInts(1, 7, 8, 9));
        assertEquals(List.of(), transport.take(), "SEND has no reply");
        assertEquals(1, channel.toRank.offers);
        assertEquals(List.of(7, 8, 9), boxed(channel.toRank.pollInts(10)));
        assertEquals(12, rankInfo(1).bytesIn());
        assertFalse(dispatcher.hasPendingWork());
    }

    @Test
    void shouldRingTheRanksDoorbellOnceAfterWritingASendIntoItsRing() {
        FakeChannel channel = startRank(1, 2);
        InetSocketAddress rankBell = new InetSocketAddress("127.0.0.1", 45678);
        channel.toRank.doorbell(Doorbell.encode(rankBell));
        deliver(sendInts(1, 7));
        Sent rung = single();
        assertEquals(rankBell, rung.target);
        assertTrue(Doorbell.isDoorbell(rung.bytes.duplicate().clear()), "a doorbell datagram");
        assertEquals(0, channel.toRank.doorbell(), "taken");
        assertEquals(1, counter(ProxyCounter.DOORBELLS_RUNG));
        deliver(sendInts(1, 8));
        assertEquals(List.of(), transport.take(), "nobody sleeps on it any more");
        assertEquals(List.of(7, 8), boxed(channel.toRank.pollInts(10)));
    }

    @Test
    void shouldArmTheDoorbellOfTheRingAPendingRecvWaitsOn() {
        FakeChannel channel = startRank(1, 2);
        deliver(recv(1, MpiDatatype.INT, 1));
        assertEquals(0, dispatcher.doWork(transport), "nothing to answer yet");
        long proxyBell = Doorbell.encode(new InetSocketAddress("127.0.0.1", 45679));

        // a rank library that does not ring: the receive thread keeps its timers
        assertEquals(DatagramHandler.SLEEP_AS_USUAL, dispatcher.armDoorbells(proxyBell, transport));
        channel.fromRank.producerRingsDoorbell(true);
        channel.fromRank.doorbell(0);
        assertEquals(DatagramHandler.SLEEP_UNTIL_RUNG, dispatcher.armDoorbells(proxyBell, transport));
        assertEquals(proxyBell, channel.fromRank.doorbell(), "announced where the proxy sleeps");

        // the rank wrote before the proxy slept: no sleep
        ByteBuffer one = ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0, 42);
        assertTrue(channel.fromRank.offer(INT, 1, one, 0, 4));
        assertEquals(DatagramHandler.DO_NOT_SLEEP, dispatcher.armDoorbells(proxyBell, transport));
        assertEquals(1, dispatcher.doWork(transport), "the RECV is answered");
        assertEquals(MpiErrors.SUCCESS, single().header.result());
    }

    @Test
    void shouldSleepAsUsualWhileSendsWaitForRoomInTheRanksRing() {
        channels.ringCapacity = 64;
        startRank(1, 2);
        deliver(sendInts(1, range(0, 16)));
        deliver(sendInts(1, range(16, 4)));
        assertTrue(dispatcher.hasPendingWork());
        long proxyBell = Doorbell.encode(new InetSocketAddress("127.0.0.1", 45679));
        assertEquals(DatagramHandler.SLEEP_AS_USUAL, dispatcher.armDoorbells(proxyBell, transport),
                "no doorbell announces room");
    }

    @Test
    void shouldUseExactlyDatacountElementsOfLongerPayload() {
        FakeChannel channel = startRank(1, 2);
        ByteBuffer datagram = sendInts(1, 1, 2, 3, 4);
        new org.mpiproxy.protocol.V1HeaderFlyweight().wrap(datagram, 0).datacount(2);
        deliver(datagram);
        assertEquals(List.of(1, 2), boxed(channel.toRank.pollInts(10)));
    }

    @Test
    void shouldHoldSendWhileRingIsFullAndFlushInOrder() {
        channels.ringCapacity = 64;
        FakeChannel channel = startRank(1, 2);
        deliver(sendInts(1, range(0, 16)));
        deliver(sendInts(1, range(16, 4)));
        deliver(sendInts(1, range(20, 4)));
        assertTrue(dispatcher.hasPendingWork());
        assertEquals(32, rankInfo(1).held());
        assertEquals(0, dispatcher.doWork(transport), "ring still full");

        assertEquals(4, channel.toRank.pollInts(4).length);
        assertEquals(1, dispatcher.doWork(transport), "one held record fits");
        deliver(sendInts(1, 24), HOST);
        assertEquals(List.of(4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19),
                boxed(channel.toRank.pollInts(16)));
        dispatcher.doWork(transport);
        assertFalse(dispatcher.hasPendingWork());
        assertEquals(List.of(20, 21, 22, 23, 24), boxed(channel.toRank.pollInts(16)), "order kept");
        assertEquals(0, rankInfo(1).held());
        assertEquals(3, counter(ProxyCounter.SEND_HELD), "held while earlier data was held too");
    }

    @Test
    void shouldDropSendBeyondHoldLimitAndCountIt() {
        create(new ProxySettings(Path.of("logs"), 16, Duration.ofSeconds(30), Duration.ofSeconds(10)));
        channels.ringCapacity = 16;
        FakeChannel channel = startRank(1, 2);
        deliver(sendInts(1, range(0, 4)));
        deliver(sendInts(1, range(4, 4)));
        deliver(sendInts(1, range(8, 4)));
        assertEquals(1, counter(ProxyCounter.SEND_DROPPED));
        RankInfo info = rankInfo(1);
        assertEquals(16, info.held());
        assertEquals(1, info.dropped());
        assertEquals(List.of(0, 1, 2, 3), boxed(channel.toRank.pollInts(4)));
        dispatcher.doWork(transport);
        assertEquals(List.of(4, 5, 6, 7), boxed(channel.toRank.pollInts(4)));
    }

    // ------------------------------------------------------------------ RECV

    @Test
    void shouldAnswerRecvAtOnceWhenDataIsThere() {
        FakeChannel channel = startRank(1, 2);
        channel.fromRank.offerInts(0x12345678);
        deliver(recv(1, MpiDatatype.INT, 1));
        Sent reply = single();
        assertEquals(HOST, reply.target);
        assertEquals(V1HeaderDescriptor.OP_RECV, reply.header.operation());
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        assertEquals(1, reply.header.rankId());
        assertEquals(INT, reply.header.datatype());
        assertEquals(1, reply.header.datacount());
        assertEquals(4, reply.payloadLength());
        assertEquals(0x12345678, reply.intAt(0));
        assertFalse(dispatcher.hasPendingWork());
        assertEquals(4, rankInfo(1).bytesOut());
    }

    @Test
    void shouldAnswerRecvWhenDataArrivesLater() {
        FakeChannel channel = startRank(1, 2);
        deliver(recv(1, MpiDatatype.INT, 2));
        assertTrue(transport.take().isEmpty());
        assertTrue(dispatcher.hasPendingWork());
        assertEquals(0, dispatcher.doWork(transport));
        channel.fromRank.offerInts(5, 6);
        assertEquals(1, dispatcher.doWork(transport));
        Sent reply = single();
        assertEquals(2, reply.header.datacount());
        assertEquals(5, reply.intAt(0));
        assertEquals(6, reply.intAt(1));
        assertFalse(dispatcher.hasPendingWork());
    }

    @Test
    void shouldSplitLargeRecvIntoDenseDatagrams() {
        FakeChannel channel = startRank(1, 2);
        channel.fromRank.offerInts(range(0, 600));
        channel.fromRank.offerInts(range(600, 400));
        deliver(recv(1, MpiDatatype.INT, 1000));
        List<Sent> replies = transport.take();
        assertEquals(3, replies.size());
        int[] counts = {359, 359, 282};
        int next = 0;
        for (int i = 0; i < 3; i++) {
            Sent s = replies.get(i);
            assertEquals(counts[i], s.header.datacount());
            assertEquals(counts[i] * 4, s.payloadLength(), "dense payload");
            assertTrue(s.bytes.capacity() <= V1HeaderDescriptor.MAX_DATAGRAM_LENGTH);
            for (int k = 0; k < counts[i]; k++) {
                assertEquals(next++, s.intAt(k));
            }
        }
    }

    @Test
    void shouldWaitForFullDatagramOrRemainderInsteadOfDribbling() {
        FakeChannel channel = startRank(1, 2);
        deliver(recv(1, MpiDatatype.INT, 400));
        channel.fromRank.offerInts(range(0, 100));
        dispatcher.doWork(transport);
        assertTrue(transport.take().isEmpty(), "100 of 359 is not worth a datagram");
        channel.fromRank.offerInts(range(100, 260));
        dispatcher.doWork(transport);
        assertEquals(359, single().header.datacount());
        dispatcher.doWork(transport);
        assertTrue(transport.take().isEmpty(), "1 of the remaining 41");
        channel.fromRank.offerInts(range(360, 40));
        dispatcher.doWork(transport);
        assertEquals(41, single().header.datacount());
        assertFalse(dispatcher.hasPendingWork());
    }

    @Test
    void shouldFlushWhatIsAvailableOnceTheRankHasExited() {
        FakeChannel channel = startRank(1, 2);
        deliver(recv(1, MpiDatatype.INT, 10));
        channel.fromRank.offerInts(1, 2, 3);
        local.last().exitWith(0);
        dispatcher.doWork(transport);
        List<Sent> replies = transport.take();
        assertEquals(2, replies.size());
        assertEquals(3, replies.get(0).header.datacount());
        assertEquals(V1Dispatcher.RECV_RANK_ENDED, replies.get(1).header.result());
        assertEquals(0, replies.get(1).header.datacount());
        assertFalse(dispatcher.hasPendingWork(), "nothing waits on an exited rank");
        assertEquals(RankInfo.State.EXITED, rankInfo(1).state());
    }

    @Test
    void shouldReplyTypeErrorWhenRingHoldsAnotherDatatype() {
        FakeChannel channel = startRank(1, 2);
        ByteBuffer chars = ByteBuffer.wrap(new byte[] {1, 2});
        channel.fromRank.offer(MpiDatatype.UNSIGNED_CHAR.code(), 2, chars, 0, 2);
        deliver(recv(1, MpiDatatype.INT, 1));
        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_RECV, reply.header.operation());
        assertEquals(MpiErrors.ERR_TYPE, reply.header.result());
        assertEquals(0, reply.header.datacount());
        assertFalse(dispatcher.hasPendingWork(), "mismatched request dropped");
        deliver(recv(1, MpiDatatype.UNSIGNED_CHAR, 2));
        Sent ok = single();
        assertEquals(2, ok.header.datacount());
        assertEquals(2, ok.payloadLength());
        assertEquals(1, counter(ProxyCounter.RECV_TYPE_MISMATCH));
    }

    // ------------------------------------------------------------------ TERMINATE

    @Test
    void shouldReplyToTerminateAfterExitWithStatusThenRemoveChannelAndJob() {
        FakeChannel channel = startRank(1, 2);
        long jobId = channel.jobId;
        deliver(terminate(1, 0));
        dispatcher.doWork(transport);
        assertTrue(transport.take().isEmpty(), "reply only after the exit");
        assertEquals(RankInfo.State.TERMINATING, rankInfo(1).state());

        local.last().exitWith(7);
        dispatcher.doWork(transport);
        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, reply.header.operation());
        assertEquals(MpiErrors.SUCCESS, reply.header.result());
        assertEquals(1, reply.header.rankId());
        assertEquals(7, reply.header.datacount());
        assertTrue(channel.closed);
        assertEquals(List.of(FakeChannelManager.key(jobId, 1)), channels.removed);
        assertEquals(List.of(jobId), channels.released);

        List<JobInfo> jobs = dispatcher.jobs();
        assertEquals(1, jobs.size(), "finished job kept in history");
        RankInfo finished = jobs.get(0).ranks().get(0);
        assertEquals(RankInfo.State.EXITED, finished.state());
        assertEquals(7, finished.exitStatus());

        deliver(sendInts(1, 1));
        assertEquals(1, counter(ProxyCounter.INVALID_RANK), "rank is gone");
    }

    @Test
    void shouldReleaseJobOnlyWhenItsLastRankIsTerminated() {
        FakeChannel one = startRank(1, 3);
        startRank(2, 3);
        assertEquals(2, local.processes.size());
        local.processes.get(0).exitWith(0);
        dispatcher.doWork(transport);
        deliver(terminate(1, 0));
        assertEquals(0, single().header.datacount(), "an exited rank is answered at once");
        assertTrue(channels.released.isEmpty());
        deliver(terminate(2, 0));
        local.processes.get(1).exitWith(3);
        dispatcher.doWork(transport);
        assertEquals(3, single().header.datacount());
        assertEquals(List.of(one.jobId), channels.released);
        assertEquals(1, counter(ProxyCounter.JOBS_FINISHED));
    }

    @Test
    void shouldStopRankWhenTerminateTimesOut() throws InterruptedException {
        create(new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofMillis(1), Duration.ofSeconds(3)));
        startRank(1, 2);
        FakeProcess process = local.last();
        deliver(terminate(1, 0));
        Await.until(() -> {
            dispatcher.doWork(transport);
            return !process.stops.isEmpty();
        }, "the rank stopped after the terminate timeout");
        assertEquals(List.of(Duration.ofSeconds(3)), process.stops);
        assertEquals(1, counter(ProxyCounter.TERMINATE_FORCED));
        process.exitWith(143);
        dispatcher.doWork(transport);
        assertEquals(143, single().header.datacount());
    }

    @Test
    void shouldReplyRankErrorToTerminateOfUnknownRank() {
        deliver(terminate(4, 0));
        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, reply.header.operation());
        assertEquals(MpiErrors.ERR_RANK, reply.header.result());
        assertEquals(4, reply.header.rankId());
        assertEquals(1, counter(ProxyCounter.TERMINATE_UNKNOWN));
    }

    @Test
    void shouldTerminateRankWhoseLaunchFailed() {
        local.failWith = "not executable";
        deliver(exec(1, 0, 2, "prog"));
        dispatcher.doWork(transport);
        transport.take();
        deliver(terminate(1, 0));
        Sent reply = single();
        assertEquals(MpiErrors.ERR_IO, reply.header.result());
        assertEquals(1, channels.released.size());
    }

    @Test
    void shouldTerminateRankWhoseLaunchIsStillRunning() {
        java.util.ArrayDeque<Runnable> launches = new java.util.ArrayDeque<>();
        dispatcher.close();
        dispatcher = new V1Dispatcher(channels,
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(10)),
                coreId -> local, transport::wakeup, launches::add, timer);
        deliver(exec(1, 0, 2, "prog"));
        deliver(sendInts(1, 5));
        deliver(terminate(1, 0));
        assertEquals(RankInfo.State.TERMINATING, rankInfo(1).state());
        launches.poll().run();
        dispatcher.doWork(transport);
        Sent execReply = single();
        assertEquals(V1HeaderDescriptor.OP_EXEC, execReply.header.operation());
        assertEquals(MpiErrors.SUCCESS, execReply.header.result());
        local.last().exitWith(0);
        dispatcher.doWork(transport);
        Sent reply = single();
        assertEquals(V1HeaderDescriptor.OP_TERMINATE, reply.header.operation());
        assertEquals(1, channels.released.size());
    }

    // ------------------------------------------------------------------ bad input

    @Test
    void shouldCountEveryBadInputKindAndKeepServing() {
        FakeChannel channel = startRank(1, 2);
        deliver(ByteBuffer.allocateDirect(11));
        deliver(V1Datagrams.header(9, 1, 0, INT, 0, 0));
        deliver(V1Datagrams.header(V1HeaderDescriptor.OP_SEND, 1, 0, MpiDatatype.DOUBLE.code(), 1, 8));
        deliver(V1Datagrams.header(V1HeaderDescriptor.OP_RECV, 1, 0, 99, 1, 0));
        deliver(V1Datagrams.header(V1HeaderDescriptor.OP_SEND, 1, 0, INT, 3, 8));
        deliver(V1Datagrams.header(V1HeaderDescriptor.OP_SEND, 1, 0, INT, 0xffffffffL, 8));
        deliver(sendInts(2, 1));
        deliver(recv(5, MpiDatatype.INT, 1));
        deliver(ByteBuffer.allocateDirect(V1HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1));

        assertEquals(1, counter(ProxyCounter.INVALID_SHORT));
        assertEquals(1, counter(ProxyCounter.INVALID_OP));
        assertEquals(2, counter(ProxyCounter.INVALID_DATATYPE));
        assertEquals(2, counter(ProxyCounter.INVALID_COUNT));
        assertEquals(2, counter(ProxyCounter.INVALID_RANK));
        assertEquals(1, counter(ProxyCounter.INVALID_OVERSIZE));
        assertEquals(0, counter(ProxyCounter.ERRORS));
        assertTrue(transport.take().isEmpty(), "bad datagrams get no reply");
        assertTrue(channel.toRank.isEmpty());

        deliver(sendInts(1, 42));
        assertEquals(List.of(42), boxed(channel.toRank.pollInts(1)));
        assertEquals(11, counter(ProxyCounter.DATAGRAMS_IN));
    }

    @Test
    void shouldKeepTwoSourcesAsSeparateJobs() {
        FakeChannel a = startRank(1, 2, HOST);
        FakeChannel b = startRank(1, 3, OTHER_HOST);
        assertNotEquals(a.jobId, b.jobId);
        assertEquals(2, dispatcher.jobs().size());
        deliver(sendInts(1, 11), HOST);
        deliver(sendInts(1, 22), OTHER_HOST);
        assertEquals(List.of(11), boxed(a.toRank.pollInts(2)));
        assertEquals(List.of(22), boxed(b.toRank.pollInts(2)));
        deliver(sendInts(2, 1), OTHER_HOST);
        assertEquals(1, counter(ProxyCounter.INVALID_RANK));
        b.fromRank.offerInts(5);
        deliver(recv(1, MpiDatatype.INT, 1), OTHER_HOST);
        assertEquals(OTHER_HOST, single().target);
    }

    @Test
    void shouldStopRanksAndRemoveEverythingOnClose() {
        FakeChannel channel = startRank(1, 2);
        FakeProcess process = local.last();
        dispatcher.close();
        assertEquals(List.of(Duration.ofSeconds(10)), process.stops);
        assertTrue(channel.closed);
        assertEquals(List.of(channel.jobId), channels.released);
        deliver(sendInts(1, 1));
        assertEquals(0, dispatcher.doWork(transport));
        assertFalse(dispatcher.hasPendingWork());
    }

    @Test
    void shouldCountFailedReplies() {
        transport.fail = true;
        deliver(terminate(1, 0));
        assertEquals(1, counter(ProxyCounter.REPLIES_FAILED));
        assertNull(rankInfo(1));
        assertNotNull(dispatcher.counters().get("replies.failed"));
    }

    private static List<Integer> boxed(int[] values) {
        return java.util.Arrays.stream(values).boxed().collect(java.util.stream.Collectors.toList());
    }
}
