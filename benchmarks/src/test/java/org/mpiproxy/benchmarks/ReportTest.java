package org.mpiproxy.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The 64 KiB goal rows and text: against MPICH over TCP as measured in the same run when the Java
 * programs phase measured it (after the 64 KiB phases), against the anchors.md figure otherwise.
 * The goal rows of {@code mpiproxy run}: judged by the warm launch when the front was built, by the
 * cold one otherwise, each row saying which.
 */
class ReportTest {

    private static final String V1 =
            "| 64 KiB messages host to rank, protocol v1 (1448-byte datagrams; for comparison) | ";
    private static final String V2 = "| 64 KiB messages host to rank | ";

    /** @return a stream of {@code megabytesPerSecond} MB/s (one-megabyte messages over one second) */
    private static UdpBenchmarks.Stream mbs(long megabytesPerSecond) {
        return new UdpBenchmarks.Stream(megabytesPerSecond, megabytesPerSecond, 1.0, 1_000_000, "");
    }

    /** Both 64 KiB phases: v1 at 2100 MB/s, v2 at 1800 MB/s, raw UDP at 5000 MB/s. */
    private static Report largePhases() {
        Report report = new Report();
        report.large(List.of(mbs(5000)), List.of(mbs(2100)));
        report.largeV2(Harness.V2_LARGE_DATAGRAM, List.of(mbs(5000)), Map.of(4 << 20, List.of(mbs(1800))), 10.0);
        return report;
    }

