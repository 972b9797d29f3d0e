package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class LongMapTest {

    @Test
    void shouldBehaveAsAHashMapUnderRandomPutsAndRemoves() {
        LongMap<String> map = new LongMap<>();
        Map<Long, String> reference = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 200_000; step++) {
            // a small key space makes probe runs collide and removals shift entries back
            long key = random.nextInt(4) == 0 ? random.nextLong() : random.nextInt(300) * 0x1_0000_0000L;
            switch (random.nextInt(3)) {
                case 0 -> assertEquals(reference.put(key, "v" + step), map.put(key, "v" + step), "put " + key);
                case 1 -> assertEquals(reference.remove(key), map.remove(key), "remove " + key);
                default -> assertEquals(reference.get(key), map.get(key), "get " + key);
            }
            assertEquals(reference.size(), map.size());
        }
        for (Map.Entry<Long, String> e : reference.entrySet()) {
            assertEquals(e.getValue(), map.get(e.getKey()));
        }
        assertEquals(reference.values().stream().sorted().toList(), map.values().stream().sorted().toList());
    }

    @Test
    void shouldRemoveWhatThePredicateAcceptsAndKeepTheRestReachable() {
        LongMap<Long> map = new LongMap<>();
        for (long k = 1; k <= 1000; k++) {
            map.put(k * 31, k);
        }
        map.removeIf(v -> v % 3 == 0);
        assertEquals(667, map.size());
        for (long k = 1; k <= 1000; k++) {
            assertEquals(k % 3 == 0 ? null : Long.valueOf(k), map.get(k * 31), "key " + k * 31);
        }
        map.clear();
        assertEquals(0, map.size());
        assertNull(map.get(31));
        assertEquals(List.of(), map.values());
    }
}
