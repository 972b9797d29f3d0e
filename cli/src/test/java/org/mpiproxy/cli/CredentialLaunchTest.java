package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;

/**
 * A job signed with a job key (docs/protocol-v2.md 4.1, 5.9), launched against two fake nodes
 * that serve key id 0 only ({@link JobKeyNode}): the launcher presents the credential to each node
 * before anything else, presents it again to a node that refused a request for want of it, and
 * ends the job with one line when a node refuses the credential.
 */
class CredentialLaunchTest {

    private static final long CEILING_SECONDS = 60;
    private static final long JOB = 0x10b5L;

    private ClusterKeys cluster;
    private JobKeyNode a;
    private JobKeyNode b;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void start() throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        cluster = ClusterKeys.of(Map.of(1, key), 1);
        a = new JobKeyNode(cluster);
        b = new JobKeyNode(cluster);
    }

    @AfterEach
    void stop() throws Exception {
        a.close();
        b.close();
    }

    /** Runs rank 0 ({@code true}) here and ranks 1 and 2 on nodes A and B as uid/gid 1000. */
    private int launch() throws Exception {
        List<Placement> ranks = List.of(new Placement("127.0.0.1", a.port(), 0, "127.0.0.1"),
                new Placement("127.0.0.1", b.port(), 0, "127.0.0.1"));
        LauncherIdentity identity = LauncherIdentity.asUser(cluster, JOB, 1000, 1000, System.currentTimeMillis(),
                "login1");
        JobRunner.Settings settings = new JobRunner.Settings("/bin/true", List.of(), ranks, Map.of(), true, null,
                Duration.ofSeconds(5), Duration.ofSeconds(10), null, 0, "v2", null, false, null, false, identity);
        JobRunner runner = new JobRunner(settings, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return CompletableFuture.supplyAsync(() -> {
            try {
                return runner.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }).get(CEILING_SECONDS, TimeUnit.SECONDS);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldPresentTheCredentialToEachNodeBeforeAnyOtherRequest() throws Exception {
        assertEquals(0, launch(), err());

        List<String> takenA = a.taken();
        assertEquals("CREDENTIAL", takenA.get(0), "A first learns the job key: " + a.log);
        assertEquals("STATUS", takenA.get(1), "the probe, of the job (not job 0): " + a.log);
        assertEquals("EXEC 1", takenA.get(2), a.log.toString());
        assertEquals(List.of("CREDENTIAL", "STATUS", "EXEC 2"), b.taken().subList(0, 3), b.log.toString());
        assertFalse(a.log.stream().anyMatch(e -> e.startsWith("refused")), "nothing refused: " + a.log);
        assertFalse(b.log.stream().anyMatch(e -> e.startsWith("refused")), "nothing refused: " + b.log);
    }

    @Test
    void shouldPresentTheCredentialAgainToANodeThatRefusedARequestForWantOfIt() throws Exception {
        a.forgetAtFirstExec = true;

        assertEquals(0, launch(), err());

        List<String> log = List.copyOf(a.log);
        assertEquals(List.of("CREDENTIAL", "STATUS", "refused EXEC 1: no credential"), log.subList(0, 3),
                log.toString());
        int again = log.subList(3, log.size()).indexOf("CREDENTIAL") + 3;
        assertTrue(again >= 3 && again < log.indexOf("EXEC 1"),
                "presented again, then the refused EXEC went again: " + log);
        assertEquals(1, b.log.stream().filter("CREDENTIAL"::equals).count(), "B never forgot it: " + b.log);
        assertTrue(b.log.contains("EXEC 2"), b.log.toString());
    }

    @Test
    void shouldEndTheJobWithOneLineWhenANodeRefusesTheCredential() throws Exception {
        b.credentialResult = V2Credential.ERR_PERMISSION;
        b.credentialReason = "job 00000000000010b5 belongs to uid 1001";

        assertEquals(JobRunner.EXIT_CANNOT_START, launch(), err());

        assertEquals("mpiproxy: node 127.0.0.1:" + b.port() + " refused the job's credential"
                + " (MPIPROXY_ERR_PERMISSION): job 00000000000010b5 belongs to uid 1001\n", err());
        assertFalse(a.log.stream().anyMatch(e -> e.startsWith("EXEC")), "no rank was started: " + a.log);
        assertFalse(b.log.stream().anyMatch(e -> e.startsWith("EXEC")), "no rank was started: " + b.log);
    }
}
