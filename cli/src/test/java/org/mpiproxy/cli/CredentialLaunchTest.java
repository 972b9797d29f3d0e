package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;

/**
 * A job signed with a job key (docs/protocol-v2.md 4.1, 5.9), launched against two fake nodes
 * that serve key id 0 only ({@link JobKeyNode}): the launcher presents the credential to each node
 * before anything else, presents it again to a node that refused a request for want of it, and
 * ends the job with one line when a node refuses the credential. Rank 0, which runs here as the
 * launching user, gets the job key and the credential in its environment, only under a credential;
 * the other ranks' EXECs never carry them.
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
        return launch(LauncherIdentity.asUser(cluster, JOB, 1000, 1000, System.currentTimeMillis(), "login1"),
                List.of("/bin/true"), Map.of(), true);
    }

    /**
     * Runs rank 0 ({@code command}) here and, with {@code nodes}, ranks 1 and 2 on nodes A and B.
     *
     * @param identity whom the launcher acts as; {@code null}: the cluster key of {@code keySpec}
     * @param extra    the {@code -x} variables
     */
    private int launch(LauncherIdentity identity, List<String> command, Map<String, String> extra, boolean nodes)
            throws Exception {
        return launch(identity, command, extra, nodes, null);
    }

    private int launch(LauncherIdentity identity, List<String> command, Map<String, String> extra, boolean nodes,
                       String keySpec) throws Exception {
        List<Placement> ranks = !nodes ? List.of() : List.of(new Placement("127.0.0.1", a.port(), 0, "127.0.0.1"),
                new Placement("127.0.0.1", b.port(), 0, "127.0.0.1"));
        JobRunner.Settings settings = new JobRunner.Settings(command.get(0), command.subList(1, command.size()), ranks,
                extra, true, null, Duration.ofSeconds(5), Duration.ofSeconds(10), null, 0, "v2", keySpec, false, null,
                false, identity);
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

    /** @return rank 0's variables named {@code MPIPROXY_*}, as it wrote its environment to {@code file} */
    private static Map<String, String> mpiproxyVariables(Path file) throws Exception {
        Map<String, String> variables = new TreeMap<>();
        for (String line : Files.readAllLines(file)) {
            int eq = line.indexOf('=');
            if (line.startsWith("MPIPROXY_") && eq > 0) {
                variables.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return variables;
    }

    @Test
    void shouldGiveRankZeroTheJobKeyAndCredentialAndNoOtherRankEither(@TempDir Path dir) throws Exception {
        Path seen = dir.resolve("rank-0.env");
        LauncherIdentity identity = LauncherIdentity.asUser(cluster, JOB, 1000, 1000, System.currentTimeMillis(),
                "login1");
        String jobKey = HexFormat.of().formatHex(identity.credential().keys().key(JobCredential.JOB_KEY_ID));
        String credential = HexFormat.of().formatHex(identity.credential().bytes());
        // what -x says under these names reaches no rank: rank 0 gets the launcher's, the others nothing
        Map<String, String> extra = Map.of(V2Credential.JOB_KEY_ENV, "ab".repeat(32), V2Credential.CREDENTIAL_ENV,
                "cd".repeat(88), "OTHER", "x");

        assertEquals(0, launch(identity, List.of("/bin/sh", "-c", "env > " + seen), extra, true), err());

        Map<String, String> env = mpiproxyVariables(seen);
        assertEquals(jobKey, env.get(V2Credential.JOB_KEY_ENV));
        assertEquals(credential, env.get(V2Credential.CREDENTIAL_ENV));
        assertEquals(64, jobKey.length());
        assertEquals(176, credential.length());
        assertEquals(JobRunner.Job.hex(JOB), env.get("MPIPROXY_JOB_ID"));
        assertFalse(env.containsKey(V2Control.KEY_FILE_ENV), "a user's rank 0 names no key file: " + env);
        for (JobKeyNode node : List.of(a, b)) {
            assertEquals(1, node.execPayloads.size(), node.log.toString());
            for (String exec : node.execPayloads) {
                assertTrue(exec.contains("OTHER=x"), "the -x variables go to the ranks: " + exec);
                for (String secret : List.of(V2Credential.JOB_KEY_ENV, V2Credential.CREDENTIAL_ENV, jobKey, credential,
                        "ab".repeat(32))) {
                    assertFalse(exec.contains(secret), secret + " in a rank's EXEC: " + exec);
                }
            }
        }
    }

    @Test
    void shouldGiveRankZeroTheKeyFileAndNoJobKeyUnderAClusterKey(@TempDir Path dir) throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
        Path seen = dir.resolve("rank-0.env");
        Map<String, String> extra = Map.of(V2Credential.JOB_KEY_ENV, "ab".repeat(32), V2Credential.CREDENTIAL_ENV,
                "cd".repeat(88));

        assertEquals(0, launch(null, List.of("/bin/sh", "-c", "env > " + seen), extra, false, key.toString()), err());

        Map<String, String> env = mpiproxyVariables(seen);
        assertEquals(key.toString(), env.get(V2Control.KEY_FILE_ENV));
        assertFalse(env.containsKey(V2Credential.JOB_KEY_ENV), env.toString());
        assertFalse(env.containsKey(V2Credential.CREDENTIAL_ENV), env.toString());
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
