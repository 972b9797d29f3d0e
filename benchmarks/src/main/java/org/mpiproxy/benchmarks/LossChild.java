package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs inside a network namespace of its own: the exact 64 KiB host-to-rank stream over protocol
 * v2 (every byte of every message checked by the rank, {@link V2Benchmarks#sendStream(ProxyFixture,
 * Duration, int, boolean)}) without faults, then with nft rules that drop 10% of the UDP
 * datagrams between host and proxy and duplicate 10% of them, from the EXEC to the last
 * TERMINATE reply. Prints {@code key=value} lines for the parent.
 */
final class LossChild {

    /**
     * Drops 10% of the UDP datagrams to and from the proxy's port on input, duplicates 10% of
     * them on output (counted, so that the run shows the faults happened); {@code %1$d} is the
     * port. The faults hit the network path, host to proxy and back: the doorbells the proxy
     * rings from that port (8-byte datagrams, 16 bytes with the UDP header) wake a rank on the
     * same node (docs/ring-layout.md), they are not network traffic.
     */
    static final String FAULTS = String.join("\n",
            "table inet mpiproxybenchloss {",
            "  chain in { type filter hook input priority 0; policy accept;",
            "    udp dport %1$d udp length != 16 numgen random mod 10 < 1 counter drop;",
            "    udp sport %1$d udp length != 16 numgen random mod 10 < 1 counter drop; }",
            "}",
            "table ip mpiproxybenchdup {",
            "  chain out { type filter hook output priority 0; policy accept;",
            "    ip daddr 127.0.0.1 udp dport %1$d udp length != 16 numgen random mod 10 < 1 counter dup to 127.0.0.1;",
            "    ip daddr 127.0.0.1 udp sport %1$d udp length != 16 numgen random mod 10 < 1 counter dup to 127.0.0.1; }",
            "}", "");

    private static final Pattern COUNTER = Pattern.compile("counter packets (\\d+) bytes \\d+ (drop|dup)");

    /** The message size of the stream: the 64 KiB messages of the v2 row. */
    static final int MESSAGE = 65536;

    private LossChild() {
    }

    /** @return why the measurement cannot run here, or {@code null} when it can */
    static String unavailable() {
        try {
            String status = Files.readString(Path.of("/proc/self/status"));
            if (!status.lines().filter(l -> l.startsWith("Uid:")).findFirst().orElse("").matches("Uid:\\s+0\\s.*")) {
                return "not running as root: network namespaces and nft need root";
            }
        } catch (IOException e) {
            return "cannot read /proc/self/status: " + e;
        }
        for (String tool : new String[] {"ip", "nft"}) {
            if (!onPath(tool)) {
                return "'" + tool + "' is not installed (run.sh installs nftables with apt-get when it can)";
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
        Path rules = work.resolve("faults.nft");
        Duration d = Duration.ofSeconds(quick ? 1 : 2);
        int rounds = quick ? 2 : 3;
        // alternate, so that drift of the machine touches both alike
        for (int i = 0; i < rounds; i++) {
            measure("lossless." + i, programs, work, d, null);
            measure("faults." + i, programs, work, d, rules);
        }
    }

    private static void measure(String key, Path programs, Path work, Duration d, Path rules) throws Exception {
        long dropped = 0;
        long duplicated = 0;
        UdpBenchmarks.Stream s;
        try {
            Path keys = Files.createTempDirectory(work, "key-");
            try (ProxyFixture p = new ProxyFixture(programs, work, Duration.ZERO, Harness.V2_LARGE_RINGS[1],
                    V2Benchmarks.settings(V2Benchmarks.keyFile(keys), Harness.V2_LARGE_DATAGRAM))) {
                if (rules != null) {
                    // in force before the EXEC: the proxy's port is known once it is bound
                    Files.writeString(rules, String.format(Locale.ROOT, FAULTS, p.address.getPort()));
                    Harness.run("nft", "-f", rules.toString());
                }
                s = V2Benchmarks.sendStream(p, d, MESSAGE, true);
            }
        } finally {
            if (rules != null) {
                Matcher m = COUNTER.matcher(Harness.run("nft", "list", "ruleset"));
                while (m.find()) {
                    if (m.group(2).equals("drop")) {
                        dropped += Long.parseLong(m.group(1));
                    } else {
                        duplicated += Long.parseLong(m.group(1));
                    }
                }
                Harness.run("nft", "delete", "table", "inet", "mpiproxybenchloss");
                Harness.run("nft", "delete", "table", "ip", "mpiproxybenchdup");
            }
        }
        // every message the rank counted was compared byte for byte with what was sent
        System.out.printf(Locale.ROOT, "%s=%.3f %d %d %d %d %s%n", key, s.megabytesPerSecond(), s.sent(),
                s.received(), dropped, duplicated, s.detail());
    }
}
