package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.RankOutputListener;

/** Lines with no listener wait, in order, for the next one; a full hold drops and counts; a busy one slows the writer. */
class OutputListenersTest {

    private static final class Recording implements RankOutputListener {
        final List<String> seen = new CopyOnWriteArrayList<>();

        @Override
        public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
            seen.add(rankId + " " + stream + " " + text);
        }

        @Override
        public void onEnd(long jobId, int rankId, Stream stream) {
            seen.add(rankId + " " + stream + " end");
        }
    }

    @Test
    void shouldGiveTheLinesOfAGapWithoutListenerToTheNextInOrderBeforeNewOnes() {
        OutputListeners listeners = new OutputListeners();
        Recording old = new Recording();
        listeners.add(old);
        listeners.onOutput(1, 1, RankOutputListener.Stream.STDOUT, "a", false);
        listeners.remove(old);
        listeners.onOutput(1, 1, RankOutputListener.Stream.STDOUT, "b", false);
        listeners.onOutput(1, 2, RankOutputListener.Stream.STDERR, "c", false);
        listeners.onEnd(1, 1, RankOutputListener.Stream.STDOUT);

        Recording next = new Recording();
        listeners.add(next);
        listeners.onOutput(1, 2, RankOutputListener.Stream.STDERR, "d", false);

        assertEquals(List.of("1 STDOUT a"), old.seen);
        assertEquals(List.of("1 STDOUT b", "2 STDERR c", "1 STDOUT end", "2 STDERR d"), next.seen);
        assertEquals(0, listeners.dropped());
    }

    @Test
    void shouldDropAndCountWhatIsBeyondTheHold() {
        OutputListeners listeners = new OutputListeners();
        for (int i = 0; i < OutputListeners.MAX_HELD + 5; i++) {
            listeners.onOutput(1, 1, RankOutputListener.Stream.STDOUT, "line " + i, false);
        }
        Recording next = new Recording();
        listeners.add(next);
        assertEquals(OutputListeners.MAX_HELD, next.seen.size());
        assertEquals("1 STDOUT line 0", next.seen.get(0));
        assertEquals(5, listeners.dropped());
    }

    @Test
    void shouldMakeAWriterWaitWhileHeldLinesAreGivenToASlowListener() throws Exception {
        OutputListeners listeners = new OutputListeners();
        listeners.onOutput(1, 1, RankOutputListener.Stream.STDOUT, "held", false);
        CountDownLatch inListener = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Recording seen = new Recording();
        RankOutputListener slow = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                inListener.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                seen.onOutput(jobId, rankId, stream, text, partial);
            }
        };
        Thread adder = new Thread(() -> listeners.add(slow));
        adder.start();
        assertTrue(inListener.await(60, TimeUnit.SECONDS));
        CountDownLatch written = new CountDownLatch(1);
        Thread writer = new Thread(() -> {
            listeners.onOutput(1, 1, RankOutputListener.Stream.STDOUT, "next", false);
            written.countDown();
        });
        writer.start();
        // the writer either waits for the held line to be given, or (wrongly) passes on
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (writer.getState() != Thread.State.WAITING && writer.getState() != Thread.State.TERMINATED) {
            assertTrue(System.nanoTime() < deadline, "the writer neither waits nor ends");
            Thread.sleep(1);
        }
        assertEquals(1, written.getCount(), "the writer waits while the held line is given");
        release.countDown();
        assertTrue(written.await(60, TimeUnit.SECONDS));
        adder.join(60_000);
        assertEquals(List.of("1 STDOUT held", "1 STDOUT next"), seen.seen);
    }
}
