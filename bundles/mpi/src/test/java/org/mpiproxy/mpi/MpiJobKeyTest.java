package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.mpi.internal.JobKeyProxy;
import org.mpiproxy.mpi.internal.Join;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;

/**
 * Rank 0 of a user who holds no cluster key (docs/protocol-v2.md 4.1, 5.9): with
 * {@code MPIPROXY_JOB_KEY} and {@code MPIPROXY_CREDENTIAL} in its environment (as {@code mpiproxy
 * run} gives them) it signs with the job key (key id 0) instead of reading a key file, presents the
 * credential to its node before the first EXEC and again after the node refused a request for want
 * of it, and fails with the node's reason when the node refuses the credential. The node is a fake
 * that serves key id 0 only ({@link JobKeyProxy}) and echoes what it is sent.
 */
class MpiJobKeyTest {

    private static final long JOB = 0x5eed_1234_abcdL;

    private ClusterKeys cluster;
    private JobCredential credential;
    private byte[] jobKey;
    private JobKeyProxy node;
    private final ByteArrayOutputStream text = new ByteArrayOutputStream();
    private final PrintStream diagnostics = new PrintStream(text, true, StandardCharsets.UTF_8);

    @BeforeEach
    void start() throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        cluster = ClusterKeys.of(Map.of(1, key), 1);
        long now = System.currentTimeMillis();
        credential = new JobCredential(1, 1000, 1000, JOB, now, now + 3_600_000, NodeIds.of("login1"), 42);
        jobKey = credential.jobKey(cluster);
        node = new JobKeyProxy(cluster);
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
    }

    /** Rank 0's environment under {@code mpiproxy run} with a job credential; no key file is there to read. */
    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put(Mpi.HOSTS_ENV, "127.0.0.1:" + node.port() + ":0");
        env.put(Mpi.PROGRAM_ENV, "echo");
        env.put(Mpi.TIMEOUT_ENV, "10");
        env.put(Mpi.JOB_ID_ENV, HexFormat.of().toHexDigits(JOB));
        env.put(Mpi.KEY_FILE_ENV, "/nonexistent/mpiproxy.key");
        env.put(Join.JOB_KEY_ENV, HexFormat.of().formatHex(jobKey));
        env.put(Join.CREDENTIAL_ENV, HexFormat.of().formatHex(credential.encode(cluster)));
        return env;
    }

    private Mpi init(Map<String, String> env) {
        return Mpi.init(new String[0], env::get, new Properties(), diagnostics, e -> null);
    }

    /** Sends 1000 ints to rank 1, which echoes them, and checks they come back. */
    private static void echo(Mpi mpi) {
        int[] sent = new int[1000];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = i * 7 - 3;
        }
        int[] back = new int[sent.length];
        mpi.send(sent, 0, sent.length, 1);
        mpi.recv(back, 0, back.length, 1);
        assertArrayEquals(sent, back);
    }

    private List<String> refusedOtherThanProbes() {
        // a probe goes from a socket of its own: it may overtake the credential on its way
        return node.log.stream().filter(e -> e.startsWith("refused") && !e.startsWith("refused STATUS")).toList();
    }

    @Test
    void shouldSignWithTheJobKeyAndPresentTheCredentialBeforeTheFirstExec() {
        try (Mpi mpi = init(env())) {
            assertEquals(2, mpi.size());
            echo(mpi);
        }

        assertEquals(Set.of(JobCredential.JOB_KEY_ID), node.keyIds, "every request signed with the job key");
        assertEquals(List.of(credential), node.presented, "the credential as issued, once");
        List<String> taken = node.taken();
        assertEquals("CREDENTIAL", taken.get(0), node.log.toString());
        assertTrue(taken.indexOf("EXEC 1") > 0, node.log.toString());
        assertTrue(taken.contains("STATUS " + HexFormat.of().toHexDigits(JOB)), "the probe asks about the job, not"
                + " job 0, which a job key cannot sign for: " + node.log);
        assertTrue(taken.contains("TERMINATE 1"), node.log.toString());
        assertEquals(List.of(), refusedOtherThanProbes());
    }

    @Test
    void shouldPresentTheCredentialAgainToANodeThatForgotTheJobKeyAndSendWhatItRefused() {
        node.forgetAtFirstSend = true;

        try (Mpi mpi = init(env())) {
            echo(mpi);
        }

        List<String> log = List.copyOf(node.log);
        int refused = log.indexOf("refused SEND 1 0: no.credential");
        int again = log.lastIndexOf("CREDENTIAL");
        assertTrue(refused > log.indexOf("EXEC 1") && again > refused, log.toString());
        assertTrue(log.indexOf("SEND 1 0") > again, "the refused fragment went again once the node knew the key: "
                + log);
        assertEquals(List.of(credential, credential), node.presented);
        assertEquals(Set.of(JobCredential.JOB_KEY_ID), node.keyIds);
    }

    @Test
    void shouldFailTheLaunchWithTheNodesReasonWhenItRefusesTheCredential() {
        node.refuseFrom = 1;
        node.refusalReason = "job 00005eed1234abcd belongs to uid 1001";

        MpiException e = assertThrows(MpiException.class, () -> init(env()));

        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertEquals("MPI_ERR_OTHER: rank 1 on 127.0.0.1:" + node.port() + ":0: the proxy at 127.0.0.1:" + node.port()
                + " refused the job's credential (MPIPROXY_ERR_PERMISSION): job 00005eed1234abcd belongs to uid 1001",
                e.getMessage());
        assertFalse(node.taken().contains("EXEC 1"), "no rank was started: " + node.log);
    }

    @Test
    void shouldFailAWaitingCallWhenTheNodeRefusesTheCredentialPresentedAgain() {
        node.forgetAtFirstSend = true;
        node.refuseFrom = 2;
        node.refusal = MpiErrors.ERR_EXPIRED;
        node.refusalReason = "credential expired 5000 ms ago";

        try (Mpi mpi = init(env())) {
            mpi.send(new int[] {1, 2, 3}, 0, 3, 1);
            MpiException e = assertThrows(MpiException.class, () -> mpi.recv(new int[3], 0, 3, 1));

            assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
            assertTrue(e.getMessage().endsWith("refused the job's credential (MPIPROXY_ERR_EXPIRED): credential"
                    + " expired 5000 ms ago"), e.getMessage());
        }
    }

    @Test
    void shouldRefuseAJobIdThatIsNotTheCredentialsInOneLine() {
        Map<String, String> env = env();
        env.put(Mpi.JOB_ID_ENV, "abc");

        MpiException e = assertThrows(MpiException.class, () -> init(env));

        assertEquals(MpiErrors.ERR_ARG, e.errorCode());
        assertEquals("MPI_ERR_ARG: MPIPROXY_JOB_ID=abc is not the job of MPIPROXY_CREDENTIAL (00005eed1234abcd)",
                e.getMessage());
        assertEquals(List.of(), node.log, "nothing was sent");
    }

    @Test
    void shouldTakeTheCredentialsJobWhenNoJobIdIsSet() {
        Map<String, String> env = env();
        env.remove(Mpi.JOB_ID_ENV);

        try (Mpi mpi = init(env)) {
            echo(mpi);
        }

        assertTrue(node.taken().contains("EXEC 1"), node.log.toString());
        assertEquals(List.of(), refusedOtherThanProbes(), "every request named the credential's job");
    }

    @Test
    void shouldPreferTheJobKeyToKeyFilesAndNameABadVariableWithoutItsValue() {
        ClusterKeys keys = Mpi.hostKeys(env()::get);
        assertEquals(JobCredential.JOB_KEY_ID, keys.sendKeyId());
        assertArrayEquals(jobKey, keys.key(JobCredential.JOB_KEY_ID));

        Map<String, String> env = env();
        env.put(Join.JOB_KEY_ENV, "12345z");
        MpiException bad = assertThrows(MpiException.class, () -> Mpi.hostKeys(env::get));
        assertEquals("MPI_ERR_ARG: MPIPROXY_JOB_KEY is not 64 hexadecimal digits", bad.getMessage());

        env.put(Join.JOB_KEY_ENV, HexFormat.of().formatHex(jobKey));
        env.remove(Join.CREDENTIAL_ENV);
        MpiException missing = assertThrows(MpiException.class, () -> init(env));
        assertEquals("MPI_ERR_ARG: MPIPROXY_JOB_KEY is set without MPIPROXY_CREDENTIAL, the job's credential that"
                + " goes with it", missing.getMessage());

        env.remove(Join.JOB_KEY_ENV);
        assertNull(Join.credential(env::get), "without a job key, no credential is looked for");
    }
}
