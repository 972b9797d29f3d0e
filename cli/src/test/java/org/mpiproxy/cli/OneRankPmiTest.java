package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;

/**
 * A job of one rank has PMI too, as under Hydra (else MPICH finds none and starts a singleton's
 * mpiexec): rank 0, a shell that speaks PMI-1 over bash's /dev/tcp, reaches the launcher's PMI
 * server, learns its world of one, and passes a fence the launcher ends for it alone.
 */
class OneRankPmiTest {

    /** Rank 0: every reply of the server, one a line; exit 3 without PMI. */
    private static final String RANK_ZERO = String.join("\n",
            "[ -n \"$PMI_PORT\" ] && [ -n \"$PMI_ID\" ] || { echo no PMI; exit 3; }",
            "exec 3<>/dev/tcp/${PMI_PORT%:*}/${PMI_PORT#*:} || exit 4",
            "ask() { echo \"$1\" >&3; read -r line <&3; echo \"$line\"; }",
            "echo \"cmd=initack pmiid=$PMI_ID\" >&3",
            "for i in 1 2 3 4; do read -r line <&3; echo \"$line\"; done",
            "ask 'cmd=init pmi_version=1 pmi_subversion=1'",
            "ask 'cmd=get_universe_size'",
            "ask 'cmd=put key=k value=v'",
            "ask 'cmd=barrier_in'",
            "ask 'cmd=get key=k'",
            "ask 'cmd=get key=PMI_process_mapping'",
            "echo \"local $MPI_LOCALRANKID/$MPI_LOCALNRANKS\"",
            "ask 'cmd=finalize'");

    @Test
    void shouldGiveARankAloneAPmiServerAndEndItsFences(@TempDir Path dir) throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
        JobRunner.Settings settings = new JobRunner.Settings("/bin/bash", List.of("-c", RANK_ZERO), List.of(),
                Map.of(), true, null, Duration.ofSeconds(5), Duration.ofSeconds(1), null, -1, "v2", key.toString());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = new JobRunner(settings, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8)).run();
        String said = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, exit, said + err.toString(StandardCharsets.UTF_8));
        assertEquals(List.of("cmd=initack rc=0", "cmd=set size=1", "cmd=set rank=0", "cmd=set debug=0",
                "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0", "cmd=universe_size size=1 rc=0",
                "cmd=put_result rc=0", "cmd=barrier_out rc=0", "cmd=get_result rc=0 value=v",
                "cmd=get_result rc=0 value=(vector,(0,1,1))", "local 0/1", "cmd=finalize_ack rc=0"),
                said.lines().map(l -> l.replaceFirst("^\\[0\\] ", "")).toList(), err.toString(StandardCharsets.UTF_8));
    }
}
