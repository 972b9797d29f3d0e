package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class WorldVariablesTest {

    @Test
    void shouldGiveARankItsPlaceUnderEveryFamilysNames() {
        Map<String, String> env = RankWorld.variables(3, 6, 1, 2, true);

        assertEquals("3", env.get("MPIPROXY_RANK"));
        assertEquals("3", env.get("PMI_RANK"));
        assertEquals("3", env.get("OMPI_COMM_WORLD_RANK"));
        assertEquals("3", env.get("SLURM_PROCID"));
        assertEquals("6", env.get("SLURM_NTASKS"));
        assertEquals("6", env.get("SLURM_NPROCS"));
        assertEquals("6", env.get("OMPI_COMM_WORLD_SIZE"));
        assertEquals("1", env.get("SLURM_LOCALID"));
        assertEquals("1", env.get("MPI_LOCALRANKID"));
        assertEquals("2", env.get("MPI_LOCALNRANKS"));
    }

    @Test
    void shouldTellEveryRankWhichRanksShareItsProxy() {
        Placement a = new Placement("10.0.0.1", 6660, 0, "n1");
        Placement a1 = new Placement("10.0.0.1", 6660, 1, "n1");
        Placement b = new Placement("10.0.0.2", 6660, 0, "n2");
        Placement other = new Placement("10.0.0.1", 6661, 0, "n1b");
        // ranks 1..7: a a b a b b other
        List<Placement> ranks = List.of(a, a1, b, a, b, b, other);
        List<Map<String, String>> envs = RankWorld.environments(ranks, 8,
                Map.of("MPIPROXY_NODE_RANKS", "9", "MPIPROXY_TIMEOUT", "3", "MPIPROXY_CHANNEL", "/x"), false);

        assertEquals("1-2,4", envs.get(0).get("MPIPROXY_NODE_RANKS"));
        assertEquals("1-2,4", envs.get(3).get("MPIPROXY_NODE_RANKS"));
        assertEquals("3,5-6", envs.get(2).get("MPIPROXY_NODE_RANKS"));
        assertEquals("7", envs.get(6).get("MPIPROXY_NODE_RANKS"));
        // the library's own setting reaches the ranks; what a proxy sets does not come from -x
        assertEquals("3", envs.get(0).get("MPIPROXY_TIMEOUT"));
        assertNull(envs.get(0).get("MPIPROXY_CHANNEL"));
    }

    @Test
    void shouldLeaveSlurmsNamesAloneInsideARealStep() {
        Map<String, String> env = RankWorld.variables(3, 6, 1, 2, false);

        assertEquals("3", env.get("PMI_RANK"));
        assertTrue(env.keySet().stream().noneMatch(name -> name.startsWith("SLURM_")), env.toString());
        assertNull(env.get("SLURM_PROCID"));
    }

    @Test
    void shouldTellARealStepFromABatchScriptAndNoSlurm() {
        assertTrue(RankWorld.inSlurmStep(Map.of("SLURM_JOB_ID", "12", "SLURM_STEP_ID", "0")));
        assertTrue(RankWorld.inSlurmStep(Map.of("SLURM_STEP_ID", "3")));
        assertFalse(RankWorld.inSlurmStep(Map.of()));
        assertFalse(RankWorld.inSlurmStep(Map.of("SLURM_JOB_ID", "12")));
        // Slurm's reserved ids: the batch script and the extern step are no steps of tasks
        assertFalse(RankWorld.inSlurmStep(Map.of("SLURM_STEP_ID", Long.toString(0xfffffffbL))));
        assertFalse(RankWorld.inSlurmStep(Map.of("SLURM_STEP_ID", Long.toString(0xfffffffcL))));
        assertFalse(RankWorld.inSlurmStep(Map.of("SLURM_STEP_ID", "batch")));
        assertFalse(RankWorld.inSlurmStep(Map.of("SLURM_STEP_ID", "-1")));
    }
}
