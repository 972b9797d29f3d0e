package org.mpiproxy.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * Runs inside a network namespace: the host-to-rank SEND stream without loss, then with 10%
 * of the datagrams to the proxy's port dropped by {@code iptables -m statistic}. Prints
 * {@code key=value} lines for the parent.
 */
final class LossChild {

    private LossChild() {
    }

    /** @return why the measurement cannot run here, or {@code null} when it can */
    static String unavailable() {
        try {
            String status = Files.readString(Path.of("/proc/self/status"));
            if (!status.lines().filter(l -> l.startsWith("Uid:")).findFirst().orElse("").matches("Uid:\\s+0\\s.*")) {
                return "not running as root: network namespaces and iptables need root";
            }
        } catch (java.io.IOException e) {
            return "cannot read /proc/self/status: " + e;
        }
        for (String tool : new String[] {"ip", "iptables"}) {
            if (!onPath(tool)) {
                return "'" + tool + "' is not installed (run.sh installs iptables with apt-get when it can)";
            }
        }
        return null;
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/sbin", tool));
    }

    static void run(Path programs, boolean quick) throws Exception {
        Path work = Files.createTempDirectory("mpiproxy-loss-");
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 3;
        for (int i = 0; i < rounds; i++) {
            measure("lossless." + i, programs, work, d, null);
        }
        for (int i = 0; i < rounds; i++) {
            measure("lossy." + i, programs, work, d, "0.1");
        }
    }

    private static void measure(String key, Path programs, Path work, Duration d, String probability) throws Exception {
        try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ZERO)) {
            String port = Integer.toString(p.address.getPort());
            String[] rule = {"INPUT", "-p", "udp", "--dport", port, "-m", "statistic", "--mode", "random",
                "--probability", probability == null ? "0" : probability, "-j", "DROP"};
            // the rule only covers the stream: EXEC and TERMINATE have no retransmission in v1 either
            UdpBenchmarks.Step add = () -> {
                if (probability != null) {
                    Harness.run(concat("iptables", "-A", rule));
                }
            };
            UdpBenchmarks.Step remove = () -> {
                if (probability != null) {
                    Harness.run(concat("iptables", "-D", rule));
                }
            };
            UdpBenchmarks.Stream s = UdpBenchmarks.proxySendStream(p, d, UdpBenchmarks.V1_PAYLOAD, add, remove);
            System.out.printf(Locale.ROOT, "%s=%.3f %d %d%n", key,
                    s.received() * (double) UdpBenchmarks.V1_PAYLOAD / s.seconds() / 1e6, s.sent(), s.received());
        }
    }

    private static String[] concat(String a, String b, String[] rest) {
        String[] all = new String[rest.length + 2];
        all[0] = a;
        all[1] = b;
        System.arraycopy(rest, 0, all, 2, rest.length);
        return all;
    }
}
