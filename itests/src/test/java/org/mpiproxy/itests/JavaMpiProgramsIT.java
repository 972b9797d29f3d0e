package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mpiproxy.itests.TestCluster.Run;

/**
 * Java programs written only against the {@code mpi} package (Open MPI's Java API; no
 * {@code org.mpiproxy} import), run as the README says: {@code javac -cp programs/mpi.jar},
 * then {@code mpiproxy run -n N mpijava -cp DIR Main}. Eight ranks on one node (pairs of ranks
 * through shared memory) and over three nodes (through the proxies); the programs are in
 * {@code src/test/java-mpi}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JavaMpiProgramsIT {

    private static final String ONE_NODE = "j1:8";
    private static final String THREE_NODES = "j1:3,j2:3,j3:2";

    private TestCluster cluster;
    private Path work;
    private Path cli;
    private Path classes;

    @BeforeAll
    void startNodes() throws Exception {
        cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        cluster = TestCluster.start("java-mpi-nodes", "j", 41, 3, node -> { });
        work = cluster.work;
        classes = Files.createDirectories(work.resolve("classes"));
        Path jar = programs().resolve("mpi.jar");
        List<String> javac = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "javac")
                .toString(), "-cp", jar.toString(), "-d", classes.toString()));
        for (String program : List.of("Ring", "MpiChecks")) {
            javac.add(Paths.get("src/test/java-mpi", program + ".java").toAbsolutePath().toString());
        }
        Process p = new ProcessBuilder(javac).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0, "javac: " + out);
    }

    /** The first node's programs directory: the launcher finds mpijava there, as bin/mpiproxy sets it. */
    private Path programs() {
        return cluster.nodes.get(0).home.resolve("programs");
    }

    @AfterAll
    void stopNodes() throws InterruptedException {
        if (cluster != null) {
            cluster.stop();
        }
    }

    private Run run(long timeoutSeconds, String... args) throws Exception {
        return cluster.launch(cli, timeoutSeconds, Map.of("MPIPROXY_PROGRAMS", programs().toString()), args);
    }

    private Run java(long timeoutSeconds, List<String> env, String hosts, String main, String... args)
            throws Exception {
        List<String> all = new ArrayList<>();
        for (String e : env) {
            all.add("-x");
            all.add(e);
        }
        all.addAll(List.of("--hosts", hosts, "mpijava", "-cp", classes.toString(), main));
        all.addAll(List.of(args));
        return run(timeoutSeconds, all.toArray(new String[0]));
    }

    @Test
    void shouldRunTheReadmesRingWithFourRanks() throws Exception {
        Run run = run(180, "-n", "4", "--hosts", "j1:4", "mpijava", "-cp", classes.toString(), "Ring",
                "1000");

        assertEquals(0, run.exit(), run.err());
        assertEquals(1, run.out().size(), run.out() + run.err());
        assertTrue(run.out().get(0).startsWith("[0] token 3000 after 1000 rounds of 4 ranks on "), run.out().get(0));
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ONE_NODE, THREE_NODES})
    void shouldPassEveryCheckOfPointToPointCollectivesAndCommunicators(String hosts) throws Exception {
        Run run = java(300, List.of(), hosts, "MpiChecks");

        assertEquals(0, run.exit(), run.err());
        assertEquals(1, run.out().size(), run.out() + run.err());
        assertTrue(run.out().get(0).matches("\\[0\\] mpi checks of 8 ranks: [0-9]+ ok"), run.out().get(0));
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"j1:4", "j1:2,j2:2"})
    void shouldFailAReceiveThatNeverMatchesAfterTheTimeoutNamingTheRanks(String hosts) throws Exception {
        Run run = java(120, List.of("MPIPROXY_TIMEOUT=3"), hosts, "MpiChecks", "never");

        assertNotEquals(0, run.exit(), run.err());
        assertTrue(run.err().contains("rank 0: no message from rank 1 with tag 99 arrived within 3 s"), run.err());
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"j1:4", "j1:2,j2:2"})
    void shouldFailAMismatchedCollectiveNamingBothCalls(String hosts) throws Exception {
        // the mismatch is seen when rank 0's broadcast reaches a rank in its all-reduce, however late
        // that rank started: the default timeout (30 s) only ends a wait that would never end
        Run run = java(120, List.of(), hosts, "MpiChecks", "mismatch");

        assertNotEquals(0, run.exit(), run.err());
        assertTrue(run.err().contains("allReduce with MPI.SUM on communicator of 4 ranks (context 0) met bcast"
                + " (root 0) of rank 0"), run.err());
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }

    @Test
    void shouldDeliverWhatARankSentBeforeItExitedAndNameItWhenMoreIsAwaited() throws Exception {
        // rank 2's first receive waits for rank 1 to start, on another node: the timeout leaves room
        // for the two JVMs to start as far apart as a busy machine makes them
        Run run = java(120, List.of("MPIPROXY_TIMEOUT=10"), "j1:2,j2:2", "MpiChecks", "early");

        assertNotEquals(0, run.exit(), run.err());
        assertTrue(run.out().contains("[2] rank 2 got 5 from rank 1"), run.out() + run.err());
        assertTrue(run.err().contains("rank 2: no message from rank 1 with tag 1 arrived within 10 s"), run.err());
        assertEquals(List.of(), cluster.ranks(), "ranks left running");
    }
}
