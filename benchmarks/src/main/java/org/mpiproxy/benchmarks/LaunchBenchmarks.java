package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;

/** Process start: ProcessBuilder, EXEC through the proxy, MPICH's mpiexec, and how launch cost grows. */
final class LaunchBenchmarks {

    private LaunchBenchmarks() {
    }

    /** Microseconds for {@code ProcessBuilder.start()} of the program (its exit is awaited outside the timing). */
    static Samples processBuilder(Path executable, int warmup, int rounds) throws Exception {
        Samples samples = new Samples();
        ProcessBuilder builder = new ProcessBuilder(executable.toString());
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        for (int i = 0; i < warmup + rounds; i++) {
            long t0 = System.nanoTime();
            Process p = builder.start();
            long t1 = System.nanoTime();
            p.waitFor();
            if (i >= warmup) {
                samples.add((t1 - t0) / 1e3);
            }
        }
        return samples;
    }

    /**
     * Microseconds for {@code ProcessBuilder.start()} in a JVM of its own that spawns with Java's
     * default mechanism ({@link LaunchAnchor}), whatever this JVM's {@code jdk.lang.Process.launchMechanism}.
     */
    static Samples processBuilderDefaultMechanism(Path executable, int warmup, int rounds) throws Exception {
        String javaCommand = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(javaCommand, "-cp", System.getProperty("java.class.path"),
                LaunchAnchor.class.getName(), executable.toString(), Integer.toString(warmup), Integer.toString(rounds))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        if (!child.waitFor(5, TimeUnit.MINUTES) || child.exitValue() != 0) {
            child.destroyForcibly();
            throw new IllegalStateException("the ProcessBuilder anchor JVM failed");
        }
        Samples samples = new Samples();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                samples.add(Double.parseDouble(line.trim()));
            }
        }
        return samples;
    }

    /** Microseconds from sending EXEC of one rank to its acknowledgement; TERMINATE afterwards. */
    static Samples execToAck(ProxyFixture proxy, String program, int warmup, int rounds) throws Exception {
        Samples samples = new Samples();
        try (V1Host host = new V1Host(proxy.address)) {
            for (int i = 0; i < warmup + rounds; i++) {
                long t0 = System.nanoTime();
                host.exec(1, 2, program);
                int result = host.await(V1HeaderDescriptor.OP_EXEC);
                long t1 = System.nanoTime();
                check(result, proxy);
                host.terminate(1);
                host.await(V1HeaderDescriptor.OP_TERMINATE);
                if (i >= warmup) {
                    samples.add((t1 - t0) / 1e3);
                }
            }
        }
        return samples;
    }

    /** Milliseconds of {@code mpiexec -n <n> /bin/true}, start to exit. */
    static Samples mpiexec(String mpiexec, int n, int warmup, int rounds) throws Exception {
        Samples samples = new Samples();
        ProcessBuilder builder = new ProcessBuilder(mpiexec, "-n", Integer.toString(n), "/bin/true");
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        for (int i = 0; i < warmup + rounds; i++) {
            long t0 = System.nanoTime();
            Process p = builder.start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(mpiexec + " did not finish within 30 s");
            }
            long t1 = System.nanoTime();
            if (p.exitValue() != 0) {
                throw new IllegalStateException(mpiexec + " exited with " + p.exitValue());
            }
            if (i >= warmup) {
                samples.add((t1 - t0) / 1e6);
            }
        }
        return samples;
    }

    /**
     * Milliseconds of {@code jobs} concurrent {@code mpiexec -n 2 /bin/true}, all started at
     * once, from the first start to the last exit.
     */
    static double mpiexecJobs(String mpiexec, int jobs) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(mpiexec, "-n", "2", "/bin/true");
        builder.redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        Process[] running = new Process[jobs];
        long t0 = System.nanoTime();
        for (int j = 0; j < jobs; j++) {
            running[j] = builder.start();
        }
        for (Process p : running) {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                for (Process q : running) {
                    q.destroyForcibly();
                }
                throw new IllegalStateException(mpiexec + " did not finish within 60 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(mpiexec + " exited with " + p.exitValue());
            }
        }
        return (System.nanoTime() - t0) / 1e6;
    }

    /** Milliseconds from the first EXEC of an {@code n}-rank job to the last acknowledgement. */
    static double execJob(ProxyFixture proxy, V1Host host, String program, int n) throws IOException {
        long t0 = System.nanoTime();
        for (int r = 1; r <= n; r++) {
            host.exec(r, n + 1, program);
        }
        for (int r = 1; r <= n; r++) {
            check(host.await(V1HeaderDescriptor.OP_EXEC), proxy);
        }
        return (System.nanoTime() - t0) / 1e6;
    }

    static void terminateJob(V1Host host, int n) throws IOException {
        for (int r = 1; r <= n; r++) {
            host.terminate(r);
        }
        for (int r = 1; r <= n; r++) {
            host.await(V1HeaderDescriptor.OP_TERMINATE);
        }
    }

    /** Milliseconds of an {@code n}-rank EXEC of the program to all acknowledgements, repeated. */
    static Samples execJobs(ProxyFixture proxy, String program, int n, int warmup, int rounds) throws Exception {
        Samples samples = new Samples();
        try (V1Host host = new V1Host(proxy.address)) {
            for (int i = 0; i < warmup + rounds; i++) {
                double ms = execJob(proxy, host, program, n);
                terminateJob(host, n);
                if (i >= warmup) {
                    samples.add(ms);
                }
            }
        }
        return samples;
    }

    /** One point of a growth curve. */
    record Growth(int x, double launchMillis, double proxyRssMiB, double channelMiB, double ranksRssMiB) {
    }

    /** Launch time and memory of one job of {@code n} ranks of a program that stays up. */
    static Growth ranks(ProxyFixture proxy, String program, int n) throws Exception {
        try (V1Host host = new V1Host(proxy.address)) {
            double ms = execJob(proxy, host, program, n);
            Growth g = new Growth(n, ms, Memory.selfRssMiB(), proxy.channelBytes() / 1048576.0,
                    Memory.descendantsRssMiB());
            terminateJob(host, n);
            return g;
        }
    }

    /** Launch time and memory of {@code jobs} concurrent jobs of two ranks each, all EXECs sent at once. */
    static Growth jobs(ProxyFixture proxy, String program, int jobs) throws Exception {
        List<V1Host> hosts = new ArrayList<>();
        try {
            for (int j = 0; j < jobs; j++) {
                hosts.add(new V1Host(proxy.address));
            }
            long t0 = System.nanoTime();
            for (V1Host host : hosts) {
                host.exec(1, 3, program);
                host.exec(2, 3, program);
            }
            for (V1Host host : hosts) {
                check(host.await(V1HeaderDescriptor.OP_EXEC), proxy);
                check(host.await(V1HeaderDescriptor.OP_EXEC), proxy);
            }
            double ms = (System.nanoTime() - t0) / 1e6;
            Growth g = new Growth(jobs, ms, Memory.selfRssMiB(), proxy.channelBytes() / 1048576.0,
                    Memory.descendantsRssMiB());
            for (V1Host host : hosts) {
                terminateJob(host, 2);
            }
            return g;
        } finally {
            for (V1Host host : hosts) {
                host.close();
            }
        }
    }

    private static void check(int result, ProxyFixture proxy) {
        if (result != MpiErrors.SUCCESS) {
            throw new IllegalStateException("EXEC failed with " + MpiErrors.name(result) + "; counters "
                    + proxy.proxy.counters());
        }
    }
}
