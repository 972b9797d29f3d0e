package org.mpiproxy.benchmarks;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * MPI programs built with MPICH's {@code mpicc}, run by Hydra ({@code mpiexec}) and by
 * {@code mpiproxy run} (the distribution's {@code bin/mpiproxy} script over the embedded proxy,
 * protocol v2, PMI-1), alternately, round by round. The programs are the benchmarks' own C
 * sources in {@code benchmarks/src/main/c}.
 */
final class MpichPrograms {

    /** The C programs, each {@code benchmarks/src/main/c/<name>.c}. */
    static final List<String> PROGRAMS = List.of("init_finalize", "pingpong", "bandwidth", "allreduce");
    /** The world sizes of the start-up table. */
    static final int[] SIZES = {1, 2, 4, 8, 16, 32};

    private static final Path SOURCES = Path.of("benchmarks/src/main/c");
    /** The distribution's launcher script, run from the clone. */
    static final Path SCRIPT = Path.of("karaf-distro/src/main/resources/assembly/bin/mpiproxy");

    /** How to start a job of {@code n} ranks of a program under one launcher. */
    interface Launcher {
        List<String> command(int n, Path program, String... args);
    }

    private MpichPrograms() {
    }

    /** @return why the phase cannot run here, or {@code null} */
    static String unavailable(String mpiexec, Path cliJar) {
        if (mpiexec == null) {
            return "MPICH's mpiexec is not installed (Debian: mpich)";
        }
        if (!onPath("mpicc")) {
            return "mpicc is not installed (Debian: libmpich-dev)";
        }
        if (cliJar == null) {
            return "the launcher's jar cli/target/cli-*.jar is missing (run.sh builds it)";
        }
        if (!Files.isRegularFile(SCRIPT)) {
            return SCRIPT + " is missing: run the harness from a clone";
        }
        return null;
    }

    /** @return the shaded launcher jar built by {@code mvn package -pl cli}, or {@code null} */
    static Path cliJar() throws IOException {
        String given = System.getProperty("mpiproxy.cli.jar");
        if (given != null) {
            return Files.isRegularFile(Path.of(given)) ? Path.of(given) : null;
        }
        Path target = Path.of("cli/target");
        if (!Files.isDirectory(target)) {
            return null;
        }
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> {
                String name = p.getFileName().toString();
                return name.startsWith("cli-") && name.endsWith(".jar") && !name.endsWith("-tests.jar")
                        && !name.endsWith("-sources.jar");
            }).findFirst().orElse(null);
        }
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /** Builds every program into {@code programs} with {@code mpicc -O2}. */
    static void compile(Path programs) throws IOException, InterruptedException {
        for (String name : PROGRAMS) {
            Harness.run("mpicc", "-O2", "-o", programs.resolve(name).toString(),
                    SOURCES.resolve(name + ".c").toString());
        }
    }

    /** @return Hydra: {@code mpiexec -n N PROGRAM ARGS...} */
    static Launcher hydra(String mpiexec) {
        return (n, program, args) -> {
            List<String> c = new ArrayList<>(List.of(mpiexec, "-n", Integer.toString(n), program.toString()));
            c.addAll(List.of(args));
            return c;
        };
    }

    /**
     * @return {@code bin/mpiproxy run --hosts 127.0.0.1:N PROGRAM ARGS...} with the embedded
     *         proxy's key and address (a node map naming 127.0.0.1)
     */
    static Launcher ours(Path keyFile, Path nodeMap) {
        return (n, program, args) -> {
            List<String> c = new ArrayList<>(List.of("sh", SCRIPT.toString(), "run", "--key-file", keyFile.toString(),
                    "--node-map", nodeMap.toString(), "--hosts", "127.0.0.1:" + n, "-n", Integer.toString(n),
                    program.toString()));
            c.addAll(List.of(args));
            return c;
        };
    }

    /** The result of one job: wall milliseconds from start to exit, its standard output and error. */
    record Run(double millis, String out, String err) {
    }

    /**
     * Runs a command to its end, standard input {@code /dev/null} (as the warm path of
     * {@code mpiproxy run} needs it: {@link WarmRuns}), whichever the launcher.
     *
     * @param environment added to the harness's own environment
     * @throws IllegalStateException when it exits with a status other than 0 or runs over 120 s
     */
    static Run run(List<String> command, Map<String, String> environment, Path work)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile(work, "job-", ".out");
        Path err = Files.createTempFile(work, "job-", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(new File("/dev/null"))
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().putAll(environment);
        long t0 = System.nanoTime();
        Process p = builder.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " ran over 120 s");
        }
        double millis = (System.nanoTime() - t0) / 1e6;
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
        if (p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited with " + p.exitValue() + ": "
                    + (stderr + stdout).trim().lines().limit(5).reduce((a, b) -> a + " / " + b).orElse(""));
        }
        return new Run(millis, stdout, stderr);
    }

    /**
     * @return the number after {@code key} in a program's output (tagged with {@code [0]} or not)
     * @throws IllegalStateException when the output has no such line
     */
    static double figure(String output, String key) {
        Matcher m = Pattern.compile("(?m)\\b" + Pattern.quote(key) + " ([0-9.]+)\\s*$").matcher(output);
        if (!m.find()) {
            throw new IllegalStateException("no '" + key + "' line in: " + output.trim());
        }
        return Double.parseDouble(m.group(1));
    }
}
