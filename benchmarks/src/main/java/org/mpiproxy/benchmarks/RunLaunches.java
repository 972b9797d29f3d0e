package org.mpiproxy.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A plain job of 8 ranks launched by the command a user types, start to exit, in interleaved
 * rounds: {@code mpiexec -n 8 true}, {@code mpiproxy run -n 8 true} cold (the distribution's
 * script and launcher jar, a JVM of its own) and warm (the thin front, the launcher in the
 * embedded proxy's JVM: {@link WarmRuns}), against one embedded proxy serving protocol v2.
 */
final class RunLaunches {

    /** Ranks of each job. */
    static final int RANKS = 8;

    /**
     * The figures, milliseconds.
     *
     * @param mpiexec {@code mpiexec -n 8}; {@code null} when MPICH is not installed
     * @param cold    {@code mpiproxy run}, standalone launcher
     * @param warm    {@code mpiproxy run} through the front; {@code null} with {@code warmWhy}
     * @param warmWhy why the warm path was not measured, or {@code null}
     */
    record Figures(Samples mpiexec, Samples cold, Samples warm, String warmWhy) {
    }

    private RunLaunches() {
    }

    /**
     * @param programs the harness's programs (the copy of {@code true} the ranks run)
     * @param mpiexec  MPICH's {@code mpiexec}, {@code null} when it is not installed
     * @param warmup   rounds run first and not counted
     * @param rounds   rounds measured
     * @return the figures, or {@code null} when the launcher's jar is missing
     * @throws IllegalStateException when a launch fails, or a warm one ran cold
     */
    static Figures jobOf8(Path programs, Path work, String mpiexec, int warmup, int rounds) throws Exception {
        Path jar = MpichPrograms.cliJar();
        if (jar == null || !Files.isRegularFile(MpichPrograms.SCRIPT)) {
            return null;
        }
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"),
                "MPIPROXY_CLI_JAR", jar.toAbsolutePath().toString());
        Path dir = Files.createTempDirectory(work, "key-");
        Path program = programs.resolve("true");
        try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ofSeconds(5), ProxyFixture.RING_CAPACITY,
                V2Benchmarks.settings(V2Benchmarks.keyFile(dir), 1448));
             WarmRuns warm = WarmRuns.open(p, work)) {
            Path nodeMap = dir.resolve("nodes");
            Files.writeString(nodeMap, "127.0.0.1 127.0.0.1:" + p.address.getPort() + "\n");
            MpichPrograms.Launcher cold = MpichPrograms.ours(p.v2.keyFile(), nodeMap);
            List<String> hydra = mpiexec == null ? null : MpichPrograms.hydra(mpiexec).command(RANKS, program);
            List<String> ours = cold.command(RANKS, program);
            List<String> front = warm == null ? null : warm.warm(cold).command(RANKS, program);
            Figures fig = new Figures(hydra == null ? null : new Samples(), new Samples(),
                    warm == null ? null : new Samples(), WarmRuns.unavailable());
            for (int r = 0; r < warmup + rounds; r++) {
                boolean counted = r >= warmup;
                // the order turned each round, so that no launcher always follows the same one
                for (int k = 0; k < 3; k++) {
                    int which = (r + k) % 3;
                    if (which == 0 && hydra != null) {
                        add(counted, fig.mpiexec(), MpichPrograms.run(hydra, env, work).millis());
                    } else if (which == 1) {
                        add(counted, fig.cold(), WarmRuns.coldRun(warm, ours, env, work).millis());
                    } else if (which == 2 && warm != null) {
                        add(counted, fig.warm(), warm.warmRun(front, env, work).millis());
                    }
                }
            }
            System.out.printf(Locale.ROOT, "  mpiproxy run -n %d: cold %.0f ms, warm %s, mpiexec %s%n", RANKS,
                    fig.cold().median(), fig.warm() == null ? "not measured" : String.format(Locale.ROOT, "%.0f ms",
                    fig.warm().median()), fig.mpiexec() == null ? "not installed"
                    : String.format(Locale.ROOT, "%.0f ms", fig.mpiexec().median()));
            return fig;
        }
    }

    private static void add(boolean counted, Samples into, double millis) {
        if (counted) {
            into.add(millis);
        }
    }
}
