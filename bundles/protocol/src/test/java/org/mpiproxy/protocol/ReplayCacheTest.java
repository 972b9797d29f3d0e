package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;

class ReplayCacheTest {

    @Test
    void shouldForgetNoncesAfterTheRetention() {
        ReplayCache c = new ReplayCache(4, 100);
        assertEquals(ReplayCache.ADDED, c.add(1, 0));
        assertEquals(ReplayCache.REPLAYED, c.add(1, 99));
        assertEquals(ReplayCache.ADDED, c.add(1, 100));
    }

    @Test
    void shouldRefuseWhenFullOfUnexpiredNonces() {
        ReplayCache c = new ReplayCache(2, 100);
        assertEquals(ReplayCache.ADDED, c.add(1, 0));
        assertEquals(ReplayCache.ADDED, c.add(2, 10));
        assertEquals(ReplayCache.FULL, c.add(3, 20));
        assertEquals(ReplayCache.ADDED, c.add(3, 100));
        assertEquals(false, c.contains(1));
        assertEquals(true, c.contains(2));
    }

    @Test
    void shouldAgreeWithAReferenceSetUnderRandomTraffic() {
        Random random = new Random(5);
        ReplayCache c = new ReplayCache(64, 50);
        Set<Long> live = new HashSet<>();
        ArrayDeque<long[]> order = new ArrayDeque<>();
        long now = 0;
        for (int i = 0; i < 200_000; i++) {
            now += random.nextInt(3);
            long nonce = random.nextInt(300) - 150L;
            while (!order.isEmpty() && now - order.peekFirst()[1] >= 50) {
                live.remove(order.removeFirst()[0]);
            }
            int expected = live.contains(nonce) ? ReplayCache.REPLAYED
                    : live.size() == 64 ? ReplayCache.FULL : ReplayCache.ADDED;
            assertEquals(expected, c.add(nonce, now), "step " + i);
            if (expected == ReplayCache.ADDED) {
                live.add(nonce);
                order.addLast(new long[] {nonce, now});
            }
            assertEquals(live.size(), c.size());
        }
    }
}
