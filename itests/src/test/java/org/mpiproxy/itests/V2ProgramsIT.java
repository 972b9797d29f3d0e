package org.mpiproxy.itests;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.Test;
import org.mpiproxy.api.ProxyStatus;

/**
 * The shipped programs as hosts against the booted distribution: mpiping and mpiprime over v2
 * (the default, with the key the node generated on its first start), and mpiping over v1; then
 * mpiecho's self-check over v2 and over v1.
 */
public class V2ProgramsIT extends MpiProxyTestSupport {

    /** Output and exit status of a program run. */
    private static final class Run {
        final int status;
        final String output;

        Run(int status, String output) {
            this.status = status;
            this.output = output;
        }
    }

    private Run run(Map<String, String> env, String... command) throws IOException, InterruptedException {
        Path hostfile = programsDirectory().resolve("itest-hostfile");
        Files.writeString(hostfile, "127.0.0.1:" + udpPort() + ":0\n127.0.0.1:" + udpPort() + ":0\n");
        ProcessBuilder pb = new ProcessBuilder(command).directory(programsDirectory().toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "(" + e + ")";
            }
        });
        // the programs' own timers decide how long a job may take; this only bounds a hang
        if (!p.waitFor(2 * TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " still runs after " + 2 * TIMEOUT.toSeconds()
                    + " s; its output:\n" + out.getNow("(not read)"));
        }
        try {
            return new Run(p.exitValue(), out.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError(String.join(" ", command) + ": its output could not be read", e);
        }
    }

    @Test
    public void shouldRunTheExamplesOverV2WithTheGeneratedKeyAndOverV1() throws Exception {
        awaitService(ProxyStatus.class, null);
        Path key = karafHome().resolve("etc").resolve("mpiproxy.key");
        awaitCondition(() -> Files.exists(key), TIMEOUT, () -> "no generated key " + key);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));

        Run ping = run(Map.of(), "./mpiping", "itest-hostfile");
        assertEquals(ping.output, 0, ping.status);
        assertTrue(ping.output, ping.output.contains("rank 1: pong 0x12345678"));
        assertTrue(ping.output, ping.output.contains("rank 2: pong 0x12345678"));
        // the ranks' own output, streamed by the proxy over v2 (OUTPUT) and printed by rank 0
        assertTrue(ping.output, ping.output.contains("[1] rank 1 of 3: pong sent\n"));
        assertTrue(ping.output, ping.output.contains("[2] rank 2 of 3: pong sent\n"));

        Run prime = run(Map.of(), "./mpiprime", "itest-hostfile", "100000");
        assertEquals(prime.output, 0, prime.status);
        assertTrue(prime.output, prime.output.contains("9592 primes below 100000"));

        Run v1 = run(Map.of("MPIPROXY_PROTOCOL", "v1"), "./mpiping", "itest-hostfile");
        assertEquals(v1.output, 0, v1.status);
        assertTrue(v1.output, v1.output.contains("rank 2: pong 0x12345678"));
        assertTrue(v1.output, !v1.output.contains("pong sent"));

        List<String> protocols = jobs().stream().map(j -> j.protocol()).sorted().toList();
        assertEquals(List.of("v1", "v2", "v2"), protocols);
        Long v2Execs = awaitService(ProxyStatus.class, null).counters().get("v2.exec.started");
        assertEquals(Long.valueOf(4), v2Execs);

        // mpiecho checks every element of each echo: over v2 13 datatypes x 2 messages and 1 MiB of
        // MPI_DOUBLE, one message each (52 + 13 x 3000 + 1048576 bytes); over v1 8 datatypes x 2 and
        // 1 MiB of MPI_LONG (30 + 8 x 3000 + 1048576), each datagram one message
        Run echo = run(Map.of(), "./mpiecho", "itest-hostfile");
        assertEquals(echo.output, 0, echo.status);
        for (int r = 1; r <= 2; r++) {
            assertTrue(echo.output, echo.output.contains("rank " + r + ": 27 messages echoed, 1087628 bytes, every element checked"));
            assertTrue(echo.output, echo.output.contains("[" + r + "] rank " + r + " of 3: echoed 27 messages, 1087628 bytes\n"));
        }
        Run echoV1 = run(Map.of("MPIPROXY_PROTOCOL", "v1"), "./mpiecho", "itest-hostfile", "1048576");
        assertEquals(echoV1.output, 0, echoV1.status);
        assertTrue(echoV1.output, echoV1.output.contains("rank 1: 17 messages echoed, 1072606 bytes, every element checked"));
        assertTrue(echoV1.output, echoV1.output.contains("rank 2: 17 messages echoed, 1072606 bytes, every element checked"));
    }
}
