package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mpiproxy.itests.TestCluster.Run;

/**
 * MPI programs built with MPICH's own mpicc run unchanged under 'mpiproxy run': the proxies and
 * the launcher serve PMI-1, so every rank finds its peers (docs/protocol-v2.md 5.7). Four ranks
 * on one node and six over three; the programs are this project's own tests in src/test/c, compiled here with mpicc (skipped
 * without it: Debian's mpich and libmpich-dev, which .ci/run installs).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MpichProgramsIT {

    private static final List<String> PROGRAMS = List.of("hello", "ring", "collectives", "abort");
    /** Four ranks on one node, and six over the three nodes (rank 0 takes m1's first slot). */
    private static final String ONE_NODE = "m1:4";
    private static final String THREE_NODES = "m1:2,m2:2,m3:2";

    private TestCluster cluster;
    private Path work;
    private Path cli;
    private Path binaries;

    @BeforeAll
    void startNodes() throws Exception {
        Assumptions.assumeTrue(TestCluster.hasMpicc(),
                "the MPICH tests need mpicc (Debian: apt-get install mpich libmpich-dev; .ci/run installs them)");
        cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        binaries = Files.createDirectories(target.resolve("mpich-bin"));
        for (String program : PROGRAMS) {
            TestCluster.compileMpi(program, binaries);
        }
        cluster = TestCluster.start("mpich-nodes", "m", 31, 3, node -> {
            for (String program : PROGRAMS) {
                Files.copy(binaries.resolve(program), node.home.resolve("programs").resolve(program),
                        StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
            }
        });
        work = cluster.work;
    }

    @AfterAll
    void stopNodes() throws InterruptedException {
        if (cluster != null) {
            cluster.stop();
        }
    }

    private Run run(long timeoutSeconds, String... args) throws Exception {
        return cluster.launch(cli, timeoutSeconds, Map.of(), args);
    }

    /** @return the world size of a run on {@code hosts}: every slot */
    private static int size(String hosts) {
        return hosts.equals(ONE_NODE) ? 4 : 6;
    }

    private List<ProcessHandle> ranksEverywhere() {
        return cluster.ranks();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ONE_NODE, THREE_NODES})
    void shouldRunAnMpichHelloOnEverySlotWithItsRealWorld(String hosts) throws Exception {
        int size = size(hosts);
        Run run = run(120, "--hosts", hosts, binaries.resolve("hello").toString());

        assertEquals(0, run.exit(), run.err());
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        List<String> expected = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            expected.add("[" + r + "] hello from rank " + r + " of " + size);
        }
        assertEquals(expected, out, run.err());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ONE_NODE, THREE_NODES})
    void shouldPassATokenAroundARingOfRanks(String hosts) throws Exception {
        int size = size(hosts);
        // MPICH's ranks poll while they wait: with more ranks than cores each hop waits for a time slice
        Run run = run(120, "--hosts", hosts, binaries.resolve("ring").toString(), "100");

        assertEquals(0, run.exit(), run.err());
        assertEquals(List.of("[0] token " + 100 * size + " after 100 rounds of " + size + " ranks"), run.out(),
                run.err());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ONE_NODE, THREE_NODES})
    void shouldComputeBroadcastReduceAndAllToAllAsOneRankWould(String hosts) throws Exception {
        int size = size(hosts);
        Run run = run(120, "--hosts", hosts, binaries.resolve("collectives").toString());

        assertEquals(0, run.exit(), run.err());
        assertEquals(List.of("[0] collectives of " + size + " ranks: ok"), run.out(), run.err());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {ONE_NODE, THREE_NODES})
    void shouldStopTheWholeJobWithTheCodeOfMpiAbort(String hosts) throws Exception {
        // the other ranks wait in a receive that never matches: the job ends only because the abort stops it
        Run run = run(120, "--hosts", hosts, binaries.resolve("abort").toString());

        assertEquals(7, run.exit(), run.err());
        assertTrue(run.err().contains("rank 1 called MPI_Abort (exit code 7)"), run.err());
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    @Test
    void shouldRunAnMpichProgramStagedFromTheLauncher() throws Exception {
        // a copy under a name no node has: only --stage brings it there
        Path mine = work.resolve("hello-" + System.nanoTime());
        Files.copy(binaries.resolve("hello"), mine, StandardCopyOption.COPY_ATTRIBUTES);
        Run run = run(120, "--stage", "--hosts", THREE_NODES, mine.toString());

        assertEquals(0, run.exit(), run.err());
        List<String> out = new ArrayList<>(run.out());
        Collections.sort(out);
        assertEquals(6, out.size(), out.toString());
        assertEquals("[5] hello from rank 5 of 6", out.get(5), run.err());
    }

    @Test
    void shouldServeAPmi2ClientOfSlurmsLibraryOnFourRanksOverTwoNodes() throws Exception {
        Assumptions.assumeTrue(Files.exists(Paths.get("/usr/include/slurm/pmi2.h")),
                "needs Slurm's libpmi2 (Debian: libpmi2-0-dev; .ci/run installs it)");
        Path source = Paths.get("src/test/c/pmi2_client.c").toAbsolutePath();
        Path client = work.resolve("pmi2_client-" + System.nanoTime());
        Process cc = new ProcessBuilder("cc", "-O2", "-o", client.toString(), source.toString(), "-lpmi2")
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(cc.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) && cc.exitValue() == 0, ccOut);

        // ranks 0 (here, counted with m1) and 1 on m1, 2 and 3 on m2: 0 and 2 put their node's attribute; the
        // mapping names each node's block (node, 1 node, 2 ranks)
        Run run = run(120, "--stage", "--hosts", "m1:2,m2:2", client.toString(), "0,2");

        assertEquals(0, run.exit(), run.err());
        List<String> out = run.out();
        for (int r = 0; r < 4; r++) {
            for (int s = 0; s < 4; s++) {
                assertTrue(out.contains("[" + r + "] rank " + r + " read key-" + s + "=value of rank " + s + "; from "
                        + jobIdOf(out)), "rank " + r + " reads rank " + s + "'s key: " + out + run.err());
            }
            assertTrue(out.contains("[" + r + "] rank " + r + " PMI_process_mapping=(vector,(0,1,2),(1,1,2))"), out.toString());
            assertTrue(out.contains("[" + r + "] rank " + r + " node attribute=put by rank " + (r < 2 ? 0 : 2)),
                    out.toString());
            assertTrue(out.contains("[" + r + "] rank " + r + " of 4 done"), out.toString());
        }
        assertEquals(List.of(), ranksEverywhere(), "ranks left running");
    }

    /** @return the PMI job id the clients put in their values, as rank 0 read its own key */
    private static String jobIdOf(List<String> out) {
        String prefix = "[0] rank 0 read key-0=value of rank 0; from ";
        return out.stream().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).findFirst()
                .orElse("(rank 0 read no key)");
    }
}
