package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The machine's own baselines, measured by a C program ({@code benchmarks/src/main/c/anchors.c})
 * that this class compiles with gcc and runs: {@code posix_spawn} of {@code /bin/true} and its
 * {@code waitpid} ({@code spawn <n>}), a single-producer single-consumer ring between two threads
 * with C11 atomics ({@code ring <recordBytes> <seconds>}), and 1448-byte UDP datagrams over
 * loopback ({@code udp <seconds>}). The Java figures are read against these. The program prints
 * {@code key=value} lines; {@link #run(String...)} returns them as numbers.
 */
final class CAnchors {

    /** How long one run of the program may take before it is destroyed. */
    static final long TIMEOUT_SECONDS = 120;

    private final Path binary;

    private CAnchors(Path binary) {
        this.binary = binary;
    }

    /** @return why the anchors cannot be measured here, or {@code null} when they can */
    static String unavailable() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "gcc"))) {
                return null;
            }
        }
        return "gcc is not installed";
    }

    /**
     * Compiles {@code source} with {@code gcc -O2 -std=gnu11 -Wall -Wextra -pthread} into
     * {@code workDirectory/anchors}.
     *
     * @throws IOException when gcc fails; the message holds its output
     */
    static CAnchors build(Path source, Path workDirectory) throws IOException, InterruptedException {
        Path binary = workDirectory.resolve("anchors");
        Process gcc = new ProcessBuilder("gcc", "-O2", "-std=gnu11", "-Wall", "-Wextra", "-pthread", "-o",
                binary.toString(), source.toString()).redirectErrorStream(true).start();
        gcc.getOutputStream().close();
        String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = gcc.waitFor();
        if (exit != 0) {
            throw new IOException("gcc failed (exit " + exit + ") on " + source + ":\n" + output);
        }
        return new CAnchors(binary);
    }

    /**
     * Runs the program once, for example {@code run("ring", "4", "2")}.
     *
     * @return every {@code key=value} line of its standard output whose value is a number, in order
     * @throws IOException when it exits other than 0 (the message holds its output) or takes longer
     *                     than {@value #TIMEOUT_SECONDS} s (it is then destroyed)
     */
    Map<String, Double> run(String... args) throws IOException, InterruptedException {
        String[] command = new String[args.length + 1];
        command[0] = binary.toString();
        System.arraycopy(args, 0, command, 1, args.length);
        Process process = new ProcessBuilder(command).start();
        process.getOutputStream().close();
        CompletableFuture<String> stdout = drain(process.getInputStream());
        CompletableFuture<String> stderr = drain(process.getErrorStream());
        if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor();
            throw new IOException(String.join(" ", command) + " took longer than " + TIMEOUT_SECONDS + " s");
        }
        String out;
        String err;
        try {
            out = stdout.get();
            err = stderr.get();
        } catch (ExecutionException e) {
            throw new IOException("reading the output of " + String.join(" ", command), e.getCause());
        }
        if (process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed (exit " + process.exitValue() + "):\n"
                    + out + err);
        }
        Map<String, Double> values = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            int equals = line.indexOf('=');
            if (equals <= 0) {
                continue;
            }
            try {
                values.put(line.substring(0, equals).trim(), Double.parseDouble(line.substring(equals + 1).trim()));
            } catch (NumberFormatException e) {
                // not a key=value line of the program's: ignored
            }
        }
        return values;
    }

    /** Reads a stream to its end on another thread, so that a full pipe never blocks the program. */
    private static CompletableFuture<String> drain(InputStream in) {
        CompletableFuture<String> text = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (in) {
                text.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                text.completeExceptionally(e);
            }
        }, "anchors-output");
        reader.setDaemon(true);
        reader.start();
        return text;
    }
}
