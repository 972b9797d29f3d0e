package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * v2 under real packet faults: {@link V2LossScenario} (two jobs of two ranks, 1e6 elements)
 * runs in its own network namespace ({@code unshare -n}) whose loopback drops 10% of UDP
 * datagrams on input and duplicates 10% on output (nft {@code numgen} rules). The second test
 * also reorders: every UDP datagram goes through an NFQUEUE served by {@code nfqueue-reorder.py},
 * which holds a fifth of them for up to 8 ms while the others pass. Needs root, unshare and
 * nft (skipped otherwise); the reordering test also needs iptables, python3 and
 * libnetfilter-queue1 ({@code .ci/run} installs them; missing, the test fails) and a kernel
 * with NFQUEUE (skipped otherwise).
 */
class NetworkFaultsTest {

    private static final String RULES = String.join("\n",
            "table inet mpiproxyfault {",
            "  chain in { type filter hook input priority 0; policy accept;",
            "    udp dport != 0 numgen random mod 10 < 1 counter drop; }",
            "}",
            "table ip mpiproxydup {",
            "  chain out { type filter hook output priority 0; policy accept;",
            "    ip daddr 127.0.0.1 udp dport != 0 numgen random mod 10 < 1 counter dup to 127.0.0.1; }",
            "}", "");

    /** The queue number of the reordering rule; the namespace is private, any number does. */
    private static final String QUEUE = "7";
    /** nft has a {@code queue} statement, but only kernels with CONFIG_NFT_QUEUE run it; the xt target is older. */
    private static final String QUEUE_RULE = "iptables -A INPUT -p udp -j NFQUEUE --queue-num " + QUEUE
            + " --queue-bypass";
    private static final Pattern REORDERED = Pattern.compile(
            "nfqueue: packets (\\d+) held (\\d+) late (\\d+) flows (\\d+)");

    @TempDir
    Path dir;

    private record Outcome(int status, String output) {
    }

    private static Outcome run(Path output, long minutes, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        boolean ended = p.waitFor(minutes, TimeUnit.MINUTES);
        if (!ended) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        String text = Files.readString(output, StandardCharsets.UTF_8);
        assertTrue(ended, String.join(" ", command) + " did not end in " + minutes + " minutes:\n" + text);
        return new Outcome(p.exitValue(), text);
    }

    private Path faultRules() throws IOException, InterruptedException {
        Path rules = dir.resolve("faults.nft");
        Files.writeString(rules, RULES);
        Outcome probe = run(dir.resolve("probe.out"), 1, "unshare", "-n", "sh", "-c",
                "ip link set lo up && nft -f \"$0\"", rules.toString());
        assumeTrue(probe.status() == 0,
                "network namespaces with nft rules need root, unshare (util-linux), ip (iproute2) and nft (nftables): "
                        + probe.output());
        return rules;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String classpath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    private static void assertFaultsHappened(String output) {
        assertTrue(output.contains("ok 1000000"), output);
        assertTrue(output.matches("(?s).*counter packets [1-9][0-9]+ bytes [0-9]+ drop.*"), output);
        assertTrue(output.matches("(?s).*counter packets [1-9][0-9]+ bytes [0-9]+ dup to.*"), output);
    }

    @Test
    void shouldMoveAMillionElementsExactlyOnceThroughLossAndDuplication() throws Exception {
        Path rules = faultRules();
        Outcome outcome = run(dir.resolve("scenario.out"), 5, "unshare", "-n", "sh", "-c",
                "ip link set lo up && nft -f \"$0\" && \"$1\" -cp \"$2\" " + V2LossScenario.class.getName()
                        + " \"$3\" 250000; status=$?; nft list ruleset; exit $status",
                rules.toString(), java(), classpath(), dir.resolve("work").toString());
        assertEquals(0, outcome.status(), outcome.output());
        assertFaultsHappened(outcome.output());
    }

    @Test
    void shouldMoveAMillionElementsExactlyOnceInOrderThroughLossDuplicationAndReordering() throws Exception {
        Path rules = faultRules();
        Path reorderer = dir.resolve("nfqueue-reorder.py");
        try (InputStream in = NetworkFaultsTest.class.getResourceAsStream("nfqueue-reorder.py")) {
            assertTrue(in != null, "nfqueue-reorder.py is not on the test class path");
            Files.copy(in, reorderer);
        }
        Outcome tools = run(dir.resolve("tools.out"), 1, "sh", "-c", "command -v iptables && command -v python3");
        if (tools.status() != 0) {
            fail("the reordering test needs iptables and python3 (.ci/run installs them): " + tools.output());
        }
        Outcome probe = run(dir.resolve("nfqueue-probe.out"), 1, "unshare", "-n", "sh", "-c",
                "ip link set lo up; " + QUEUE_RULE + " || exit 10; python3 \"$0\" --probe " + QUEUE,
                reorderer.toString());
        assumeTrue(probe.status() != 10, "the kernel has no NFQUEUE target (xt_NFQUEUE): " + probe.output());
        assumeTrue(probe.status() != 3, "the kernel refuses to bind an NFQUEUE (nfnetlink_queue): " + probe.output());
        assertEquals(0, probe.status(), "probing NFQUEUE failed (exit 2: install libnetfilter-queue1): "
                + probe.output());

        List<String> command = new ArrayList<>(List.of("unshare", "-n", "sh", "-c",
                "ip link set lo up && nft -f \"$0\" && " + QUEUE_RULE + " && python3 \"$4\" " + QUEUE
                        + " 20 8 -- \"$1\" -cp \"$2\" " + V2LossScenario.class.getName()
                        + " \"$3\" 250000; status=$?; nft list ruleset; exit $status",
                rules.toString(), java(), classpath(), dir.resolve("work").toString(), reorderer.toString()));
        Outcome outcome = run(dir.resolve("scenario.out"), 8, command.toArray(String[]::new));
        assertEquals(0, outcome.status(), outcome.output());
        assertFaultsHappened(outcome.output());
        // reordering really happened: datagrams of one UDP flow were accepted after later ones
        Matcher m = REORDERED.matcher(outcome.output());
        assertTrue(m.find(), outcome.output());
        long packets = Long.parseLong(m.group(1));
        long late = Long.parseLong(m.group(3));
        System.out.println(m.group());
        assertTrue(packets > 1000 && late > 100, "too little reordering: " + m.group() + "\n" + outcome.output());
    }
}
