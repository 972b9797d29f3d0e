package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.mpiproxy.protocol.V1HeaderDescriptor;

/**
 * What running ranks cost the proxy: its threads ({@code /proc/self/task}) and open descriptors
 * ({@code /proc/self/fd}) while N idle ranks run, against the same counts with none; and its CPU
 * while one rank writes output without pause ({@code yes}).
 */
final class ResourceBenchmark {

    /** The proxy's thread that reads every rank's output. */
    static final String POLLER_THREAD = "mpiproxy-output-poller";

    /** Threads and descriptors of the proxy with {@code ranks} idle ranks running, and with none. */
    record Row(int ranks, int threads, int fds, int baseThreads, int baseFds) {
        double threadsPerRank() {
            return (threads - baseThreads) / (double) ranks;
        }

        double fdsPerRank() {
            return (fds - baseFds) / (double) ranks;
        }
    }

    /**
     * One rank flooding its output.
     *
     * @param proxyCpu  the whole JVM's CPU (proxy plus harness) as a share of one CPU
     * @param pollerCpu the output poller thread's, -1 when there is no such thread
     * @param rankMiBps what the rank wrote, MiB per second
     */
    record Flood(int seconds, double proxyCpu, double pollerCpu, double rankMiBps) {
    }

    private ResourceBenchmark() {
    }

    /** Counts while {@code n} ranks of {@code program} run, one job each, with the counts before. */
    static List<Row> ranks(ProxyFixture proxy, String program, int... counts) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (V1Host host = new V1Host(proxy.address)) {
            // once first, so that what the first launch creates for good is in the baseline
            LaunchBenchmarks.execJob(proxy, host, program, 1);
            LaunchBenchmarks.terminateJob(host, 1);
            for (int n : counts) {
                int baseThreads = count("/proc/self/task");
                int baseFds = count("/proc/self/fd");
                LaunchBenchmarks.execJob(proxy, host, program, n);
                rows.add(new Row(n, count("/proc/self/task"), count("/proc/self/fd"), baseThreads, baseFds));
                LaunchBenchmarks.terminateJob(host, n);
            }
        }
        return rows;
    }

    /** The proxy's CPU over {@code seconds} while one rank of {@code program} (which floods) runs. */
    static Flood flood(ProxyFixture proxy, String program, int seconds) throws Exception {
        try (V1Host host = new V1Host(proxy.address)) {
            host.exec(1, 2, program);
            int result = host.await(V1HeaderDescriptor.OP_EXEC);
            if (result != 0) {
                throw new IllegalStateException("EXEC " + program + " failed: " + result);
            }
            long rankPid = ProcessHandle.current().children().filter(ProcessHandle::isAlive)
                    .mapToLong(ProcessHandle::pid).max().orElseThrow();
            Path self = Memory.processStat(ProcessHandle.current().pid());
            Path poller = Memory.threadStat(POLLER_THREAD);
            long s0 = Memory.cpuTicks(self);
            long p0 = poller == null ? -1 : Memory.cpuTicks(poller);
            long w0 = written(rankPid);
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            double elapsed = (System.nanoTime() - t0) / 1e9;
            long w1 = written(rankPid);
            double proxyCpu = (Memory.cpuTicks(self) - s0) / Memory.TICKS_PER_SECOND / elapsed;
            double pollerCpu = poller == null ? -1 : (Memory.cpuTicks(poller) - p0) / Memory.TICKS_PER_SECOND / elapsed;
            host.terminate(1);
            host.await(V1HeaderDescriptor.OP_TERMINATE);
            return new Flood(seconds, proxyCpu, pollerCpu, (w1 - w0) / elapsed / 1048576.0);
        }
    }

    private static int count(String directory) throws IOException {
        try (Stream<Path> entries = Files.list(Path.of(directory))) {
            return (int) entries.count();
        }
    }

    /** @return the bytes a process has written ({@code wchar} of {@code /proc/<pid>/io}) */
    private static long written(long pid) throws IOException {
        return Files.readAllLines(Path.of("/proc/" + pid + "/io")).stream().filter(l -> l.startsWith("wchar:"))
                .mapToLong(l -> Long.parseLong(l.substring(6).trim())).findFirst()
                .orElseThrow(() -> new IOException("no wchar in /proc/" + pid + "/io"));
    }
}
