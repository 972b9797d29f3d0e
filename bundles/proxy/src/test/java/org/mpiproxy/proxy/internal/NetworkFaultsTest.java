package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * v2 under real packet loss and duplication: {@link V2LossScenario} runs in its own network
 * namespace ({@code unshare -n}) whose loopback drops 10% of UDP datagrams on input and
 * duplicates 10% on output (nft {@code numgen} rules). Needs root, unshare and nft; skipped
 * otherwise.
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

    @TempDir
    Path dir;

    private static boolean works(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Test
    void shouldMoveAMillionElementsExactlyOnceThroughLossAndDuplication() throws Exception {
        Path rules = dir.resolve("faults.nft");
        Files.writeString(rules, RULES);
        assumeTrue(works("unshare", "-n", "sh", "-c", "ip link set lo up && nft -f " + rules),
                "network namespaces with nft rules need root, unshare (util-linux), ip (iproute2) and nft (nftables)");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path out = dir.resolve("scenario.out");
        ProcessBuilder pb = new ProcessBuilder(List.of("unshare", "-n", "sh", "-c",
                "ip link set lo up && nft -f \"$0\" && \"$1\" -cp \"$2\" " + V2LossScenario.class.getName()
                        + " \"$3\" 250000; status=$?; nft list ruleset; exit $status",
                rules.toString(), java, classpath, dir.resolve("work").toString()))
                .redirectErrorStream(true).redirectOutput(out.toFile());
        Process p = pb.start();
        boolean ended = p.waitFor(5, TimeUnit.MINUTES);
        if (!ended) {
            p.destroyForcibly();
        }
        String output = Files.readString(out, StandardCharsets.UTF_8);
        assertTrue(ended, "scenario did not end in 5 minutes:\n" + output);
        assertEquals(0, p.exitValue(), output);
        assertTrue(output.contains("ok 1000000"), output);
        // the faults really happened
        assertTrue(output.matches("(?s).*counter packets [1-9][0-9]+ bytes [0-9]+ drop.*"), output);
        assertTrue(output.matches("(?s).*counter packets [1-9][0-9]+ bytes [0-9]+ dup to.*"), output);
    }
}
