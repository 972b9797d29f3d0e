package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    }
}
