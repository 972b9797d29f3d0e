package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

class BackoffIdlerTest {

    @Test
    void shouldSpinThenYieldThenParkWithGrowingTimesUpToTheMaximum() {
        BackoffIdler idler = new BackoffIdler(3, 2, 1_000L, 16_000L);
        for (int i = 0; i < 5; i++) {
            idler.idle(0);
            assertEquals(1_000L, idler.nextParkNanos(), "no park during spins and yields, step " + i);
        }
        long[] expected = {2_000L, 4_000L, 8_000L, 16_000L, 16_000L, 16_000L};
        for (long next : expected) {
            idler.idle(0);
            assertEquals(next, idler.nextParkNanos());
        }
    }

    @Test
    void shouldYieldForAtLeastTheMinimumYieldTimeBeforeParking() {
        long minYield = 20_000_000L;
        AtomicLong clock = new AtomicLong();
        BackoffIdler idler = new BackoffIdler(clock::get, 2, 3, minYield, 1_000L, 8_000L, 0L, 8_000L, 0L, 8_000L);
        for (int round = 0; round < 2; round++) {
            // however often it idles, it spins and yields while the clock stands within the minimum yield time
            for (int i = 0; i < 1000; i++) {
                idler.idle(0);
            }
            assertEquals(1_000L, idler.nextParkNanos(), "parked before yielding for 20 ms");
            clock.addAndGet(minYield - 1);
            idler.idle(0);
            assertEquals(1_000L, idler.nextParkNanos(), "parked a nanosecond early");
            clock.addAndGet(1);
            idler.idle(0);
            assertEquals(2_000L, idler.nextParkNanos(), "the first park, after 20 ms of yielding");
            idler.idle(1); // work: the next wait yields for the whole time again
        }
    }

    @Test
    void shouldResetWhenWorkWasDone() {
        BackoffIdler idler = new BackoffIdler(0, 0, 1_000L, 8_000L);
        idler.idle();
        idler.idle();
        assertEquals(4_000L, idler.nextParkNanos());
        idler.idle(3);
        assertEquals(1_000L, idler.nextParkNanos());
        idler.idle(0);
        assertEquals(2_000L, idler.nextParkNanos());
        idler.reset();
        assertEquals(1_000L, idler.nextParkNanos());
    }

    @Test
    void shouldUseOneMillisecondAsDefaultMaximum() {
        BackoffIdler idler = new BackoffIdler();
        assertEquals(1_000_000L, idler.maxParkNanos());
        assertEquals(1_000L, idler.nextParkNanos());
    }

    @Test
    void shouldGrowBeyondTheMaximumOnlyAfterParkingLongWithoutWork() {
        // parks 1, 2, 4, 4 us (11 us in total), then may grow to 32 us
        BackoffIdler idler = new BackoffIdler(0, 0, 0L, 1_000L, 4_000L, 10_000L, 32_000L);
        long[] expected = {2_000L, 4_000L, 4_000L, 8_000L, 16_000L, 32_000L, 32_000L};
        for (long next : expected) {
            idler.idle(0);
            assertEquals(next, idler.nextParkNanos());
        }
        idler.idle(1);
        assertEquals(1_000L, idler.nextParkNanos(), "work ends the deep phase");
        for (int i = 0; i < 3; i++) {
            idler.idle(0);
        }
        assertEquals(4_000L, idler.nextParkNanos(), "the long wait counts again from the reset");
        assertEquals(32_000L, idler.deepMaxParkNanos());
    }

