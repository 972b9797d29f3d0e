package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.RankOutputListener.Stream;
import org.mpiproxy.protocol.V2HeaderDescriptor;

class V2OutputStreamsTest {

    private static final long JOB = 0x77L;
    private static final int OUT = V2HeaderDescriptor.STREAM_STDOUT;
    private static final int ERR = V2HeaderDescriptor.STREAM_STDERR;

    record Sent(int rank, int stream, long sequence, long dropped, boolean endOfLine, boolean partial, String text) {
    }

    private final List<Sent> sent = new ArrayList<>();
    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final V2OutputSender sender = (jobId, rankId, stream, sequence, dropped, endOfLine, partial, text,
            offset, length) -> sent.add(new Sent(rankId, stream, sequence, dropped, endOfLine, partial,
            new String(text, offset, length, StandardCharsets.UTF_8)));

    private V2OutputStreams streams(int maxPayload, long bufferBytes, long stallNanos) {
        return new V2OutputStreams(maxPayload, () -> { }, clock::get, bufferBytes, stallNanos);
    }

    @Test
    void shouldSendEachStreamInOrderWithItsOwnSequenceNumbersAndIgnoreOtherJobs() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        s.onOutput(JOB, 1, Stream.STDOUT, "a", false);
        s.onOutput(JOB, 1, Stream.STDERR, "b", false);
        s.onOutput(JOB, 1, Stream.STDOUT, "c", true);
        s.onOutput(JOB + 1, 1, Stream.STDOUT, "other job", false);
        s.onOutput(JOB, 2, Stream.STDOUT, "rank not streamed", false);
        assertEquals(3, s.pump(sender));
        assertTrue(sent.contains(new Sent(1, OUT, 0, 0, true, false, "a")), sent.toString());
        assertTrue(sent.contains(new Sent(1, OUT, 1, 0, true, true, "c")), sent.toString());
        assertTrue(sent.contains(new Sent(1, ERR, 0, 0, true, false, "b")), sent.toString());
        assertEquals(0, s.pump(sender));
        assertEquals(3L, s.counters().get("v2.output.lines"));
    }

    @Test
    void shouldPassLinesThatReachOldRevisionsOnToEveryLaterOneInOrder() {
        V2OutputStreams first = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        first.open(JOB, 1);
        first.onOutput(JOB, 1, Stream.STDOUT, "0", false);
        List<Map<String, Object>> exported = first.handOver();
        // a launcher updated meanwhile still calls the first revision for its rank
        first.onOutput(JOB, 1, Stream.STDOUT, "1", false);
        first.onOutput(JOB + 1, 1, Stream.STDOUT, "a job that was not handed over", false);

        V2OutputStreams second = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        second.adopt(exported);
        second.adoptLate(first.lateLines());
        // all of this rank's lines take that way (its launcher never calls a later revision)
        first.onOutput(JOB, 1, Stream.STDOUT, "2", false);
        first.onOutput(JOB, 1, Stream.STDOUT, "3", false);
        sent.clear();
        second.pump(sender);
        // the oldest fragment not acknowledged again at once, then the late lines in order
        assertEquals(List.of("0", "1", "2", "3"), sent.stream().map(Sent::text).toList());
        assertEquals(List.of(0L, 1L, 2L, 3L), sent.stream().map(Sent::sequence).toList());
        List<Map<String, Object>> again = second.handOver();

        V2OutputStreams third = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        third.adopt(again);
        third.adoptLate(second.lateLines());
        first.onOutput(JOB, 1, Stream.STDOUT, "4", false);
        first.onEnd(JOB, 1, Stream.STDOUT);
        sent.clear();
        third.pump(sender);
        third.pump(sender);
        assertEquals(List.of("0", "4"), sent.stream().map(Sent::text).toList(),
                "the oldest fragment again (recovery sends the rest one per acknowledgement), then the late line");
        assertEquals(List.of(0L, 4L), sent.stream().map(Sent::sequence).toList());
        assertTrue(third.onAck(JOB, 1, OUT, 5));
        assertTrue(third.drained(JOB, 1), "the end that reached the first revision ended the stream");
    }

    @Test
    void shouldTakeOverStreamsSavedToAFileForTheNextStartOfTheNode() throws Exception {
        V2OutputStreams first = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        first.open(JOB, 1);
        first.onOutput(JOB, 1, Stream.STDOUT, "0", false);
        first.onOutput(JOB, 1, Stream.STDOUT, "1", true);
        first.pump(sender);
        first.onOutput(JOB, 1, Stream.STDERR, "e", false);
        List<Map<String, Object>> exported = first.handOver();
        // through the state file's format, as a restart of the node does
        StateCodec codec = new StateCodec();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
            codec.write(out, exported, "output");
        }
        assertEquals(java.util.Set.of(), codec.dropped(), "every value of the output streams is kept");
        Object read = new StateCodec().read(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray())));

        V2OutputStreams second = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        assertEquals(List.of(), second.adopt((List<?>) read), "no job's streams lost");
        sent.clear();
        second.pump(sender);
        second.pump(sender);
        assertTrue(sent.stream().anyMatch(s -> s.text().equals("0") && s.sequence() == 0), sent.toString());
        assertTrue(sent.stream().anyMatch(s -> s.text().equals("e")), "the line not sent yet goes out: " + sent);
    }

    @Test
    void shouldCutALineLongerThanThePayloadIntoFragmentsMarkingOnlyTheLast() {
        V2OutputStreams s = streams(10, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 3);
        s.onOutput(JOB, 3, Stream.STDOUT, "0123456789abcdefghijKLMNO", false);
        s.onOutput(JOB, 3, Stream.STDOUT, "", false);
        s.pump(sender);
        assertEquals(List.of(new Sent(3, OUT, 0, 0, false, false, "0123456789"),
                new Sent(3, OUT, 1, 0, false, false, "abcdefghij"), new Sent(3, OUT, 2, 0, true, false, "KLMNO"),
                new Sent(3, OUT, 3, 0, true, false, "")), sent);
    }

    @Test
    void shouldResendTheOldestFragmentAfterTheTimeoutThenEachMissingOneAsAcknowledgementsAdvance() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        for (int i = 0; i < 4; i++) {
            s.onOutput(JOB, 1, Stream.STDOUT, "l" + i, false);
        }
        s.pump(sender);
        assertEquals(4, sent.size());
        sent.clear();
        clock.addAndGet(V2OutputStreams.INITIAL_RTO_NANOS - 1);
        assertEquals(0, s.pump(sender));
        clock.addAndGet(1);
        assertEquals(1, s.pump(sender));
        assertEquals(List.of(new Sent(1, OUT, 0, 0, true, false, "l0")), sent);
        sent.clear();
        assertTrue(s.onAck(JOB, 1, OUT, 2));
        s.pump(sender);
        assertEquals(List.of(new Sent(1, OUT, 2, 0, true, false, "l2")), sent);
        sent.clear();
        assertTrue(s.onAck(JOB, 1, OUT, 4));
        assertEquals(0, s.pump(sender));
        assertFalse(s.hasPendingWork());
        assertEquals(2L, s.counters().get("v2.output.resent"));
    }

    @Test
    void shouldRefuseAnAcknowledgementBeyondWhatWasSentOrOfAnUnknownStream() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        s.onOutput(JOB, 1, Stream.STDOUT, "x", false);
        s.pump(sender);
        assertFalse(s.onAck(JOB, 1, OUT, 2));
        assertFalse(s.onAck(JOB, 1, 4, 0));
        assertFalse(s.onAck(JOB, 9, OUT, 0));
        assertFalse(s.onAck(JOB + 1, 1, OUT, 0));
        assertTrue(s.onAck(JOB, 1, OUT, 1));
    }

    @Test
    void shouldMakeTheWriterWaitWhileTheJobBufferIsFullUntilTheHostAcknowledges() throws Exception {
        // 3 lines of 36 + 64 bytes fill 300 bytes; the fourth waits
        V2OutputStreams s = streams(100, 300, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        String line = "x".repeat(36);
        CountDownLatch fourthTaken = new CountDownLatch(1);
        CountDownLatch threeTaken = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            for (int i = 0; i < 3; i++) {
                s.onOutput(JOB, 1, Stream.STDOUT, line, false);
            }
            threeTaken.countDown();
            s.onOutput(JOB, 1, Stream.STDOUT, line, false);
            fourthTaken.countDown();
        });
        writer.setDaemon(true);
        writer.start();
        assertTrue(threeTaken.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
        awaitParkedOrDone(writer, fourthTaken);
        assertEquals(1, fourthTaken.getCount(), "the writer must wait for room");
        s.pump(sender);
        assertEquals(3, sent.size());
        assertTrue(s.onAck(JOB, 1, OUT, 3));
        assertTrue(fourthTaken.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
        s.pump(sender);
        assertEquals(new Sent(1, OUT, 3, 0, true, false, line), sent.get(3));
        assertEquals(0L, s.counters().get("v2.output.dropped"));
    }

    @Test
    void shouldDropWaitingLinesOfASilentHostAfterTheStallAndTellTheCountWithTheNextLine() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(5));
        s.open(JOB, 1);
        int lines = V2OutputStreams.WINDOW + 6;
        for (int i = 0; i < lines; i++) {
            s.onOutput(JOB, 1, Stream.STDOUT, "l" + i, false);
        }
        s.pump(sender);
        assertEquals(V2OutputStreams.WINDOW, sent.size());
        assertFalse(s.drained(JOB, 1));
        clock.addAndGet(TimeUnit.SECONDS.toNanos(6));
        s.pump(sender);
        assertEquals(6L, s.counters().get("v2.output.dropped"));
        assertTrue(s.drained(JOB, 1), "a stalled host does not hold TERMINATE");
        s.onOutput(JOB, 1, Stream.STDOUT, "dropped too", false);
        assertEquals(7L, s.counters().get("v2.output.dropped"));
        assertTrue(s.onAck(JOB, 1, OUT, V2OutputStreams.WINDOW));
        sent.clear();
        s.onOutput(JOB, 1, Stream.STDOUT, "after", false);
        s.pump(sender);
        assertEquals(List.of(new Sent(1, OUT, V2OutputStreams.WINDOW, 7, true, false, "after")), sent);
    }

    @Test
    void shouldGiveUpTheOutputOfAStoppedJobAfterTheShorterWaitOnly() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        s.onOutput(JOB, 1, Stream.STDOUT, "to a launcher that is gone", false);
        s.pump(sender);
        AtomicBoolean done = new AtomicBoolean();
        s.whenDrained(JOB, 1, () -> done.set(true));
        clock.addAndGet(TimeUnit.SECONDS.toNanos(3));
        s.pump(sender);
        assertFalse(done.get(), "3 s of silence are less than the stall of 30 s");
        s.hurry(JOB, TimeUnit.SECONDS.toNanos(2));
        s.hurry(JOB + 1, TimeUnit.SECONDS.toNanos(2));
        s.pump(sender);
        assertTrue(done.get(), "stopped: 2 s of silence are enough");
        assertEquals(1L, s.counters().get("v2.output.stalls"));
    }

    @Test
    void shouldLoseNothingOfAStoppedJobWhoseHostStillAcknowledges() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        s.hurry(JOB, TimeUnit.SECONDS.toNanos(2));
        for (int i = 0; i < 3; i++) {
            s.onOutput(JOB, 1, Stream.STDOUT, "line " + i, false);
            s.pump(sender);
            clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
            assertTrue(s.onAck(JOB, 1, OUT, i + 1));
            s.pump(sender);
        }
        assertEquals(0L, s.counters().get("v2.output.dropped"));
        assertEquals(0L, s.counters().get("v2.output.stalls"));
        assertEquals(3, sent.size());
    }

    @Test
    void shouldRunTheContinuationOnlyWhenBothStreamsEndedAndEverythingWasAcknowledged() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        assertTrue(s.drained(JOB, 1), "nothing written yet");
        s.onOutput(JOB, 1, Stream.STDOUT, "last words", false);
        AtomicBoolean done = new AtomicBoolean();
        s.whenDrained(JOB, 1, () -> done.set(true));
        s.pump(sender);
        s.onEnd(JOB, 1, Stream.STDOUT);
        s.onEnd(JOB, 1, Stream.STDERR);
        s.pump(sender);
        assertFalse(done.get(), "the line is not acknowledged yet");
        assertTrue(s.onAck(JOB, 1, OUT, 1));
        s.pump(sender);
        assertTrue(done.get());
        AtomicBoolean unstreamed = new AtomicBoolean();
        s.whenDrained(JOB, 5, () -> unstreamed.set(true));
        assertTrue(unstreamed.get(), "a rank without OUTPUT does not wait");
    }

    @Test
    void shouldReleaseWaitingWritersWhenTheJobCloses() throws Exception {
        V2OutputStreams s = streams(100, 100, TimeUnit.SECONDS.toNanos(30));
        s.open(JOB, 1);
        s.onOutput(JOB, 1, Stream.STDOUT, "x".repeat(30), false);
        CountDownLatch returned = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            s.onOutput(JOB, 1, Stream.STDOUT, "x".repeat(30), false);
            returned.countDown();
        });
        writer.setDaemon(true);
        writer.start();
        awaitParkedOrDone(writer, returned);
        assertEquals(1, returned.getCount(), "the writer waits for room");
        s.close(JOB);
        assertTrue(returned.await(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
    }

    /** Waits until {@code writer} waits (for room, the only wait on its way) or has got past it. */
    private static void awaitParkedOrDone(Thread writer, CountDownLatch past) {
        Await.until(() -> past.getCount() == 0 || writer.getState() == Thread.State.WAITING
                || writer.getState() == Thread.State.TIMED_WAITING, "the writer waits or gets through");
    }

    @Test
    void shouldStreamARanksPmiLinesOnTheirOwnStreamWhichNeverHoldsUpTheRanksEnd() {
        V2OutputStreams s = streams(100, 1 << 20, TimeUnit.SECONDS.toNanos(30));
        assertFalse(s.onPmiLine(JOB, 1, "cmd=barrier_in"), "a rank whose output is not streamed");
        s.open(JOB, 1);
        assertTrue(s.onPmiLine(JOB, 1, "cmd=put key=k value=v"));
        assertEquals(1, s.pump(sender));
        assertEquals(new Sent(1, 3, 0, 0, true, false, "cmd=put key=k value=v"), sent.get(0));
        s.onEnd(JOB, 1, Stream.STDOUT);
        s.onEnd(JOB, 1, Stream.STDERR);
        assertFalse(s.drained(JOB, 1), "the PMI line is not acknowledged yet");
        assertTrue(s.onAck(JOB, 1, 3, 1));
        assertTrue(s.drained(JOB, 1), "the PMI stream has no end of its own to wait for");
    }
}
