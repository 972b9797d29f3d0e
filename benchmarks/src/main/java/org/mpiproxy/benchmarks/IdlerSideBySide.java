package org.mpiproxy.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

import org.mpiproxy.channel.shm.BackoffIdler;

/**
 * The rank back-off before and after the minimum yield time and the deep phase, in one run:
 * the CPU a thread idling on nothing uses (as a rank blocked in recv), the one-int round trip
 * through the proxy with the rank's echo thread waiting with either idler, and the
 * host-to-rank stream with the rank's consumer waiting with either. "old" is 20 spins, 5
 * yields, parks from 1 us to 1 ms; "new" is {@code new BackoffIdler()}.
 * <p>
 * Usage: {@code IdlerSideBySide [<seconds per CPU measurement>]}.
 */
public final class IdlerSideBySide {
    public static void main(String[] args) throws Exception {
        Supplier<BackoffIdler> old = () -> new BackoffIdler(20, 5, 1_000L, 1_000_000L);
        Supplier<BackoffIdler> neu = BackoffIdler::new;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int seconds = Integer.parseInt(args.length > 0 ? args[0] : "10");
        for (int round = 0; round < 2; round++) {
            for (String name : new String[] {"old", "new"}) {
                Supplier<BackoffIdler> s = name.equals("old") ? old : neu;
                long[] cpu = new long[1];
                Thread t = new Thread(() -> {
                    BackoffIdler idler = s.get();
                    long end = System.nanoTime() + seconds * 1_000_000_000L;
                    long c0 = mx.getCurrentThreadCpuTime();
                    while (System.nanoTime() < end) {
                        idler.idle(0);
                    }
                    cpu[0] = mx.getCurrentThreadCpuTime() - c0;
                });
                t.start();
                t.join();
                System.out.printf("idle-cpu %s round %d: %.3f%% of one CPU%n", name, round, 100.0 * cpu[0] / (seconds * 1e9));
            }
        }
        Path programs = Files.createTempDirectory("mpiproxy-idler-programs");
        Path work = Files.createTempDirectory("mpiproxy-idler-work");
        Harness.writePrograms(programs);
        for (int round = 0; round < 3; round++) {
            for (String name : new String[] {"old", "new"}) {
                try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ZERO)) {
                    Samples sm = UdpBenchmarks.proxyRoundTrip(p, 1000, 5000, name.equals("old") ? old : neu);
                    System.out.printf("rtt %s round %d: median %.1f us p90 %.1f p99 %.1f%n", name, round, sm.median(),
                        sm.percentile(90), sm.percentile(99));
                }
            }
            Samples raw = UdpBenchmarks.rawPingPong(1000, 5000);
            System.out.printf("rtt raw round %d: median %.1f us p90 %.1f%n", round, raw.median(), raw.percentile(90));
        }
        for (int round = 0; round < 3; round++) {
            for (String name : new String[] {"old", "new"}) {
                UdpBenchmarks.rankIdler = name.equals("old") ? old : neu;
                try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ZERO)) {
                    UdpBenchmarks.Stream st = UdpBenchmarks.proxySendStream(p, Duration.ofSeconds(2), 1448);
                    System.out.printf("send stream %s round %d: %.0f datagrams/s, loss %.1f%%%n", name, round,
                        st.perSecond(), 100 * st.loss());
                }
            }
            UdpBenchmarks.rankIdler = neu;
            UdpBenchmarks.Stream raw = UdpBenchmarks.rawStream(1448, Duration.ofSeconds(2));
            System.out.printf("send stream raw round %d: %.0f datagrams/s, loss %.1f%%%n", round, raw.perSecond(),
                100 * raw.loss());
        }
        System.exit(0);
    }
}
