package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.TreeMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.channel.shm.internal.BenchmarkChannels;
import org.mpiproxy.process.OutputSettings;
import org.mpiproxy.process.ProcessGroup;
import org.mpiproxy.process.RankProcessStarter;
import org.mpiproxy.launcher.local.internal.BenchmarkLaunchers;
import org.mpiproxy.proxy.internal.EmbeddedProxy;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * Where the time of an EXEC goes: the steps of a launch timed one by one (interleaved, so that
 * the machine's load hits them alike), then EXECs through the embedded proxy with time stamps at
 * each hand-off (receive thread, launch thread, back to the host), for one rank and for jobs of 8.
 * <p>
 * Usage: {@code LaunchProfile [rounds] [jfr-file]}; {@code -Djdk.lang.Process.launchMechanism=VFORK}
 * measures that spawn mechanism instead of the default.
 */
public final class LaunchProfile {

    private LaunchProfile() {
    }

    /**
     * @param args {@code [rounds] [jfr-file]}
     * @throws Exception when a measurement fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        Path jfr = args.length > 1 ? Path.of(args[1]) : null;
        Path work = Files.createTempDirectory("mpiproxy-launch-profile-");
        Path programs = Files.createDirectories(work.resolve("programs"));
        Harness.writePrograms(programs);
        System.out.printf(Locale.ROOT, "launch mechanism %s, %d cores, load average %s%n",
                System.getProperty("jdk.lang.Process.launchMechanism", "default (POSIX_SPAWN)"),
                Runtime.getRuntime().availableProcessors(), Files.readString(Path.of("/proc/loadavg")).trim());
        steps(programs, work, rounds);
        Profiler profiler = new Profiler();
        if (jfr != null) {
            profiler.start();
        }
        traced(programs, work, rounds, 1, 2);
        traced(programs, work, Math.max(10, rounds / 5), 8, 2);
        traced(programs, work, Math.max(10, rounds / 5), 8, 8);
        if (jfr != null) {
            profiler.stop(jfr);
            System.out.println();
            System.out.println("JFR execution samples (traced phases), hottest top frames per thread:");
            System.out.print(summary(jfr, 8));
        }
        System.out.printf(Locale.ROOT, "load average at the end %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
        System.exit(0);
    }

    /**
     * Samples per thread kind (ids in thread names folded), each as its top frame and the
     * innermost project frame that led to it.
     */
    static String summary(Path file, int top) throws IOException {
        Map<String, Map<String, Integer>> byThread = new TreeMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (!e.hasField("sampledThread") || e.getThread("sampledThread") == null) {
                continue;
            }
            String thread = e.getThread("sampledThread").getJavaName();
            if (thread == null || !(thread.startsWith("mpiproxy") || thread.startsWith("bench")
                    || thread.startsWith("process reaper") || thread.startsWith("main"))) {
                continue;
            }
            thread = thread.replaceAll("[0-9a-f]{16}", "*").replaceAll("-[0-9]+", "-*");
            String kind = e.getEventType().getName().equals("jdk.NativeMethodSample") ? "native " : "";
            RecordedStackTrace stack = e.getStackTrace();
            String frame = "?";
            if (stack != null && !stack.getFrames().isEmpty()) {
                RecordedFrame f = stack.getFrames().get(0);
                frame = f.getMethod().getType().getName() + "." + f.getMethod().getName();
                for (RecordedFrame g : stack.getFrames()) {
                    String type = g.getMethod().getType().getName();
                    if (type.startsWith("org.mpiproxy") && g != f) {
                        frame += " <- " + type.replaceAll(".*\\.", "") + "." + g.getMethod().getName();
                        break;
                    }
                }
            }
            byThread.computeIfAbsent(thread, k -> new HashMap<>()).merge(kind + frame, 1, Integer::sum);
        }
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Map<String, Integer>> t : byThread.entrySet()) {
            int total = t.getValue().values().stream().mapToInt(Integer::intValue).sum();
            sb.append(String.format(Locale.ROOT, "thread %s: %d samples%n", t.getKey(), total));
            t.getValue().entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(top)
                    .forEach(h -> sb.append(String.format(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * h.getValue() / total,
                            h.getKey())));
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ steps alone

    private interface Step {
        void run() throws Exception;
    }

    private static void steps(Path programs, Path work, int rounds) throws Exception {
        String truePath = programs.resolve("true").toString();
        Path logs = work.resolve("step-logs");
        Path shm = Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : work;
        Path channelBase = Files.createTempDirectory(shm, "mpiproxy-profile-");
        ChannelManager channels = BenchmarkChannels.mappedFiles(channelBase, ProxyFixture.RING_CAPACITY);
        Map<String, String> env = Map.of("MPIPROXY_CHANNEL", "/dev/shm/x", "MPIPROXY_RANK", "1",
                "MPIPROXY_WORLD_SIZE", "2", "MPIPROXY_JOB_ID", "0000000000000001", "MPIPROXY_CORE", "0",
                "MPIPROXY_PROGRAM", "true", "MPIPROXY_PROXY_PID", "1");
        long[] jobId = {1};
        Map<String, Step> steps = new LinkedHashMap<>();
        steps.put("ProcessBuilder.start(true), output discarded", () -> {
            Process p = new ProcessBuilder(truePath).redirectOutput(Redirect.DISCARD).redirectError(Redirect.DISCARD)
                    .start();
            timedEnd();
            p.waitFor();
        });
        steps.put("same with setsid in front", () -> {
            Process p = new ProcessBuilder(ProcessGroup.argv(List.of(truePath))).redirectOutput(Redirect.DISCARD)
                    .redirectError(Redirect.DISCARD).start();
            timedEnd();
            p.waitFor();
        });
        steps.put("setsid, stdin /dev/null, two pipes, rank environment", () -> {
            ProcessBuilder b = new ProcessBuilder(ProcessGroup.argv(List.of(truePath)))
                    .redirectInput(Redirect.from(Path.of("/dev/null").toFile()));
            b.environment().putAll(env);
            Process p = b.start();
            timedEnd();
            p.getInputStream().close();
            p.getErrorStream().close();
            p.waitFor();
        });
        steps.put("RankProcessStarter.start (log directory, spawn, two output threads)", () -> {
            RankProcess p = RankProcessStarter.start("true", ProcessGroup.argv(List.of(truePath)), env, logs, 1, 1, 0,
                    OutputSettings.DEFAULT, null);
            timedEnd();
            p.onExit().get();
        });
        steps.put("channel open (job directory, create, size, map)", () -> {
            long id = jobId[0]++;
            RankChannel c = channels.open(id, 1);
            timedEnd();
            c.close();
            channels.release(id);
        });
        steps.put("log directory and two log files created", () -> {
            Path dir = logs.resolve("job-" + jobId[0]++);
            Files.createDirectories(dir);
            Files.newOutputStream(dir.resolve("rank-1.out")).close();
            Files.newOutputStream(dir.resolve("rank-1.err")).close();
            timedEnd();
        });
        steps.put("thread start and hand-off to it (one thread)", () -> {
            Thread t = new Thread(LaunchProfile::timedEnd);
            t.start();
            t.join();
        });
        ExecutorService pool = Executors.newFixedThreadPool(1);
        steps.put("hand-off to a waiting pool thread", () -> pool.submit(LaunchProfile::timedEnd).get());
        Map<String, Samples> samples = new LinkedHashMap<>();
        for (String name : steps.keySet()) {
            samples.put(name, new Samples());
        }
        for (int i = 0; i < rounds + 10; i++) {
            for (Map.Entry<String, Step> s : steps.entrySet()) {
                long t0 = System.nanoTime();
                END.set(0L);
                s.getValue().run();
                long end = END.get() != 0 ? END.get() : lastEnd;
                if (i >= 10) {
                    samples.get(s.getKey()).add((end - t0) / 1e3);
                }
            }
        }
        pool.shutdown();
        System.out.println();
        System.out.printf(Locale.ROOT, "Steps alone, interleaved, %d rounds, microseconds:%n", rounds);
        System.out.printf(Locale.ROOT, "%-70s %8s %8s %8s%n", "step", "median", "p90", "min");
        for (Map.Entry<String, Samples> s : samples.entrySet()) {
            System.out.printf(Locale.ROOT, "%-70s %8.0f %8.0f %8.0f%n", s.getKey(), s.getValue().median(),
                    s.getValue().percentile(90), s.getValue().min());
        }
    }

    private static final ThreadLocal<Long> END = ThreadLocal.withInitial(() -> 0L);
    private static volatile long lastEnd;

    private static void timedEnd() {
        long now = System.nanoTime();
        END.set(now);
        lastEnd = now;
    }

    // ------------------------------------------------------------------ EXEC with time stamps

    /** Time stamps of one rank's EXEC. */
    private static final class Trace {
        volatile long openStart;
        volatile long openEnd;
        volatile long launchStart;
        volatile long launchEnd;
    }

    private static void traced(Path programs, Path work, int rounds, int ranks, int poolThreads) throws Exception {
        Map<Integer, Trace> traces = new ConcurrentHashMap<>();
        Supplier<Path> shm = () -> Files.isWritable(Path.of("/dev/shm")) ? Path.of("/dev/shm") : work;
        Path channelBase = Files.createTempDirectory(shm.get(), "mpiproxy-profile-");
        ChannelManager real = BenchmarkChannels.mappedFiles(channelBase, ProxyFixture.RING_CAPACITY);
        ChannelManager channels = new ChannelManager() {
            @Override
            public RankChannel open(long jobId, int rankId) throws IOException {
                Trace t = traces.computeIfAbsent(rankId, k -> new Trace());
                t.openStart = System.nanoTime();
                RankChannel c = real.open(jobId, rankId);
                t.openEnd = System.nanoTime();
                return c;
            }

            @Override
            public void remove(long jobId, int rankId) throws IOException {
                real.remove(jobId, rankId);
            }

            @Override
            public void release(long jobId) throws IOException {
                real.release(jobId);
            }

            @Override
            public Path jobDirectory(long jobId) {
                return real.jobDirectory(jobId);
            }

            @Override
            public Path baseDirectory() {
                return real.baseDirectory();
            }
        };
        ProcessLauncher local = BenchmarkLaunchers.local(programs);
        ProcessLauncher launcher = new ProcessLauncher() {
            @Override
            public RankProcess launch(LaunchRequest request) throws LaunchException {
                Trace t = traces.get(request.rankId());
                t.launchStart = System.nanoTime();
                RankProcess p = local.launch(request);
                t.launchEnd = System.nanoTime();
                return p;
            }

            @Override
            public Path programDirectory() {
                return local.programDirectory();
            }
        };
        ExecutorService pool = Executors.newFixedThreadPool(poolThreads, r -> {
            Thread t = new Thread(r, "bench-launch");
            t.setDaemon(true);
            return t;
        });
        EmbeddedProxy proxy = new EmbeddedProxy(channels, launcher, work.resolve("logs"), pool, Duration.ZERO);
        UdpTransport transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 4 << 20, 4 << 20, 65507),
                () -> proxy);
        proxy.transport(transport);
        Samples total = new Samples();
        Samples toOpen = new Samples();
        Samples open = new Samples();
        Samples toLaunch = new Samples();
        Samples launch = new Samples();
        Samples toAck = new Samples();
        try (V1Host host = new V1Host(transport.localAddress())) {
            for (int i = 0; i < rounds + 5; i++) {
                traces.clear();
                long t0 = System.nanoTime();
                for (int r = 1; r <= ranks; r++) {
                    host.exec(r, ranks + 1, "true");
                }
                long[] acks = new long[ranks + 1];
                for (int r = 1; r <= ranks; r++) {
                    if (host.await(V1HeaderDescriptor.OP_EXEC) != 0) {
                        throw new IllegalStateException("EXEC failed");
                    }
                    acks[r] = System.nanoTime();
                }
                long last = acks[ranks];
                LaunchBenchmarks.terminateJob(host, ranks);
                if (i < 5) {
                    continue;
                }
                total.add((last - t0) / 1e3);
                Trace first = traces.get(1);
                Trace lastTrace = traces.values().stream().max((a, b) -> Long.compare(a.launchEnd, b.launchEnd))
                        .orElseThrow();
                toOpen.add((first.openStart - t0) / 1e3);
                long opens = 0;
                long launches = 0;
                for (Trace t : traces.values()) {
                    opens += t.openEnd - t.openStart;
                    launches += t.launchEnd - t.launchStart;
                }
                open.add(opens / 1e3 / ranks);
                launch.add(launches / 1e3 / ranks);
                toLaunch.add((first.launchStart - first.openEnd) / 1e3);
                toAck.add((last - lastTrace.launchEnd) / 1e3);
            }
        } finally {
            transport.close();
            proxy.close();
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "EXEC of %d rank(s) through the proxy, launch pool of %d, %d rounds, microseconds"
                + " (median / p90):%n", ranks, poolThreads, rounds);
        row("first EXEC sent -> all acks received", total);
        row("first EXEC sent -> receive thread opens rank 1's channel", toOpen);
        row("channel open, per rank (receive thread)", open);
        row("rank 1's channel opened -> launch thread starts it", toLaunch);
        row("launcher.launch, per rank (launch thread)", launch);
        row("last launch returned -> its ack at the host", toAck);
    }

    private static void row(String name, Samples s) {
        System.out.printf(Locale.ROOT, "  %-60s %8.0f / %8.0f%n", name, s.median(), s.percentile(90));
    }
}