    /** The Java programs phase, its MPICH over TCP 64 KiB bandwidth at {@code mpichTcp} MB/s. */
    private static void javaMpi(Report report, double mpichTcp) {
        Samples[][] rows = new Samples[5][];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = new Samples[] {new Samples(), new Samples()};
            rows[i][0].add(i == Report.TCP_BANDWIDTH_ROW ? mpichTcp : 10);
            rows[i][1].add(10);
        }
        report.javaMpi("mpiexec", rows);
    }

    private static String row(String table, String start) {
        return table.lines().filter(l -> l.startsWith(start)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + start + " in " + table));
    }

    @Test
    void shouldCompareWithTheAnchorsMdFigureWhenMpichOverTcpWasNotMeasured() {
        Report report = largePhases();

        String table = report.goalTable();
        assertEquals(V1 + "MPICH TCP 1321 MB/s (anchors.md); raw UDP 64 KiB 5000 MB/s (this run) | 2100 MB/s | "
                + "1.59x MPICH TCP, 0.42x raw UDP | >= 1.5x MPICH TCP, >= 0.25x raw UDP | yes |", row(table, V1));
        assertEquals(V2 + "MPICH TCP 1321 MB/s (anchors.md); raw UDP 64 KiB 5000 MB/s (this run) | 1800 MB/s (v2, "
                + "65507-byte datagrams, ring 4096 KiB) | 1.36x MPICH TCP, 0.36x raw UDP | >= 1.5x MPICH TCP, >= 0.25x "
                + "raw UDP | **no** |", row(table, V2));
        String page = report.render("");
        assertTrue(page.contains("in the rank's ring. MPICH over TCP loopback moved 64 KiB messages at 1321 MB/s on "
                + "this kind of machine (anchors.md; not measured in this run"), page);
    }

    @Test
    void shouldCompareWithMpichOverTcpOfTheSameRunWhenALaterPhaseMeasuredIt() {
        Report report = largePhases();
        javaMpi(report, 1500);

        String table = report.goalTable();
        assertEquals(V1 + "MPICH TCP 1500 MB/s (this run); raw UDP 64 KiB 5000 MB/s (this run) | 2100 MB/s | "
                + "1.40x MPICH TCP, 0.42x raw UDP | >= 1.5x MPICH TCP, >= 0.25x raw UDP | **no** |", row(table, V1));
        assertEquals(V2 + "MPICH TCP 1500 MB/s (this run); raw UDP 64 KiB 5000 MB/s (this run) | 1800 MB/s (v2, "
                + "65507-byte datagrams, ring 4096 KiB) | 1.20x MPICH TCP, 0.36x raw UDP | >= 1.5x MPICH TCP, >= 0.25x "
                + "raw UDP | **no** |", row(table, V2));
        // the rows keep their place: before the Java programs' rows, as the phases ran
        List<String> lines = table.lines().toList();
        assertEquals(lines.indexOf(row(table, V1)) + 1, lines.indexOf(row(table, V2)));
        assertTrue(lines.indexOf(row(table, V2)) < lines.indexOf(row(table, "| Java mpi ping-pong")));
        assertFalse(table.contains("anchors.md"), table);

        String page = report.render("");
        assertTrue(page.contains("in the rank's ring. MPICH over TCP loopback moved 64 KiB messages at 1500 MB/s "
                + "(this run:"), page);
        assertFalse(page.contains("(anchors.md;"), page);
    }

    @Test
    void shouldMeetTheGoalAgainstASlowerMpichOverTcpOfTheSameRun() {
        Report report = largePhases();
        javaMpi(report, 1000);

        String table = report.goalTable();
        assertTrue(row(table, V1).endsWith("| 2.10x MPICH TCP, 0.42x raw UDP | >= 1.5x MPICH TCP, >= 0.25x raw UDP "
                + "| yes |"), table);
        assertTrue(row(table, V2).endsWith("| 1.80x MPICH TCP, 0.36x raw UDP | >= 1.5x MPICH TCP, >= 0.25x raw UDP "
                + "| yes |"), table);
    }
    private static Samples of(double... values) {
        Samples s = new Samples();
        for (double v : values) {
            s.add(v);
        }
        return s;
    }

    /** The MPICH phase: Hydra 100 ms, cold 300 ms at every size, warm {@code warm} ms or not measured. */
    private static Report mpichPhase(Double warm, String warmWhy) {
        Report report = new Report();
        Map<Integer, Samples[]> start = new java.util.LinkedHashMap<>();
        for (int n : new int[] {1, 8, 32}) {
            start.put(n, new Samples[] {of(100), of(300), warm == null ? null : of(warm)});
        }
        Samples[] pingpong = {of(0.3), of(0.4), warm == null ? null : of(0.3)};
        Samples[] bandwidth = {of(9000), of(8000), warm == null ? null : of(9000)};
        report.mpich("mpiexec", start, Map.of("mpiexec -n 8 /bin/true", of(10)), pingpong, bandwidth, warmWhy);
        return report;
    }

    @Test
    void shouldJudgeTheStartUpAtEachSizeByTheWarmLaunchAndShowTheColdOne() {
        String table = mpichPhase(40.0, null).goalTable();

        for (String n : List.of("1 rank", "8 ranks", "32 ranks")) {
            String size = n.replaceAll(" .*", "");
            assertEquals("| MPI_Init + MPI_Finalize, " + n + " | mpiexec -n " + size + " 100 ms (this run) | 40 ms warm "
                    + "(front); cold 300 ms | 0.40x mpiexec warm; cold 3.00x | <= 0.5x mpiexec | yes |",
                    row(table, "| MPI_Init + MPI_Finalize, " + n + " |"));
        }
        assertEquals("| MPICH ping-pong, one int, same binary | under mpiexec 0.300 us (this run) | 0.300 us warm "
                + "(front); cold 0.400 us | 1.00x mpiexec's speed warm; cold 0.75x | >= 0.95x mpiexec | yes |",
                row(table, "| MPICH ping-pong"));
    }

    @Test
    void shouldJudgeTheStartUpByTheColdLaunchAndSaySoWhenTheFrontIsMissing() {
        Report report = mpichPhase(null, "no front");

        String table = report.goalTable();
        assertEquals("| MPI_Init + MPI_Finalize, 8 ranks | mpiexec -n 8 100 ms (this run) | 300 ms cold (warm not "
                + "measured: no front) | 3.00x mpiexec cold | <= 0.5x mpiexec | **no** |",
                row(table, "| MPI_Init + MPI_Finalize, 8 ranks |"));
        assertTrue(report.render("").contains("Warm not measured: no front."));
    }

    @Test
    void shouldJudgeTheRunOf8RanksByTheWarmLaunchBesideTheExecGoal() {
        Report report = new Report();
        report.job8("mpiexec", of(50), of(20), of(30), new RunLaunches.Figures(of(50), of(400), of(20), null));

        String table = report.goalTable();
        assertEquals("| job of 8 ranks, all acks | mpiexec -n 8 50.0 ms (this run) | 20.0 ms | 0.40x mpiexec "
                + "| <= 0.5x mpiexec | yes |", row(table, "| job of 8 ranks, all acks |"));
        assertEquals("| job of 8 ranks, `mpiproxy run` start to exit | mpiexec -n 8 50 ms (this run) | 20 ms warm "
                + "(front); cold 400 ms | 0.40x mpiexec warm; cold 8.00x | <= 0.5x mpiexec | yes |",
                row(table, "| job of 8 ranks, `mpiproxy run`"));
        assertTrue(report.render("").contains("| mpiproxy run -n 8, warm (front, launcher in the proxy) | 20.0 |"));
    }
}
