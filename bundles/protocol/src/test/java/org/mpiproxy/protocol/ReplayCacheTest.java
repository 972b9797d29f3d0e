package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;

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

    @Test
    void shouldRefuseASourceOverItsShareAndServeTheOthers() {
        ReplayCache c = new ReplayCache(8, 3, 100);
        for (int i = 0; i < 3; i++) {
            assertEquals(ReplayCache.ADDED, c.add(i, 7, 0));
        }
        assertEquals(ReplayCache.SOURCE_FULL, c.add(3, 7, 1), "source 7 holds its share");
        assertEquals(ReplayCache.REPLAYED, c.add(1, 9, 1), "a replay is a replay, whatever its source");
        assertEquals(ReplayCache.ADDED, c.add(3, 9, 1), "another source is served");
        assertEquals(3, c.sizeOf(7));
        assertEquals(1, c.sizeOf(9));
        assertEquals(false, c.contains(4));
    }

    @Test
    void shouldGiveASourceItsShareBackOnceItsNoncesExpire() {
        ReplayCache c = new ReplayCache(8, 2, 100);
        assertEquals(ReplayCache.ADDED, c.add(1, 7, 0));
        assertEquals(ReplayCache.ADDED, c.add(2, 7, 50));
        assertEquals(ReplayCache.SOURCE_FULL, c.add(3, 7, 99));
        assertEquals(ReplayCache.ADDED, c.add(3, 7, 100), "nonce 1 expired at 100");
        assertEquals(ReplayCache.SOURCE_FULL, c.add(4, 7, 149));
        assertEquals(ReplayCache.ADDED, c.add(4, 7, 150));
        assertEquals(2, c.sizeOf(7));
    }

    @Test
    void shouldRefuseEverySourceWhenManySourcesFillTheCache() {
        ReplayCache c = new ReplayCache(4, 2, 100);
        assertEquals(ReplayCache.ADDED, c.add(1, 7, 0));
        assertEquals(ReplayCache.ADDED, c.add(2, 7, 0));
        assertEquals(ReplayCache.ADDED, c.add(3, 8, 0));
        assertEquals(ReplayCache.ADDED, c.add(4, 8, 0));
        assertEquals(ReplayCache.FULL, c.add(5, 9, 0));
        assertEquals(ReplayCache.ADDED, c.add(5, 9, 100));
    }

    @Test
    void shouldRejectAShareBelowOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ReplayCache(8, 0, 100));
        assertEquals("sourceShare=0 must be >= 1", e.getMessage());
        assertEquals(8, new ReplayCache(8, 100, 100).sourceShare(), "a share above the capacity is the capacity");
    }

    @Test
    void shouldCountAnIpv6HostByItsPrefixAndAnIpv4HostByItsAddress() throws UnknownHostException {
        long a = ReplayCache.sourceOf(InetAddress.getByName("2001:db8:1:2::1"));
        assertEquals(a, ReplayCache.sourceOf(InetAddress.getByName("2001:db8:1:2:ffff::9")));
        assertNotEquals(a, ReplayCache.sourceOf(InetAddress.getByName("2001:db8:1:3::1")));
        long v4 = ReplayCache.sourceOf(InetAddress.getByName("10.0.0.1"));
        assertEquals(0x1_0a00_0001L, v4);
        assertNotEquals(v4, ReplayCache.sourceOf(InetAddress.getByName("10.0.0.2")));
        assertNotEquals(ReplayCache.NO_SOURCE, ReplayCache.sourceOf(InetAddress.getByName("0.0.0.0")));
        assertEquals(ReplayCache.NO_SOURCE, ReplayCache.sourceOf(null));
    }

    @Test
    void shouldAgreeWithAReferenceModelOfSharesUnderRandomTrafficAndStayWithinBothBounds() {
        Random random = new Random(11);
        int capacity = 64;
        int share = 16;
        ReplayCache c = new ReplayCache(capacity, share, 50);
        java.util.Map<Long, Long> live = new java.util.HashMap<>(); // nonce -> source
        ArrayDeque<long[]> order = new ArrayDeque<>();
        long now = 0;
        for (int i = 0; i < 200_000; i++) {
            now += random.nextInt(3);
            long nonce = random.nextInt(400) - 200L;
            // one greedy source sends most requests; seven others share the rest
            long source = random.nextInt(4) == 0 ? 1 + random.nextInt(7) : 0;
            while (!order.isEmpty() && now - order.peekFirst()[2] >= 50) {
                live.remove(order.removeFirst()[0]);
            }
            long held = live.values().stream().filter(s -> s == source).count();
            int expected = live.containsKey(nonce) ? ReplayCache.REPLAYED
                    : live.size() == capacity ? ReplayCache.FULL
                    : held >= share ? ReplayCache.SOURCE_FULL : ReplayCache.ADDED;
            assertEquals(expected, c.add(nonce, source, now), "step " + i);
            if (expected == ReplayCache.ADDED) {
                live.put(nonce, source);
                order.addLast(new long[] {nonce, source, now});
            }
            assertEquals(live.size(), c.size());
            assertTrue(c.size() <= capacity && c.sizeOf(source) <= share, "step " + i);
        }
    }
}
