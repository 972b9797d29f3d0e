package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class WorldPlanTest {

    private final NodeMap map = new NodeMap(Map.of("a", new NodeMap.Address("10.0.0.1", 0),
            "b", new NodeMap.Address("10.0.0.2", 0), "c", new NodeMap.Address("10.0.0.3", 7000)), 6660,
            name -> {
                throw new java.net.UnknownHostException(name);
            });

    private static List<String> entries(List<Placement> placements) {
        return placements.stream().map(Placement::hostEntry).toList();
    }

    @Test
    void shouldGiveRankZeroTheFirstSlotAndTheRestInNodeOrder() {
        List<Placement> ranks = WorldPlan.fromSlots(List.of(new NodeSlots("a", 2), new NodeSlots("b", 2),
                new NodeSlots("c", 2)), 0, 0, false, map, false);

        assertEquals(List.of("10.0.0.1:6660:0", "10.0.0.2:6660:0", "10.0.0.2:6660:0", "10.0.0.3:7000:0",
                "10.0.0.3:7000:0"), entries(ranks));
        assertEquals("b", ranks.get(1).node());
    }

    @Test
    void shouldBindRanksToTheirSlotsCores() {
        List<Placement> ranks = WorldPlan.fromSlots(List.of(new NodeSlots("a", 2), new NodeSlots("b", 3)), 0, 0, true,
                map, false);

        assertEquals(List.of("10.0.0.1:6660:1", "10.0.0.2:6660:0", "10.0.0.2:6660:1", "10.0.0.2:6660:2"),
                entries(ranks));
    }

    @Test
    void shouldApplyRanksPerNodeAndWrapALargerWorldOnlyWhenOversubscribing() {
        List<Placement> ranks = WorldPlan.fromSlots(List.of(new NodeSlots("a", 5), new NodeSlots("b", 1)), 1, 5, false,
                map, true);

        assertEquals(List.of("10.0.0.2:6660:0", "10.0.0.1:6660:0", "10.0.0.2:6660:0", "10.0.0.1:6660:0"),
                entries(ranks));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WorldPlan.fromSlots(
                List.of(new NodeSlots("a", 5), new NodeSlots("b", 1)), 1, 5, false, map, false));
        assertEquals("-n 5 is more ranks than the 2 slots of a:1,b:1 (2); give more slots, or --oversubscribe to put"
                + " several ranks on one slot", e.getMessage());
        assertEquals(2, WorldPlan.fromSlots(List.of(new NodeSlots("a", 3)), 0, 3, false, map, false).size(),
                "a world of exactly the slots is not over-subscribed");
    }

    @Test
    void shouldPlaceFreeNosLinesAsRanksOneToN() {
        List<Placement> lines = List.of(new Placement("127.0.0.1", 6660, 0, "127.0.0.1"),
                new Placement("127.0.0.1", 6660, 1, "127.0.0.1"));

        assertEquals(List.of("127.0.0.1:6660:0", "127.0.0.1:6660:1"), entries(WorldPlan.fromPlacements(lines, 0, false)));
        assertEquals(List.of("127.0.0.1:6660:0"), entries(WorldPlan.fromPlacements(lines, 2, false)));
        assertEquals(List.of(), entries(WorldPlan.fromPlacements(lines, 1, false)));
        assertEquals(4, WorldPlan.fromPlacements(lines, 5, true).size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldPlan.fromPlacements(lines, 4, false));
        assertEquals("-n 4 is more ranks than the hostfile's 2 lines and rank 0 (3); give more slots, or"
                + " --oversubscribe to put several ranks on one slot", e.getMessage());
    }

    @Test
    void shouldRejectEmptySourcesAndBadSizes() {
        assertThrows(IllegalArgumentException.class, () -> WorldPlan.fromPlacements(List.of(), 0, false));
        assertThrows(IllegalArgumentException.class, () -> WorldPlan.fromSlots(List.of(), 0, 0, false, map, false));
        assertThrows(IllegalArgumentException.class,
                () -> WorldPlan.fromSlots(List.of(new NodeSlots("a", 1)), 0, 70000, false, map, true));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldPlan.fromSlots(List.of(new NodeSlots("zz", 1)), 0, 0, false, map, false));
        assertEquals("node zz is not in the node map and has no IPv4 address in DNS (zz)", e.getMessage());
    }
}
