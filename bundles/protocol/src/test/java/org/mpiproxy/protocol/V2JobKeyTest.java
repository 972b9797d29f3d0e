package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** Key id 0, the job keys of docs/protocol-v2.md 4.1, on a proxy's authenticator; CREDENTIAL of 5.9 byte for byte. */
class V2JobKeyTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final ClusterKeys KEYS = V2Examples.keys();
    private static final long NODE1 = NodeIds.of("node1");
    private static final long JOB = 0x1122334455667788L;
    private static final long ISSUED = 1796688000000L;
    /** The clock of the example of 5.9: 2026-12-08T00:00:01Z. */
    private static final long NOW = 1796688001000L;
    private static final JobCredential CREDENTIAL = new JobCredential(1, 1000, 1000, JOB, ISSUED, ISSUED + 3_600_000,
            NODE1, 0x0123456789abcdefL);
    /** The CREDENTIAL request of docs/protocol-v2.md 5.9, as the document prints it. */
    private static final String EXAMPLE_HEX = "b209000000000000ca12f31b8cbf5f29" + "88776655443322110000000000000000"
            + "00000000000000000000000000000000" + "e837f352a201000008090a0b0c0d0e0f"
            + "000000000000580001010000e8030000" + "e8030000000000008877665544332211"
            + "0034f352a201000080222a53a2010000" + "ca12f31b8cbf5f29efcdab8967452301"
            + "b230c36df31f6934852a1fc765035184" + "b672a3798b07966c09b084a62fd8770b"
            + "a2f2e38296faf8a96c6fa954883316b3" + "e66161852f0aa1ad2dc0b30185555241";

    private static V2Authenticator proxy(int pending) {
        return new V2Authenticator(KEYS, NODE1, 30_000, 64, 64, pending);
    }

    private static V2Authenticator proxy() {
        return proxy(16);
    }

    /** A host that holds only the job key of {@code credential}. */
    private static V2Authenticator host(JobCredential credential) {
        return new V2Authenticator(ClusterKeys.ofJobKey(credential.jobKey(KEYS)), NODE1, 30_000, 1);
    }

    private static ByteBuffer example() {
        return ByteBuffer.wrap(HEX.parseHex(EXAMPLE_HEX)).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static ByteBuffer credentialRequest(V2Authenticator host, JobCredential c, long headerJob, long nonce) {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        byte[] payload = c.encode(KEYS);
        new V2HeaderFlyweight().wrap(b, 0).reset(V2HeaderDescriptor.OP_CREDENTIAL, 0).keyId(0).nodeId(NODE1)
                .jobId(headerJob).timestamp(NOW).nonce(nonce).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return b.limit(host.sign(b, 0)).position(0);
    }

    private static ByteBuffer request(V2Authenticator host, int op, long jobId, long nonce) {
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(b, 0).reset(op, 0).keyId(0).nodeId(NODE1).jobId(jobId).rank(1).argument(2)
                .timestamp(NOW).nonce(nonce).payloadLength(0);
        return b.limit(host.sign(b, 0)).position(0);
    }

    private static int verify(V2Authenticator a, ByteBuffer b) {
        return a.verify(b, 0, b.limit(), NOW);
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.limit()).order(ByteOrder.LITTLE_ENDIAN);
        c.put(0, b, 0, b.limit());
        return c;
    }

    @Test
    void shouldBuildAndVerifyTheDocumentsCredentialExample() {
        ByteBuffer built = credentialRequest(host(CREDENTIAL), CREDENTIAL, JOB, 0x0f0e0d0c0b0a0908L);
        assertEquals(EXAMPLE_HEX, HEX.formatHex(built.array(), 0, built.limit()));
        V2Authenticator proxy = proxy();
        assertEquals(V2Authenticator.OK, verify(proxy, example()));
        assertEquals(CREDENTIAL, proxy.credential());
        assertFalse(proxy.knowsJob(JOB, NOW), "verifying makes nothing known: accepting does");
        assertEquals(V2Authenticator.REPLAYED, verify(proxy, example()));
        assertEquals(1, proxy.replaySize(0));
    }

    @Test
    void shouldRefuseTheExampleWithAnyBitFlipped() {
        ByteBuffer original = example();
        for (int i = 0; i < original.limit(); i++) {
            for (int bit = 0; bit < 8; bit++) {
                ByteBuffer b = copy(original);
                b.put(i, (byte) (b.get(i) ^ (1 << bit)));
                int result = verify(proxy(), b);
                assertNotEquals(V2Authenticator.OK, result, "byte " + i + " bit " + bit);
                boolean inCredential = i >= V2HeaderDescriptor.HEADER_LENGTH
                        && i < V2HeaderDescriptor.HEADER_LENGTH + JobCredential.LENGTH;
                if (inCredential) {
                    assertEquals(V2Authenticator.BAD_CREDENTIAL, result, "credential byte " + i + " bit " + bit);
                }
            }
        }
        ByteBuffer otherJob = copy(original);
        otherJob.put(V2HeaderDescriptor.JOB_ID_OFFSET, (byte) 0x89);
        assertEquals(V2Authenticator.BAD_CREDENTIAL, verify(proxy(), otherJob));
        ByteBuffer asExec = copy(original);
        asExec.put(V2HeaderDescriptor.OPERATION_OFFSET, (byte) V2HeaderDescriptor.OP_EXEC);
        assertEquals(V2Authenticator.NO_CREDENTIAL, verify(proxy(), asExec));
    }

    @Test
    void shouldRefuseACredentialOfAnotherClusterKeyOrForAnotherJob() {
        ClusterKeys otherKeys = ClusterKeys.of(Map.of(1, HEX.parseHex(V2Examples.KEY_HEX.replace('0', 'f'))), 1);
        ByteBuffer b = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        byte[] payload = CREDENTIAL.encode(otherKeys);
        new V2HeaderFlyweight().wrap(b, 0).reset(V2HeaderDescriptor.OP_CREDENTIAL, 0).keyId(0).nodeId(NODE1)
                .jobId(JOB).timestamp(NOW).nonce(1).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        ClusterKeys forged = ClusterKeys.ofJobKey(CREDENTIAL.jobKey(otherKeys));
        b.limit(new V2Authenticator(forged, NODE1, 30_000, 1).sign(b, 0));
        assertEquals(V2Authenticator.BAD_CREDENTIAL, verify(proxy(), b));
        assertEquals(V2Authenticator.BAD_CREDENTIAL, verify(proxy(), credentialRequest(host(CREDENTIAL), CREDENTIAL,
                JOB + 1, 2)), "the header's job must be the credential's");
        assertEquals(1, V2RefusalDescriptor.reasonOf(V2Authenticator.BAD_CREDENTIAL));
        assertEquals("bad.credential", V2Authenticator.reason(V2Authenticator.BAD_CREDENTIAL));
    }

    @Test
    void shouldRefuseAJobKeyTheProxyWasNotShownWithNoCredential() {
        V2Authenticator proxy = proxy();
        ByteBuffer exec = request(host(CREDENTIAL), V2HeaderDescriptor.OP_EXEC, JOB, 7);
        assertEquals(V2Authenticator.NO_CREDENTIAL, verify(proxy, exec));
        assertEquals(V2RefusalDescriptor.REASON_NO_CREDENTIAL,
                V2RefusalDescriptor.reasonOf(V2Authenticator.NO_CREDENTIAL));
        assertEquals("no.credential", V2Authenticator.reason(V2Authenticator.NO_CREDENTIAL));
        assertEquals(0, proxy.replaySize(0), "nothing remembered of a refused request");
        assertEquals(V2Authenticator.CREDENTIAL_ACCEPTED, proxy.acceptCredential(CREDENTIAL, NOW));
        assertTrue(proxy.knowsJob(JOB, NOW));
        assertEquals(CREDENTIAL, proxy.credentialOf(JOB));
        assertEquals(V2Authenticator.OK, verify(proxy, exec));
        proxy.forgetJob(JOB);
        assertEquals(V2Authenticator.NO_CREDENTIAL, verify(proxy, request(host(CREDENTIAL), V2HeaderDescriptor.OP_EXEC,
                JOB, 8)));
        assertNull(proxy.credentialOf(JOB));
    }

    @Test
    void shouldNotLetAJobKeyActForAnotherJob() {
        V2Authenticator proxy = proxy();
        JobCredential other = new JobCredential(1, 1001, 1001, JOB + 1, ISSUED, ISSUED + 3_600_000, NODE1, 5);
        proxy.acceptCredential(CREDENTIAL, NOW);
        V2Authenticator mine = host(CREDENTIAL);
        assertEquals(V2Authenticator.NO_CREDENTIAL, verify(proxy, request(mine, V2HeaderDescriptor.OP_TERMINATE,
                JOB + 1, 1)));
        proxy.acceptCredential(other, NOW);
        int terminate = V2HeaderDescriptor.OP_TERMINATE;
        assertEquals(V2Authenticator.BAD_MAC, verify(proxy, request(mine, terminate, JOB + 1, 2)));
        assertEquals(V2Authenticator.OK, verify(proxy, request(host(other), terminate, JOB + 1, 3)));
        assertEquals(V2Authenticator.OK, verify(proxy, request(mine, terminate, JOB, 4)));
    }

    @Test
    void shouldSignRepliesOfKeyIdZeroThatTheJobsHostVerifies() {
        V2Authenticator proxy = proxy();
        V2Authenticator host = host(CREDENTIAL);
        ByteBuffer reply = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(reply, 0).reset(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_REPLY).keyId(0).nodeId(NODE1).jobId(JOB).timestamp(NOW).nonce(9);
        assertThrows(IllegalArgumentException.class, () -> proxy.sign(reply, 0), "no key known for the job");
        assertEquals(V2Authenticator.OK, verify(proxy, example()));
        // a CREDENTIAL reply is signed with the key of the credential it answers, accepted or not
        assertEquals(V2Authenticator.OK, host.verifyReply(reply, 0, proxy.sign(reply, 0), NOW));
        proxy.acceptCredential(CREDENTIAL, NOW);
        h.reset(V2HeaderDescriptor.OP_EXEC, V2HeaderDescriptor.FLAG_REPLY).keyId(0).nodeId(NODE1).jobId(JOB).rank(1)
                .timestamp(NOW).nonce(10);
        assertEquals(V2Authenticator.OK, host.verifyReply(reply, 0, proxy.sign(reply, 0), NOW));
        JobCredential other = new JobCredential(1, 1001, 1001, JOB, ISSUED, ISSUED + 3_600_000, NODE1, 5);
        assertEquals(V2Authenticator.BAD_MAC, host(other).verifyReply(reply, 0, proxy.sign(reply, 0), NOW));
    }

    @Test
    void shouldKeepOneUsersKeyPerJob() {
        V2Authenticator proxy = proxy();
        JobCredential again = new JobCredential(1, 1000, 1000, JOB, ISSUED + 10, ISSUED + 7_200_000, NODE1, 6);
        JobCredential otherUser = new JobCredential(1, 1001, 1000, JOB, ISSUED, ISSUED + 3_600_000, NODE1, 7);
        assertEquals(V2Authenticator.CREDENTIAL_ACCEPTED, proxy.acceptCredential(CREDENTIAL, NOW));
        assertEquals(V2Authenticator.CREDENTIAL_OTHER_USER, proxy.acceptCredential(otherUser, NOW));
        assertEquals(V2Authenticator.CREDENTIAL_ACCEPTED, proxy.acceptCredential(again, NOW));
        assertTrue(proxy.knowsJob(JOB, ISSUED + 7_200_000 + 30_000), "the later expiry counts, with the skew");
        assertFalse(proxy.knowsJob(JOB, ISSUED + 7_200_000 + 30_001));
        assertEquals(1, proxy.jobKeyCount());
    }

    @Test
    void shouldBoundTheKeysOfJobsNotKeptAndForgetThemWhenTheyExpire() {
        V2Authenticator proxy = proxy(2);
        long expires = ISSUED + 3_600_000;
        for (long job = 1; job <= 2; job++) {
            assertEquals(V2Authenticator.CREDENTIAL_ACCEPTED, proxy.acceptCredential(
                    new JobCredential(1, 1000, 1000, job, ISSUED, expires, NODE1, job), NOW));
        }
        JobCredential third = new JobCredential(1, 1000, 1000, 3, ISSUED, expires, NODE1, 3);
        assertEquals(V2Authenticator.CREDENTIAL_TABLE_FULL, proxy.acceptCredential(third, NOW));
        assertTrue(proxy.keepJob(1), "the node has job 1 now");
        assertEquals(V2Authenticator.CREDENTIAL_ACCEPTED, proxy.acceptCredential(third, NOW));
        long later = expires + 30_001;
        assertEquals(V2Authenticator.NO_CREDENTIAL, proxy.verify(request(host(third), V2HeaderDescriptor.OP_EXEC, 3, 1),
                0, V2HeaderDescriptor.MIN_DATAGRAM_LENGTH, later));
        assertEquals(0, proxy.purgeJobKeys(later));
        assertTrue(proxy.knowsJob(1, later), "a kept job's key does not expire");
        assertEquals(1, proxy.jobKeyCount());
    }

    @Test
    void shouldKeepJobKeysAcrossARekeyWhileTheirClusterKeyStays() {
        V2Authenticator proxy = proxy();
        JobCredential underKey2 = new JobCredential(2, 1000, 1000, JOB + 1, ISSUED, ISSUED + 3_600_000, NODE1, 1);
        byte[] key2 = HEX.parseHex(V2Examples.KEY_HEX.replace('1', '9'));
        ClusterKeys both = ClusterKeys.of(Map.of(1, HEX.parseHex(V2Examples.KEY_HEX), 2, key2), 1);
        proxy = proxy.rekey(both, NODE1);
        proxy.acceptCredential(CREDENTIAL, NOW);
        proxy.acceptCredential(underKey2, NOW);
        ByteBuffer exec = request(host(CREDENTIAL), V2HeaderDescriptor.OP_EXEC, JOB, 1);
        assertEquals(V2Authenticator.OK, verify(proxy, exec));
        byte[] changed = key2.clone();
        changed[0] ^= 1;
        V2Authenticator next = proxy.rekey(ClusterKeys.of(Map.of(1, HEX.parseHex(V2Examples.KEY_HEX), 2, changed), 1),
                NODE1);
        assertTrue(next.knowsJob(JOB, NOW));
        assertFalse(next.knowsJob(JOB + 1, NOW), "key 2 changed: so did the job keys it derived");
        assertEquals(V2Authenticator.REPLAYED, verify(next, exec), "key id 0 keeps its replay cache");
    }

    @Test
    void shouldFindEveryJobKeyThroughAddsAndRemovals() {
        JobKeyTable table = new JobKeyTable();
        Map<Long, JobCredential> expected = new HashMap<>();
        SplittableRandom random = new SplittableRandom(42);
        HmacSha256 mac = new HmacSha256(new byte[32]);
        for (int i = 0; i < 20_000; i++) {
            long job = 1 + random.nextInt(300);
            if (random.nextBoolean()) {
                JobCredential c = new JobCredential(1, i, 0, job, 0, 1, 0, i);
                table.put(c, mac, 1);
                expected.put(job, c);
            } else {
                assertEquals(expected.remove(job) != null, table.remove(job));
            }
            assertEquals(expected.size(), table.size());
        }
        for (long job = 1; job <= 300; job++) {
            int slot = table.find(job);
            assertEquals(expected.get(job), slot < 0 ? null : table.credential(slot), "job " + job);
        }
    }
}
