package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;

/** The requests of the local socket (docs/protocol-v2.md 4.2) and the credentials they get (4.1). */
class CredentialIssuerTest {

    private static final HexFormat HEX = HexFormat.of();
    /** Key id 1 of the document's examples: the bytes 00 01 02 ... 1f. */
    private static final byte[] KEY = HEX.parseHex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    /** 2026-12-08T00:00:00Z. */
    private static final long NOW = 1796688000000L;

    private final ClusterKeys keys = ClusterKeys.of(Map.of(1, KEY), 1);
    private final AtomicLong clock = new AtomicLong(NOW);

    /** A random source that gives the longs the test chose, then fails. */
    private static SecureRandom drawing(long... values) {
        Deque<Long> queue = new ArrayDeque<>();
        for (long v : values) {
            queue.add(v);
        }
        return new SecureRandom() {
            @Override
            public long nextLong() {
                return queue.remove();
            }
        };
    }

    private CredentialIssuer issuer(SecureRandom random) {
        return new CredentialIssuer(keys, NodeIds.of("node1"), clock::get, random, 3600);
    }

    @Test
    void shouldGiveTheDocumentsCredentialAndJobKeyForItsJob() {
        String reply = issuer(drawing(0x0123456789abcdefL)).answer("CREDENTIAL 1122334455667788", 1000, 1000);

        // docs/protocol-v2.md 4.1, the example: the credential's dump, then its job key
        assertEquals("OK 1122334455667788 "
                + "01010000e8030000e803000000000000"
                + "88776655443322110034f352a2010000"
                + "80222a53a2010000ca12f31b8cbf5f29"
                + "efcdab8967452301b230c36df31f6934"
                + "852a1fc765035184b672a3798b07966c"
                + "09b084a62fd8770b"
                + " 761f798a8b89447f5b57d0eb834bf67a0767c4acc60bf759ee0afc3c908e3adf", reply);
    }

    @Test
    void shouldIssueANewJobOfTheCallerValidForTheLifetime() {
        SecureRandom random = new SecureRandom();
        String reply = issuer(random).answer("CREDENTIAL", 1234, 567);

        List<String> fields = List.of(reply.split(" "));
        assertEquals(4, fields.size(), reply);
        assertEquals("OK", fields.get(0));
        assertTrue(fields.get(1).matches("[0-9a-f]{16}"), fields.get(1));
        assertTrue(fields.get(2).matches("[0-9a-f]{176}"), fields.get(2));
        assertTrue(fields.get(3).matches("[0-9a-f]{64}"), fields.get(3));
        JobCredential credential = JobCredential.decode(keys, HEX.parseHex(fields.get(2)));
        assertEquals(1234, credential.uid());
        assertEquals(567, credential.gid());
        assertEquals(HEX.fromHexDigitsToLong(fields.get(1)), credential.jobId());
        assertNotEquals(0, credential.jobId());
        assertEquals(1, credential.keyId());
        assertEquals(NOW, credential.issuedMillis());
        assertEquals(NOW + 3_600_000, credential.expiresMillis());
        assertEquals(NodeIds.of("node1"), credential.issuerNodeId());
        assertArrayEquals(credential.jobKey(keys), HEX.parseHex(fields.get(3)));

        String another = issuer(random).answer("CREDENTIAL", 1234, 567);
        assertNotEquals(fields.get(1), another.split(" ")[1], "a new job each time");
    }

    @Test
    void shouldNeverIssueJobIdZero() {
        String reply = issuer(drawing(0, 5, 77)).answer("CREDENTIAL", 1000, 100);
        JobCredential credential = JobCredential.decode(keys, HEX.parseHex(reply.split(" ")[2]));
        assertEquals(5, credential.jobId());
        assertEquals("0000000000000005", reply.split(" ")[1]);
        assertEquals(77, credential.nonce());
    }

