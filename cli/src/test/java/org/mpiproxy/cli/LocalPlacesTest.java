package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Every rank's place among the ranks of its node, rank 0 (the launcher's node) counted with the
 * others there, as Hydra gives them, under every family's names, and the process mapping MPICH
 * reads agrees.
 */
class LocalPlacesTest {

    /** A proxy on this machine, as in a local run. */
    private static final Placement HERE = new Placement("127.0.0.1", 6660, 0, "here");
    /** Proxies on other machines (documentation addresses: never one of this machine's). */
    private static final Placement B = new Placement("198.51.100.1", 6660, 0, "b");
    private static final Placement C = new Placement("198.51.100.2", 6660, 0, "c");

    /** @return "localrank/localsize" of every rank, from the environments the launcher gives them */
    private static List<String> places(List<Placement> ranks) {
        List<Map<String, String>> envs = new ArrayList<>();
        envs.add(RankWorld.rankZeroVariables(ranks, true));
        envs.addAll(RankWorld.environments(ranks, ranks.size() + 1, Map.of(), true));
        List<String> places = new ArrayList<>();
        for (Map<String, String> env : envs) {
            String place = env.get("MPI_LOCALRANKID") + "/" + env.get("MPI_LOCALNRANKS");
            assertEquals(place, env.get("MPIPROXY_LOCAL_RANK") + "/" + env.get("MPIPROXY_LOCAL_SIZE"));
            assertEquals(place, env.get("OMPI_COMM_WORLD_LOCAL_RANK") + "/" + env.get("OMPI_COMM_WORLD_LOCAL_SIZE"));
            assertEquals(env.get("MPI_LOCALRANKID"), env.get("SLURM_LOCALID"));
            assertEquals(Integer.toString(ranks.size() + 1), env.get("PMI_SIZE"));
            places.add(place);
        }
        return places;
    }

    @Test
    void shouldGiveARankAloneTheWholeNode() {
        assertEquals(List.of("0/1"), places(List.of()));
        assertEquals("(vector,(0,1,1))", RankWorld.processMapping(List.of()));
    }

    @Test
    void shouldCountRankZeroWithTheRanksOfItsNode() {
        assertEquals(List.of("0/3", "1/3", "2/3"), places(List.of(HERE, HERE)));
        assertEquals("(vector,(0,1,3))", RankWorld.processMapping(List.of(HERE, HERE)));
        assertEquals(List.of("0/4", "1/4", "2/4", "3/4"), places(List.of(HERE, HERE, HERE)));
        assertEquals("(vector,(0,1,4))", RankWorld.processMapping(List.of(HERE, HERE, HERE)));
    }

    @Test
    void shouldCountSixRanksOverThreeNodesAsHydraDoes() {
        // two slots a node, rank 0 in the first slot of the launcher's node
        List<Placement> ranks = List.of(HERE, B, B, C, C);
        assertEquals(List.of("0/2", "1/2", "0/2", "1/2", "0/2", "1/2"), places(ranks));
        assertEquals("(vector,(0,1,2),(1,1,2),(2,1,2))", RankWorld.processMapping(ranks));
        // round robin: the mapping and the places follow the nodes, not the order of the ranks
        List<Placement> roundRobin = List.of(B, C, HERE, B, C);
        assertEquals(List.of("0/2", "0/2", "0/2", "1/2", "1/2", "1/2"), places(roundRobin));
        assertEquals("(vector,(0,1,1),(1,1,1),(2,1,1),(0,1,1),(1,1,1),(2,1,1))",
                RankWorld.processMapping(roundRobin));
    }

    @Test
    void shouldCountNodesByAddressWhenSeveralAreThisMachines() {
        // a cluster of three nodes on one machine (loopback addresses): rank 0 on the first one
        Placement n1 = new Placement("127.0.0.11", 6660, 0, "n1");
        Placement n2 = new Placement("127.0.0.12", 6660, 0, "n2");
        Placement n3 = new Placement("127.0.0.13", 6660, 0, "n3");
        List<Placement> ranks = List.of(n1, n2, n2, n3, n3);
        assertEquals(List.of("0/2", "1/2", "0/2", "1/2", "0/2", "1/2"), places(ranks));
        assertEquals("(vector,(0,1,2),(1,1,2),(2,1,2))", RankWorld.processMapping(ranks));
        // the launcher on a machine of its own (a login node): rank 0 alone there
        assertEquals(List.of("0/1", "0/2", "1/2", "0/2", "1/2"), places(List.of(B, B, C, C)));
        assertEquals("(vector,(0,1,1),(1,1,2),(2,1,2))", RankWorld.processMapping(List.of(B, B, C, C)));
    }
}
