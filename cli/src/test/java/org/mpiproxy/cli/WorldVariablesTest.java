package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
