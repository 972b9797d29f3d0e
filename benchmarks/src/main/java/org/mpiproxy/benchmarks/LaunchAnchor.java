package org.mpiproxy.benchmarks;

import java.nio.file.Path;

/**
 * The ProcessBuilder anchor in a JVM of its own, so that it spawns with Java's default
 * mechanism whatever the harness JVM uses (e.g. VFORK): prints one
 * {@code ProcessBuilder.start()} time in microseconds per line.
 * <p>
 * Usage: {@code LaunchAnchor <executable> <warmup> <rounds>}.
 */
public final class LaunchAnchor {

    private LaunchAnchor() {
    }

    /**
     * @param args executable, warm-up rounds, measured rounds
     * @throws Exception when a spawn fails
     */
    public static void main(String[] args) throws Exception {
        Samples samples = LaunchBenchmarks.processBuilder(Path.of(args[0]), Integer.parseInt(args[1]),
                Integer.parseInt(args[2]));
        StringBuilder out = new StringBuilder();
        for (double v : samples.values()) {
            out.append(v).append('\n');
        }
        System.out.print(out);
    }
}