    @Test
    void shouldGiveTheSameJobKeyForTheSameUserAndJobAndAnotherForAnotherUser() {
        CredentialIssuer issuer = issuer(new SecureRandom());
        String first = issuer.answer("CREDENTIAL 00000000000000ff", 1000, 1000);
        clock.addAndGet(60_000);
        String again = issuer.answer("CREDENTIAL 00000000000000FF", 1000, 1000);
        String other = issuer.answer("CREDENTIAL 00000000000000ff", 1001, 1000);

        assertEquals("00000000000000ff", again.split(" ")[1], "upper-case digits name the same job, answered lower-case");
        assertNotEquals(first.split(" ")[2], again.split(" ")[2], "a new credential (time, nonce)");
        assertEquals(first.split(" ")[3], again.split(" ")[3]);
        assertNotEquals(first.split(" ")[3], other.split(" ")[3]);
        assertEquals(NOW + 60_000, JobCredential.decode(keys, HEX.parseHex(again.split(" ")[2])).issuedMillis());
    }

    @Test
    void shouldSignWithTheKeyThatSignsWhatTheNodeSends() {
        byte[] newer = KEY.clone();
        newer[0] = 99;
        ClusterKeys rotated = ClusterKeys.of(Map.of(1, KEY, 2, newer), 2);
        String reply = new CredentialIssuer(rotated, 7, clock::get, new SecureRandom(), 60).answer("CREDENTIAL", 1, 1);
        JobCredential credential = JobCredential.decode(rotated, HEX.parseHex(reply.split(" ")[2]));
        assertEquals(2, credential.keyId());
        assertEquals(NOW + 60_000, credential.expiresMillis());
        assertEquals(7, credential.issuerNodeId());
        assertArrayEquals(credential.jobKey(rotated), HEX.parseHex(reply.split(" ")[3]));
    }

    @Test
    void shouldAnswerEveryOtherRequestWithOneErrorLine() {
        CredentialIssuer issuer = issuer(new SecureRandom());
        String usage = "ERR unknown request; send CREDENTIAL or CREDENTIAL <job id, 16 hexadecimal digits>";
        for (String bad : List.of("", "credential", "CREDENTIAL ", " CREDENTIAL", "CREDENTIAL  1122334455667788",
                "CREDENTIAL 123", "CREDENTIAL 11223344556677889", "CREDENTIAL 112233445566778g",
                "CREDENTIAL 1122334455667788 ", "CREDENTIAL\t1122334455667788", "CREDENTIALS", "KEY")) {
            assertEquals(usage, issuer.answer(bad, 1000, 1000), bad);
        }
        assertEquals("ERR job id 0 names no job", issuer.answer("CREDENTIAL 0000000000000000", 1000, 1000));
        String tooLarge = issuer.answer("CREDENTIAL", 1L << 32, 1000);
        assertTrue(tooLarge.startsWith("ERR credential uid 4294967296"), tooLarge);
    }

    @Test
    void shouldRefuseAJobKeyAndALifetimeOutOfRange() {
        assertEquals("a job key cannot sign credentials; a cluster key is needed",
                assertThrows(IllegalArgumentException.class, () -> new CredentialIssuer(ClusterKeys.ofJobKey(KEY), 1,
                        clock::get, new SecureRandom(), 60)).getMessage());
        for (long bad : new long[] {0, -1, 604_801}) {
            assertEquals("identity.credential.seconds=" + bad + " must be in 1..604800",
                    assertThrows(IllegalArgumentException.class, () -> new CredentialIssuer(keys, 1, clock::get,
                            new SecureRandom(), bad)).getMessage());
        }
        String week = new CredentialIssuer(keys, 1, clock::get, new SecureRandom(), 604_800).answer("CREDENTIAL", 1, 1);
        assertEquals(NOW + 604_800_000L, JobCredential.decode(keys, HEX.parseHex(week.split(" ")[2])).expiresMillis());
    }
}
