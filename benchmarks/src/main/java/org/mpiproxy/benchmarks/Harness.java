package org.mpiproxy.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.mpiproxy.proxy.internal.EmbeddedProxy;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The end-to-end harness: measures each anchor and the proxy side by side in one run, prints
 * the ratios and writes {@code docs/benchmarks.md} with PNG plots of the growth curves.
 * <p>
 * Usage: {@code Harness [--quick] [--only <phase>,...] [--out docs/benchmarks.md]};
 * {@code benchmarks/run.sh} builds and starts it. {@code --only} runs the phases whose names
 * contain one of the comma-separated entries (e.g. {@code --only launch,8-rank}; the names are
 * listed in the generated page's "How to run"). {@code --loss-child <programs>} is the part that runs inside a
 * network namespace.
 * <p>
 * Longer than 500 lines for a reason: it is the run's list of phases, one method per phase in
 * the order of the page, each setting up its fixture (proxies, rings, MPICH, a network
 * namespace), calling the measurement and handing the figures to {@link Report}; the
 * measurements themselves are in the {@code *Benchmarks}, {@code *SideBySide} and anchor classes.
 */
public final class Harness {

    /** The system property that chooses how Java spawns processes (default posix_spawn; VFORK measurable). */
    static final String LAUNCH_MECHANISM = "jdk.lang.Process.launchMechanism";

    private final boolean quick;
    private String only;
    private final Path out;
    private final Path work;
    private final Path programs;
    private final Report report = new Report();
    /** The C anchors, built on first use; {@code null} with {@link #cWhy} when they cannot be. */
    private CAnchors cAnchors;
    private String cWhy;

    private Harness(boolean quick, Path out) throws IOException {
        this.quick = quick;
        this.out = out;
        this.work = Files.createTempDirectory("mpiproxy-harness-");
        this.programs = work.resolve("programs");
        Files.createDirectories(programs);
    }

    /**
     * @param args {@code [--quick] [--out <file>]} or {@code --loss-child <programs>}
     * @throws Exception when the harness itself fails (a failing measurement is reported instead)
     */
    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("--loss-child")) {
            LossChild.run(Path.of(args[1]), args.length > 2 && args[2].equals("--quick"));
            return;
        }
        boolean quick = false;
        String only = null;
        Path out = Path.of("docs/benchmarks.md");
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--quick")) {
                quick = true;
            } else if (args[i].equals("--out") && i + 1 < args.length) {
                out = Path.of(args[++i]);
            } else if (args[i].equals("--only") && i + 1 < args.length) {
                only = args[++i];
            } else {
                throw new IllegalArgumentException("usage: Harness [--quick] [--only <phase>,...] [--out docs/benchmarks.md]");
            }
        }
        Harness harness = new Harness(quick, out);
        harness.only = only;
        try {
            harness.runAll();
        } finally {
            harness.cleanUp();
        }
        System.exit(0);
    }

    private void runAll() throws Exception {
        writePrograms(programs);
        report.machine(quick);
        phase("UDP streams", Duration.ofMinutes(5), this::streams);
        phase("1448-byte streams over protocol v2", Duration.ofMinutes(5), this::streamsV2);
        phase("64 KiB messages host to rank over protocol v1", Duration.ofMinutes(3), this::large);
        phase("64 KiB messages host to rank over protocol v2", Duration.ofMinutes(5), this::largeV2);
        phase("round trip", Duration.ofMinutes(3), this::roundTrip);
        phase("launch", Duration.ofMinutes(5), this::launch);
        phase("8-rank job vs mpiexec", Duration.ofMinutes(5), this::job8);
        phase("MPICH programs", Duration.ofMinutes(10), this::mpich);
        phase("user without a cluster key", Duration.ofMinutes(5), this::user);
        phase("Java programs of the mpi package", Duration.ofMinutes(10), this::javaMpi);
        phase("packet loss", Duration.ofMinutes(5), this::loss);
        phase("idle CPU", Duration.ofMinutes(3), this::idle);
        phase("growth", Duration.ofMinutes(10), this::growth);
        phase("resources per rank", Duration.ofMinutes(5), this::resources);
        // JMH last: its runner in this JVM left the JFR sampling of later phases empty
        phase("rings (JMH)", Duration.ofMinutes(20), this::rings);
        phase("dispatch allocation (JMH -prof gc)", Duration.ofMinutes(5), this::dispatch);
        phase("MACs (JMH)", Duration.ofMinutes(10), this::macs);
        phase("spawn (JMH)", Duration.ofMinutes(5), this::spawns);
        Path analysis = Path.of("benchmarks/analysis.md");
        String text = report.render(Files.exists(analysis) ? Files.readString(analysis) : "");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, text);
        System.out.println();
        System.out.println(report.goalTable());
        System.out.println("written " + out);
    }

    /** Runs a measurement with a time limit; a failure or timeout is reported, not thrown. */
    private void phase(String name, Duration limit, Callable<Void> body) {
        if (only != null && java.util.Arrays.stream(only.split(",")).noneMatch(name::contains)) {
            return;
        }
        System.out.println("== " + name);
        long t0 = System.nanoTime();
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                body.call();
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "harness-" + name);
        t.start();
        try {
            t.join(limit.toMillis());
            if (t.isAlive()) {
                t.interrupt();
                t.join(10_000);
                failure[0] = new IllegalStateException("timed out after " + limit.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (failure[0] != null) {
            failure[0].printStackTrace();
            report.failed(name, failure[0].toString());
        }
        System.out.printf(Locale.ROOT, "   %s took %.1f s%n", name, (System.nanoTime() - t0) / 1e9);
    }

    // ------------------------------------------------------------------ rings

    private Void rings() throws Exception {
        int forks = quick ? 2 : 4;
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include(RingBenchmark.class.getName())
                .forks(forks)
                .warmupIterations(2).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 3 : 4).measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED")
                .shouldFailOnError(true);
        Collection<RunResult> runs = new Runner(options.build()).run();
        Map<String, Samples> received = new LinkedHashMap<>();
        for (RunResult run : runs) {
            String group = run.getParams().getBenchmark().replaceAll(".*\\.", "");
            String size = run.getParams().getParam("size");
            Samples s = received.computeIfAbsent(group + ":" + size, k -> new Samples());
            for (BenchmarkResult fork : run.getBenchmarkResults()) {
                for (IterationResult it : fork.getIterationResults()) {
                    Result<?> r = it.getSecondaryResults().get("received");
                    if (r != null) {
                        s.add(r.getScore());
                    }
                }
            }
        }
        // the C ring beside it, in the same run: median of 5 one-second runs per size (its rate is bimodal)
        double[] cRing = {Double.NaN, Double.NaN};
        CAnchors c = cAnchors();
        if (c != null) {
            String[] sizes = {"4", "1448"};
            for (int i = 0; i < sizes.length; i++) {
                Samples s = new Samples();
                for (int round = 0; round < (quick ? 3 : 5); round++) {
                    s.add(c.run("ring", sizes[i], "1").get("ring." + sizes[i] + ".records.per.second"));
                }
                cRing[i] = s.median();
                System.out.printf(Locale.ROOT, "   C ring %s B: %.1f M/s%n", sizes[i], cRing[i] / 1e6);
            }
        }
        report.rings(received, forks, cRing[0], cRing[1], cWhy);

        ChainedOptionsBuilder cost = new OptionsBuilder()
                .include(RingCostBenchmark.class.getName())
                .forks(quick ? 1 : 2)
                .warmupIterations(2).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 3 : 5).measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED")
                .shouldFailOnError(true);
        Map<String, Samples> nanos = new LinkedHashMap<>();
        for (RunResult run : new Runner(cost.build()).run()) {
            String name = run.getParams().getBenchmark().replaceAll(".*\\.", "") + ":" + run.getParams().getParam("size");
            Samples s = nanos.computeIfAbsent(name, k -> new Samples());
            for (BenchmarkResult fork : run.getBenchmarkResults()) {
                for (IterationResult it : fork.getIterationResults()) {
                    s.add(it.getPrimaryResult().getScore());
                }
            }
        }
        report.ringCost(nanos);
        return null;
    }

    private Void dispatch() throws Exception {
        ChainedOptionsBuilder options = jmh(DispatchBenchmark.class)
                .include(V2DispatchBenchmark.class.getName())
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        Map<String, double[]> rows = new LinkedHashMap<>();
        for (RunResult run : new Runner(options.build()).run()) {
            String name = run.getParams().getBenchmark().replaceAll(".*\\.", "");
            double ns = run.getPrimaryResult().getScore();
            double norm = Double.NaN;
            for (String key : run.getSecondaryResults().keySet()) {
                if (key.endsWith("gc.alloc.rate.norm")) {
                    norm = run.getSecondaryResults().get(key).getScore();
                }
            }
            rows.put(name, new double[] {ns, norm});
        }
        report.dispatch(rows);
        return null;
    }

    /**
     * @return the C anchors (benchmarks/src/main/c/anchors.c) built with gcc into the work
     *         directory, or {@code null} (with {@link #cWhy} set) when gcc is missing or fails
     */
    private CAnchors cAnchors() {
        if (cAnchors == null && cWhy == null) {
            cWhy = CAnchors.unavailable();
            if (cWhy == null) {
                try {
                    cAnchors = CAnchors.build(Path.of("benchmarks", "src", "main", "c", "anchors.c"), work);
                } catch (IOException e) {
                    cWhy = "the C anchors did not build: " + e.getMessage().lines().findFirst().orElse("");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    cWhy = "interrupted while building the C anchors";
                }
            }
        }
        return cAnchors;
    }

    /** @return the options of the one-thread JMH phases: 3 warm-up and 5 measured seconds per fork, 2 forks */
    private ChainedOptionsBuilder jmh(Class<?> benchmark) {
        return new OptionsBuilder()
                .include(benchmark.getName())
                .forks(quick ? 1 : 2)
                .warmupIterations(3).warmupTime(TimeValue.seconds(1))
                .measurementIterations(quick ? 3 : 5).measurementTime(TimeValue.seconds(1))
                .shouldFailOnError(true);
    }

    private Void macs() throws Exception {
        ChainedOptionsBuilder options = jmh(MacBenchmark.class);
        Map<String, Map<Integer, Double>> nanos = new LinkedHashMap<>();
        for (RunResult run : new Runner(options.build()).run()) {
            String name = run.getParams().getBenchmark().replaceAll(".*\\.", "");
            int size = Integer.parseInt(run.getParams().getParam("size"));
            nanos.computeIfAbsent(name, k -> new java.util.TreeMap<>()).put(size, run.getPrimaryResult().getScore());
        }
        report.macs(nanos);
        return null;
    }

    private Void spawns() throws Exception {
        ChainedOptionsBuilder options = jmh(SpawnBenchmark.class);
        Map<String, double[]> micros = new LinkedHashMap<>();
        for (RunResult run : new Runner(options.build()).run()) {
            String name = run.getParams().getBenchmark().replaceAll(".*\\.", "");
            micros.put(name, new double[] {run.getPrimaryResult().getScore(), run.getPrimaryResult().getScoreError()});
        }
        report.spawns(micros);
        return null;
    }

    // ------------------------------------------------------------------ UDP

    private ProxyFixture proxy() throws IOException {
        return new ProxyFixture(programs, work, Duration.ZERO);
    }

    private Void streams() throws Exception {
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 5;
        List<UdpBenchmarks.Stream> raw = new ArrayList<>();
        List<UdpBenchmarks.Stream> send = new ArrayList<>();
        List<UdpBenchmarks.Stream> recv = new ArrayList<>();
        Profiler profile = new Profiler();
        for (int i = 0; i < rounds; i++) {
            raw.add(UdpBenchmarks.rawStream(UdpBenchmarks.V1_DATAGRAM, d));
            try (ProxyFixture p = proxy()) {
                if (i == rounds - 1) {
                    profile.start();
                }
                send.add(UdpBenchmarks.proxySendStream(p, d, UdpBenchmarks.V1_PAYLOAD));
                if (i == rounds - 1) {
                    profile.stop(work.resolve("send.jfr"));
                }
            }
            try (ProxyFixture p = proxy()) {
                if (i == rounds - 1) {
                    profile.start();
                }
                recv.add(UdpBenchmarks.proxyRecvStream(p, d));
                if (i == rounds - 1) {
                    profile.stop(work.resolve("recv.jfr"));
                }
            }
            System.out.printf(Locale.ROOT, "   raw %.0f/s  send %.0f/s  recv %.0f/s%n", raw.get(i).perSecond(),
                    send.get(i).perSecond(), recv.get(i).perSecond());
        }
        report.streams(raw, send, recv);
        CAnchors c = cAnchors();
        if (c != null) {
            Map<String, Double> m = c.run("udp", quick ? "1" : "2");
            report.cUdp(m.get("udp.1448.received.per.second"), m.get("udp.1448.sent"), m.get("udp.1448.received"));
        }
        report.profile("SEND stream (host to rank)", Profiler.summary(work.resolve("send.jfr"), 12));
        report.profile("RECV stream (rank to host)", Profiler.summary(work.resolve("recv.jfr"), 12));
        return null;
    }

    private Void large() throws Exception {
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 3;
        List<UdpBenchmarks.Stream> raw = new ArrayList<>();
        List<UdpBenchmarks.Stream> proxied = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            raw.add(UdpBenchmarks.rawStream(65507, d));
            try (ProxyFixture p = proxy()) {
                proxied.add(UdpBenchmarks.proxySendStream(p, d, 65536));
            }
        }
        report.large(raw, proxied);
        return null;
    }

    /** {@code v2.datagram.size} of the 64 KiB phase: the largest IPv4 UDP payload. */
    static final int V2_LARGE_DATAGRAM = 65507;
    /** Ring capacities of the 64 KiB v2 phase: the default, and what an operator sets for streaming jobs. */
    static final int[] V2_LARGE_RINGS = {ProxyFixture.RING_CAPACITY, 4 << 20};

    private ProxyFixture proxyV2(int ringCapacity, int datagramSize) throws IOException {
        Path dir = Files.createTempDirectory(work, "key-");
        return new ProxyFixture(programs, work, Duration.ZERO, ringCapacity,
                V2Benchmarks.settings(V2Benchmarks.keyFile(dir), datagramSize));
    }

    private Void largeV2() throws Exception {
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 3;
        List<UdpBenchmarks.Stream> raw = new ArrayList<>();
        Map<Integer, List<UdpBenchmarks.Stream>> byRing = new LinkedHashMap<>();
        Profiler profile = new Profiler();
        for (int i = 0; i < rounds; i++) {
            raw.add(UdpBenchmarks.rawStream(65507, d));
            for (int ring : V2_LARGE_RINGS) {
                boolean profiled = i == rounds - 1 && ring == V2_LARGE_RINGS[V2_LARGE_RINGS.length - 1];
                try (ProxyFixture p = proxyV2(ring, V2_LARGE_DATAGRAM)) {
                    if (profiled) {
                        profile.start();
                    }
                    UdpBenchmarks.Stream s = V2Benchmarks.sendStream(p, d, 65536);
                    if (profiled) {
                        profile.stop(work.resolve("large-v2.jfr"));
                    }
                    byRing.computeIfAbsent(ring, k -> new ArrayList<>()).add(s);
                    System.out.printf(Locale.ROOT, "   raw %.0f MB/s  v2 ring %d KiB %.0f MB/s  %s%n",
                            raw.get(i).megabytesPerSecond(), ring / 1024, s.megabytesPerSecond(), s.detail());
                }
            }
        }
        double signMicros = V2Benchmarks.signMicros(V2Benchmarks.keyFile(Files.createTempDirectory(work, "key-")),
                V2_LARGE_DATAGRAM, quick ? 200 : 1000);
        report.largeV2(V2_LARGE_DATAGRAM, raw, byRing, signMicros);
        report.profile("64 KiB messages host to rank, protocol v2 (ring "
                + V2_LARGE_RINGS[V2_LARGE_RINGS.length - 1] / 1024 + " KiB)", Profiler.summary(work.resolve("large-v2.jfr"), 12));
        return null;
    }

    private Void streamsV2() throws Exception {
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 5;
        int payload = V2Benchmarks.maxPayload(1448);
        List<UdpBenchmarks.Stream> raw = new ArrayList<>();
        List<UdpBenchmarks.Stream> send = new ArrayList<>();
        List<UdpBenchmarks.Stream> recv = new ArrayList<>();
        Profiler profile = new Profiler();
        for (int i = 0; i < rounds; i++) {
            boolean profiled = i == rounds - 1;
            raw.add(UdpBenchmarks.rawStream(UdpBenchmarks.V1_DATAGRAM, d));
            try (ProxyFixture p = proxyV2(ProxyFixture.RING_CAPACITY, 1448)) {
                if (profiled) {
                    profile.start();
                }
                send.add(V2Benchmarks.sendStream(p, d, payload));
                if (profiled) {
                    profile.stop(work.resolve("send-v2.jfr"));
                }
            }
            try (ProxyFixture p = proxyV2(ProxyFixture.RING_CAPACITY, 1448)) {
                if (profiled) {
                    profile.start();
                }
                recv.add(V2Benchmarks.recvStream(p, d, payload, 64));
                if (profiled) {
                    profile.stop(work.resolve("recv-v2.jfr"));
                }
            }
            System.out.printf(Locale.ROOT, "   raw %.0f/s  v2 send %.0f/s (%s)  v2 recv %.0f/s (%s)%n",
                    raw.get(i).perSecond(), send.get(i).perSecond(), send.get(i).detail(), recv.get(i).perSecond(),
                    recv.get(i).detail());
        }
        report.streamsV2(raw, send, recv);
        report.profile("v2 SEND stream (host to rank)", Profiler.summary(work.resolve("send-v2.jfr"), 12));
        report.profile("v2 RECV stream (rank to host)", Profiler.summary(work.resolve("recv-v2.jfr"), 12));
        return null;
    }

    private Void roundTrip() throws Exception {
        int rounds = quick ? 2000 : 10000;
        Samples raw = UdpBenchmarks.rawPingPong(1000, rounds);
        Samples proxied;
        Profiler profile = new Profiler();
        try (ProxyFixture p = proxy()) {
            profile.start();
            proxied = UdpBenchmarks.proxyRoundTrip(p, 1000, rounds);
            profile.stop(work.resolve("rtt.jfr"));
        }
        Samples raw2 = UdpBenchmarks.rawPingPong(1000, rounds);
        report.roundTrip(raw, proxied, raw2);
        report.profile("one-int round trip", Profiler.summary(work.resolve("rtt.jfr"), 12));
        return null;
    }

    // ------------------------------------------------------------------ launch

    private Void launch() throws Exception {
        int rounds = quick ? 50 : 200;
        Samples pb = LaunchBenchmarks.processBuilder(programs.resolve("true"), 20, rounds);
        Samples exec;
        try (ProxyFixture p = proxy()) {
            exec = LaunchBenchmarks.execToAck(p, "true", 20, rounds);
        }
        Samples pb2 = LaunchBenchmarks.processBuilder(programs.resolve("true"), 20, rounds);
        Samples pbDefault = LaunchBenchmarks.processBuilderDefaultMechanism(programs.resolve("true"), 20, rounds);
        double[] cSpawn = null;
        CAnchors c = cAnchors();
        if (c != null) {
            Map<String, Double> m = c.run("spawn", Integer.toString(quick ? 200 : 1000));
            cSpawn = new double[] {m.get("spawn.median.us"), m.get("spawn.p90.us"), m.get("spawn.count")};
        }
        report.launch(pb, exec, pb2, pbDefault, System.getProperty(LAUNCH_MECHANISM), cSpawn, cWhy);
        return null;
    }

    private Void job8() throws Exception {
        int rounds = quick ? 10 : 30;
        String mpiexec = findMpiexec();
        Samples mpich = mpiexec == null ? null : LaunchBenchmarks.mpiexec(mpiexec, 8, 3, rounds);
        Samples ours;
        try (ProxyFixture p = proxy()) {
            ours = LaunchBenchmarks.execJobs(p, "true", 8, 3, rounds);
        }
        // side by side: the launch pool of two threads the proxy had before launch.threads
        Samples twoThreads;
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ZERO, two)) {
            twoThreads = LaunchBenchmarks.execJobs(p, "true", 8, 3, rounds);
        }
        // the command a user types, cold and warm, beside mpiexec
        RunLaunches.Figures run = RunLaunches.jobOf8(programs, work, mpiexec, 3, rounds);
        report.job8(mpiexec, mpich, ours, twoThreads, run);
        return null;
    }

    // ------------------------------------------------------------------ MPICH programs

    private Void mpich() throws Exception {
        String mpiexec = findMpiexec();
        Path jar = MpichPrograms.cliJar();
        String why = MpichPrograms.unavailable(mpiexec, jar);
        if (why != null) {
            report.mpichSkipped(why);
            return null;
        }
        int rounds = quick ? 2 : 5;
        int dataRounds = quick ? 1 : 3;
        MpichPrograms.compile(programs);
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"),
                "MPIPROXY_CLI_JAR", jar.toAbsolutePath().toString());
        Path dir = Files.createTempDirectory(work, "key-");
        try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ofSeconds(5), ProxyFixture.RING_CAPACITY,
                V2Benchmarks.settings(V2Benchmarks.keyFile(dir), 1448));
             WarmRuns warm = WarmRuns.open(p, work)) {
            Path nodeMap = dir.resolve("nodes");
            Files.writeString(nodeMap, "127.0.0.1 127.0.0.1:" + p.address.getPort() + "\n");
            // each launch: {Hydra, mpiproxy run cold, the same warm (null without the front)}
            MpichPrograms.Launcher cold = MpichPrograms.ours(p.v2.keyFile(), nodeMap);
            MpichPrograms.Launcher[] all = {MpichPrograms.hydra(mpiexec), cold, warm == null ? null : warm.warm(cold)};
            Path initFinalize = programs.resolve("init_finalize");
            Map<Integer, Samples[]> start = new LinkedHashMap<>();
            for (int n : MpichPrograms.SIZES) {
                Samples[] s = {new Samples(), new Samples(), warm == null ? null : new Samples()};
                for (int r = 0; r < rounds + 1; r++) {
                    for (int i = 0; i < all.length; i++) {
                        if (all[i] != null) {
                            double ms = launch(warm, i, all[i].command(n, initFinalize), env).millis();
                            if (r > 0) {
                                s[i].add(ms);
                            }
                        }
                    }
                }
                start.put(n, s);
                System.out.printf(Locale.ROOT, "  n=%d: mpiexec %.0f ms, mpiproxy run %.0f ms, warm %s%n", n,
                        s[0].median(), s[1].median(), s[2] == null ? "-" : String.format(Locale.ROOT, "%.0f ms",
                        s[2].median()));
            }
            // what bounds the ratio at n = 8: the parts of a start-up, each measured alone
            Map<String, Samples> parts = new LinkedHashMap<>();
            List<String> names = new ArrayList<>(List.of("mpiexec -n 8 /bin/true", "mpiproxy run -n 8 /bin/true",
                    "mpiproxy --version (JVM start)", "init_finalize alone (MPICH singleton, no launcher)"));
            List<List<String>> commands = new ArrayList<>(List.of(all[0].command(8, programs.resolve("true")),
                    cold.command(8, programs.resolve("true")),
                    List.of("sh", MpichPrograms.SCRIPT.toString(), "--version"),
                    List.of(initFinalize.toString())));
            if (warm != null) {
                names.add(2, "mpiproxy run -n 8 /bin/true, warm (front, launcher in the proxy's JVM)");
                commands.add(2, all[2].command(8, programs.resolve("true")));
            }
            for (String name : names) {
                parts.put(name, new Samples());
            }
            for (int r = 0; r < rounds + 1; r++) {
                for (int i = 0; i < names.size(); i++) {
                    // the cold launch is second, the warm one third when there is one, the rest plain commands
                    int launcher = i == 1 ? 1 : i == 2 && warm != null ? 2 : 0;
                    double ms = launch(warm, launcher, commands.get(i), env).millis();
                    if (r > 0) {
                        parts.get(names.get(i)).add(ms);
                    }
                }
            }
            Samples[] pingpong = {new Samples(), new Samples(), warm == null ? null : new Samples()};
            Samples[] bandwidth = {new Samples(), new Samples(), warm == null ? null : new Samples()};
            for (int r = 0; r < dataRounds; r++) {
                for (int i = 0; i < all.length; i++) {
                    if (all[i] != null) {
                        pingpong[i].add(MpichPrograms.figure(launch(warm, i, all[i].command(2,
                                programs.resolve("pingpong")), env).out(), "pingpong_us"));
                        bandwidth[i].add(MpichPrograms.figure(launch(warm, i, all[i].command(2,
                                programs.resolve("bandwidth")), env).out(), "bandwidth_MBps"));
                    }
                }
            }
            report.mpich(mpiexec, start, parts, pingpong, bandwidth, WarmRuns.unavailable());
        }
        return null;
    }

    /**
     * Runs one launch of the MPICH phase, checked to have taken its path.
     *
     * @param launcher 0 Hydra, 1 {@code mpiproxy run} cold, 2 warm
     */
    private MpichPrograms.Run launch(WarmRuns warm, int launcher, List<String> command, Map<String, String> env)
            throws IOException, InterruptedException {
        return launcher == 2 ? warm.warmRun(command, env, work) : launcher == 1
                ? WarmRuns.coldRun(warm, command, env, work) : MpichPrograms.run(command, env, work);
    }

    // ------------------------------------------------------------------ a user without the cluster key

    private Void user() throws Exception {
        report.userLaunch(UserLaunch.measure(work, quick ? 5 : 15));
        return null;
    }

    // ------------------------------------------------------------------ Java programs of the mpi package

    private Void javaMpi() throws Exception {
        String mpiexec = findMpiexec();
        Path jar = MpichPrograms.cliJar();
        String why = MpichPrograms.unavailable(mpiexec, jar);
        if (why == null) {
            why = JavaMpiPrograms.unavailable();
        }
        if (why != null) {
            report.javaMpiSkipped(why);
            return null;
        }
        int dataRounds = quick ? 1 : 3;
        MpichPrograms.compile(programs);
        JavaMpiPrograms.install(programs);
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"),
                "MPIPROXY_CLI_JAR", jar.toAbsolutePath().toString());
        Map<String, String> tcp = new LinkedHashMap<>(env);
        tcp.putAll(JavaMpiPrograms.MPICH_TCP);
        Path dir = Files.createTempDirectory(work, "key-");
        Path key = V2Benchmarks.keyFile(dir);
        try (ProxyFixture n1 = new ProxyFixture(programs, work, Duration.ofSeconds(5), ProxyFixture.RING_CAPACITY,
                new EmbeddedProxy.V2(key, 1448, "127.0.0.1"));
             ProxyFixture n2 = new ProxyFixture(programs, work, Duration.ofSeconds(5), ProxyFixture.RING_CAPACITY,
                     new EmbeddedProxy.V2(key, 1448, "127.0.0.2"))) {
            Path nodeMap = dir.resolve("nodes");
            Files.writeString(nodeMap, "n1 127.0.0.1:" + n1.address.getPort() + "\nn2 127.0.0.2:" + n2.address.getPort()
                    + "\n");
            MpichPrograms.Launcher hydra = MpichPrograms.hydra(mpiexec);
            JavaMpiPrograms ours = new JavaMpiPrograms(programs, key, nodeMap);
            // each row: {MPICH under Hydra, ours}; MPICH over shared memory for one node, over TCP for two
            Samples[][] rows = new Samples[5][];
            for (int i = 0; i < rows.length; i++) {
                rows[i] = new Samples[] {new Samples(), new Samples()};
            }
            // one node: a million round trips after 100,000 of warm-up (C and Java alike), so that the
            // figure is the JIT-compiled path and not its first seconds in the interpreter
            String ppShm = "1000000";
            String pp = "20000";
            // 8 busy-polling MPICH ranks on this machine's 2 CPUs take about 25 ms an allReduce
            String allReduceRounds = "200";
            for (int r = 0; r < dataRounds + 1; r++) {
                boolean warm = r > 0;
                add(warm, rows[0][0], MpichPrograms.run(hydra.command(2, programs.resolve("pingpong"), ppShm), env, work), "pingpong_us");
                add(warm, rows[0][1], ours.run("n1:3", 3, "PingPong", env, work, ppShm, "1", "2"), "pingpong_us");
                add(warm, rows[1][0], MpichPrograms.run(hydra.command(2, programs.resolve("bandwidth")), env, work), "bandwidth_MBps");
                add(warm, rows[1][1], ours.run("n1:3", 3, "Bandwidth", env, work, "400", "1", "2"), "bandwidth_MBps");
                add(warm, rows[2][0], MpichPrograms.run(hydra.command(2, programs.resolve("pingpong")), tcp, work), "pingpong_us");
                add(warm, rows[2][1], ours.run("n1:1,n2:1", 2, "PingPong", env, work, pp), "pingpong_us");
                add(warm, rows[3][0], MpichPrograms.run(hydra.command(2, programs.resolve("bandwidth")), tcp, work), "bandwidth_MBps");
                add(warm, rows[3][1], ours.run("n1:1,n2:1", 2, "Bandwidth", env, work, "400"), "bandwidth_MBps");
                add(warm, rows[4][0], MpichPrograms.run(hydra.command(8, programs.resolve("allreduce"), allReduceRounds), env, work), "allreduce_us");
                add(warm, rows[4][1], ours.run("n1:8", 8, "AllReduce", env, work, allReduceRounds), "allreduce_us");
                if (warm) {
                    System.out.printf(Locale.ROOT, "  after round %d, medians (MPICH / ours): shm ping-pong %.3f / %.3f us,"
                            + " allReduce of 8 %.1f / %.1f us%n", r, rows[0][0].median(), rows[0][1].median(),
                            rows[4][0].median(), rows[4][1].median());
                }
            }
            report.javaMpi(mpiexec, rows);
        }
        return null;
    }

    /** Adds the figure {@code key} of a run when {@code warm} (the first round warms the page cache and the JIT of the launcher). */
    private static void add(boolean warm, Samples to, MpichPrograms.Run run, String key) {
        double v = MpichPrograms.figure(run.out(), key);
        if (warm) {
            to.add(v);
        }
    }

    private static String findMpiexec() {
        for (String name : new String[] {"/usr/bin/mpiexec.mpich", "/usr/bin/mpiexec.hydra", "/usr/bin/mpiexec"}) {
            if (Files.isExecutable(Path.of(name))) {
                return name;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ loss

    private Void loss() throws Exception {
        String why = LossChild.unavailable();
        if (why != null) {
            report.lossSkipped(why);
            return null;
        }
        String ns = "mpiproxy-bench-" + ProcessHandle.current().pid();
        run("ip", "netns", "add", ns);
        try {
            run("ip", "-n", ns, "link", "set", "lo", "up");
            List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns,
                    ProcessHandle.current().info().command().orElse("java"), "-cp", System.getProperty("java.class.path"),
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", Harness.class.getName(), "--loss-child",
                    programs.toString()));
            if (quick) {
                command.add("--quick");
            }
            Map<String, String> values = new LinkedHashMap<>();
            Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Thread reaper = new Thread(() -> {
                try {
                    if (!child.waitFor(4, TimeUnit.MINUTES)) {
                        child.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    child.destroyForcibly();
                }
            }, "loss-child-reaper");
            reaper.setDaemon(true);
            reaper.start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    System.out.println("   " + line);
                    int eq = line.indexOf('=');
                    if (eq > 0) {
                        values.put(line.substring(0, eq), line.substring(eq + 1));
                    }
                }
            }
            if (!child.waitFor(5, TimeUnit.MINUTES) || child.exitValue() != 0) {
                throw new IllegalStateException("loss measurement in namespace " + ns + " failed: " + values);
            }
            report.loss(values);
        } finally {
            run("ip", "netns", "del", ns);
        }
        return null;
    }

    static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + output.trim());
        }
        return output;
    }

    // ------------------------------------------------------------------ idle

    private Void idle() throws Exception {
        int seconds = quick ? 5 : 10;
        try (ProxyFixture p = proxy()) {
            // one job through the proxy first, so the idle state follows real work
            LaunchBenchmarks.execToAck(p, "true", 0, 3);
            Path receiveThread = Memory.threadStat(org.mpiproxy.transport.udp.internal.UdpTransport.THREAD_NAME);
            Path self = Memory.processStat(ProcessHandle.current().pid());
            long t0 = Memory.cpuTicks(receiveThread);
            long s0 = Memory.cpuTicks(self);
            Thread.sleep(seconds * 1000L);
            double idleThread = (Memory.cpuTicks(receiveThread) - t0) / Memory.TICKS_PER_SECOND / seconds;
            double idleProcess = (Memory.cpuTicks(self) - s0) / Memory.TICKS_PER_SECOND / seconds;

            // a rank blocked in a receive (Java, the mpi library) while the host waits for its data
            try (V1Host host = new V1Host(p.address)) {
                host.exec(1, 2, "blocked " + LATE_ANSWERS);
                int result = host.await(org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC);
                if (result != 0) {
                    throw new IllegalStateException("EXEC blocked failed: " + result);
                }
                host.recv(1, UdpBenchmarks.INT, 1);
                Thread.sleep(3000);
                long rankPid = ProcessHandle.current().children().filter(ProcessHandle::isAlive)
                        .mapToLong(ProcessHandle::pid).max().orElseThrow();
                Path rank = Memory.processStat(rankPid);
                long r0 = Memory.cpuTicks(rank);
                t0 = Memory.cpuTicks(receiveThread);
                Thread.sleep(seconds * 1000L);
                double blockedRank = (Memory.cpuTicks(rank) - r0) / Memory.TICKS_PER_SECOND / seconds;
                double pendingThread = (Memory.cpuTicks(receiveThread) - t0) / Memory.TICKS_PER_SECOND / seconds;
                // how late an answer comes when rank and proxy have waited long: the host sends the
                // int the rank waits for, the rank echoes it into the RECV the proxy holds
                double[] lateMillis = new double[LATE_ANSWERS];
                for (int i = 0; i < LATE_ANSWERS; i++) {
                    if (i > 0) {
                        host.recv(1, UdpBenchmarks.INT, 1);
                    }
                    Thread.sleep(LATE_AFTER_MILLIS);
                    long t = System.nanoTime();
                    host.sendInt(1, i);
                    if (host.await(org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV) != 0) {
                        throw new IllegalStateException("RECV of the echo failed");
                    }
                    lateMillis[i] = (System.nanoTime() - t) / 1e6;
                }
                host.terminate(1);
                host.await(org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE);
                report.idle(seconds, idleThread, idleProcess, blockedRank, pendingThread);
                report.lateAnswers(LATE_AFTER_MILLIS, lateMillis);
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ growth

    private Void growth() throws Exception {
        int[] ranks = quick ? new int[] {1, 4, 16, 64} : new int[] {1, 2, 4, 8, 16, 32, 64, 128, 256};
        int[] jobs = quick ? new int[] {1, 4, 16} : new int[] {1, 2, 4, 8, 16, 32};
        List<LaunchBenchmarks.Growth> rankCurve = new ArrayList<>();
        List<LaunchBenchmarks.Growth> jobCurve = new ArrayList<>();
        try (ProxyFixture p = proxy()) {
            LaunchBenchmarks.ranks(p, "idle", 4);
            for (int n : ranks) {
                rankCurve.add(LaunchBenchmarks.ranks(p, "idle", n));
                System.out.println("   " + rankCurve.get(rankCurve.size() - 1));
            }
            for (int j : jobs) {
                jobCurve.add(LaunchBenchmarks.jobs(p, "idle", j));
                System.out.println("   " + jobCurve.get(jobCurve.size() - 1));
            }
        }
        Path dir = out.toAbsolutePath().getParent().resolve("benchmarks");
        Files.createDirectories(dir);
        Plot.write(dir.resolve("launch-ranks.png"), "One job of N ranks: EXEC to all acknowledgements",
                "ranks", "milliseconds", ranks, List.of(new Plot.Series("launch time (ms)",
                        rankCurve.stream().mapToDouble(LaunchBenchmarks.Growth::launchMillis).toArray())));
        Plot.write(dir.resolve("memory-ranks.png"), "One job of N ranks: memory while they run", "ranks", "MiB",
                ranks, List.of(
                        new Plot.Series("channel files (MiB)",
                                rankCurve.stream().mapToDouble(LaunchBenchmarks.Growth::channelMiB).toArray()),
                        new Plot.Series("rank processes RSS (MiB)",
                                rankCurve.stream().mapToDouble(LaunchBenchmarks.Growth::ranksRssMiB).toArray()),
                        new Plot.Series("proxy JVM RSS (MiB)",
                                rankCurve.stream().mapToDouble(LaunchBenchmarks.Growth::proxyRssMiB).toArray())));
        Plot.write(dir.resolve("launch-jobs.png"), "J concurrent jobs of 2 ranks: EXEC to all acknowledgements",
                "jobs", "milliseconds", jobs, List.of(new Plot.Series("launch time (ms)",
                        jobCurve.stream().mapToDouble(LaunchBenchmarks.Growth::launchMillis).toArray())));
        // Hydra beside each point, in the same run: one job of N ranks, and J jobs of 2 at once
        String mpiexec = findMpiexec();
        List<Double> hydraRanks = new ArrayList<>();
        List<Double> hydraJobs = new ArrayList<>();
        if (mpiexec != null) {
            for (int n : ranks) {
                hydraRanks.add(LaunchBenchmarks.mpiexec(mpiexec, n, 1, 3).median());
                System.out.printf(Locale.ROOT, "   mpiexec -n %d: %.1f ms%n", n, hydraRanks.get(hydraRanks.size() - 1));
            }
            for (int j : jobs) {
                LaunchBenchmarks.mpiexecJobs(mpiexec, j);
                Samples s = new Samples();
                for (int i = 0; i < 3; i++) {
                    s.add(LaunchBenchmarks.mpiexecJobs(mpiexec, j));
                }
                hydraJobs.add(s.median());
                System.out.printf(Locale.ROOT, "   %d x mpiexec -n 2: %.1f ms%n", j, s.median());
            }
        }
        report.growth(rankCurve, jobCurve, mpiexec == null ? null : hydraRanks, mpiexec == null ? null : hydraJobs);
        return null;
    }

    // ------------------------------------------------------------------ resources

    private Void resources() throws Exception {
        try (ProxyFixture p = proxy()) {
            List<ResourceBenchmark.Row> rows = ResourceBenchmark.ranks(p, "idle", 1, 64, 400);
            rows.forEach(r -> System.out.println("   " + r));
            ResourceBenchmark.Flood flood = ResourceBenchmark.flood(p, "flood", 10);
            System.out.println("   " + flood);
            report.resources(rows, flood);
        }
        return null;
    }

    // ------------------------------------------------------------------ programs

    /** Echoes measured after a long wait, and how long rank and proxy wait before each. */
    static final int LATE_ANSWERS = 5;
    static final long LATE_AFTER_MILLIS = 2000;

    /**
     * {@code true}: a copy of /bin/true; {@code idle}: sleeps; {@code flood}: writes output without
     * pause; {@code blocked}: a Java rank blocked in recv.
     */
    static void writePrograms(Path programs) throws IOException {
        Files.copy(Path.of("/bin/true"), programs.resolve("true"), StandardCopyOption.REPLACE_EXISTING);
        executable(programs.resolve("idle"), "#!/bin/sh\nexec sleep 3600\n");
        executable(programs.resolve("flood"), "#!/bin/sh\nexec yes\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        executable(programs.resolve("blocked"), "#!/bin/sh\nexec '" + java + "' -Xshare:auto -XX:TieredStopAtLevel=1 -cp '"
                + System.getProperty("java.class.path") + "' " + BlockedRank.class.getName() + " \"$@\"\n");
        programs.resolve("true").toFile().setExecutable(true);
    }

    private static void executable(Path file, String text) throws IOException {
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private void cleanUp() throws IOException {
        try (Stream<Path> files = Files.walk(work)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }

    static String now() {
        return Instant.now().toString();
    }
}