    @Test
    void shouldGrowOnceMoreAfterTheLongWait() {
        // parks of at most 4 us; after 10 us parked at most 32 us; after 100 us parked at most 64 us
        BackoffIdler idler = new BackoffIdler(0, 0, 0L, 1_000L, 4_000L, 10_000L, 32_000L, 100_000L, 64_000L);
        long[] expected = {2_000L, 4_000L, 4_000L, 8_000L, 16_000L, 32_000L, 32_000L, 32_000L, 64_000L, 64_000L};
        for (long next : expected) {
            idler.idle(0);
            assertEquals(next, idler.nextParkNanos());
        }
        assertEquals(64_000L, idler.longMaxParkNanos());
        idler.idle(1);
        assertEquals(1_000L, idler.nextParkNanos(), "work ends the long phase");
        // without a long phase (seven limits) the deep maximum stays the last word
        BackoffIdler twoPhases = new BackoffIdler(0, 0, 0L, 1_000L, 4_000L, 10_000L, 32_000L);
        assertEquals(32_000L, twoPhases.longMaxParkNanos());
        assertThrows(IllegalArgumentException.class,
            () -> new BackoffIdler(0, 0, 0L, 1_000L, 4_000L, 10_000L, 32_000L, 9_000L, 64_000L));
        assertThrows(IllegalArgumentException.class,
            () -> new BackoffIdler(0, 0, 0L, 1_000L, 4_000L, 10_000L, 32_000L, 100_000L, 16_000L));
    }

    @Test
    void shouldParkAtMostEightMillisecondsAfterFiftyMillisecondsAndSixteenAfterOneSecondByDefault() {
        BackoffIdler idler = new BackoffIdler();
        assertEquals(BackoffIdler.DEFAULT_DEEP_MAX_PARK_NANOS, idler.deepMaxParkNanos());
        assertEquals(BackoffIdler.DEFAULT_LONG_MAX_PARK_NANOS, idler.longMaxParkNanos());
        while (idler.nextParkNanos() == BackoffIdler.DEFAULT_MIN_PARK_NANOS) {
            idler.idle(0); // spins, yields, then the first park of 1 us
        }
        long parked = BackoffIdler.DEFAULT_MIN_PARK_NANOS;
        boolean sawDeepMaximum = false;
        while (idler.nextParkNanos() < BackoffIdler.DEFAULT_LONG_MAX_PARK_NANOS) {
            long next = idler.nextParkNanos();
            assertTrue(next <= BackoffIdler.DEFAULT_MAX_PARK_NANOS || parked >= BackoffIdler.DEFAULT_DEEP_IDLE_AFTER_NANOS,
                "park of " + next + " ns after " + parked + " ns");
            assertTrue(next <= BackoffIdler.DEFAULT_DEEP_MAX_PARK_NANOS
                || parked >= BackoffIdler.DEFAULT_LONG_IDLE_AFTER_NANOS, "park of " + next + " ns after " + parked + " ns");
            sawDeepMaximum |= next == BackoffIdler.DEFAULT_DEEP_MAX_PARK_NANOS;
            idler.idle(0);
            parked += next;
            assertTrue(parked < 3_000_000_000L, "reaches the long maximum");
        }
        assertTrue(sawDeepMaximum, "8 ms parks between 50 ms and 1 s");
        assertTrue(parked >= BackoffIdler.DEFAULT_LONG_IDLE_AFTER_NANOS);
        idler.idle(0);
        assertEquals(BackoffIdler.DEFAULT_LONG_MAX_PARK_NANOS, idler.nextParkNanos());
    }

    @Test
    void shouldStayAtTheMaximumWithoutOverflowWhenItIsHuge() {
        BackoffIdler idler = new BackoffIdler(0, 0, 1L, Long.MAX_VALUE - 1);
        for (int i = 0; i < 20; i++) {
            idler.idle(0); // parks 1 ns, 2 ns, ... 512 us: about 1 ms in total
        }
        assertEquals(1L << 20, idler.nextParkNanos());
        assertTrue(idler.nextParkNanos() > 0);
    }

    @Test
    void shouldRejectInvalidLimits() {
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(-1, 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, -1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, 0, 10, 5));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(10L));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, 0, 0, 1, 8, 10, 4));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, 0, 0, 1, 8, -1, 8));
        assertThrows(IllegalArgumentException.class, () -> new BackoffIdler(0, 0, -1, 1, 8, 0, 8));
    }
}
