package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The credential and job key of docs/protocol-v2.md 4.1, byte for byte as the document's example. */
class JobCredentialTest {

    private static final HexFormat HEX = HexFormat.of();
    private static final long ISSUED = 1796688000000L;
    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, sequentialKey()), 1);
    private static final JobCredential EXAMPLE = new JobCredential(1, 1000, 1000, 0x1122334455667788L, ISSUED,
            ISSUED + 3_600_000, NodeIds.of("node1"), 0x0123456789abcdefL);
    private static final String EXAMPLE_HEX = "01010000e8030000e80300000000000088776655443322110034f352a2010000"
            + "80222a53a2010000ca12f31b8cbf5f29efcdab8967452301b230c36df31f6934852a1fc765035184b672a3798b07966c"
            + "09b084a62fd8770b";

    @Test
    void shouldEncodeAndDeriveTheDocumentsExample() {
        assertEquals(0x295fbf8c1bf312caL, NodeIds.of("node1"));
        assertEquals(EXAMPLE_HEX, HEX.formatHex(EXAMPLE.encode(KEYS)));
        assertEquals("761f798a8b89447f5b57d0eb834bf67a0767c4acc60bf759ee0afc3c908e3adf",
                HEX.formatHex(EXAMPLE.jobKey(KEYS)));
    }

    @Test
    void shouldDecodeWhatItEncodes() {
        assertEquals(EXAMPLE, JobCredential.decode(KEYS, HEX.parseHex(EXAMPLE_HEX)));
    }

    @Test
    void shouldGiveOneJobKeyPerUserAndJobWhateverTheCredential() {
        JobCredential later = new JobCredential(1, 1000, 1000, 0x1122334455667788L, ISSUED + 5000, ISSUED + 9000,
                NodeIds.of("node2"), 42);
        assertArrayEquals(EXAMPLE.jobKey(KEYS), later.jobKey(KEYS));
        JobCredential otherUser = new JobCredential(1, 1001, 1000, 0x1122334455667788L, ISSUED, ISSUED, 1, 1);
        assertNotEquals(EXAMPLE.jobKey(KEYS), otherUser.jobKey(KEYS));
    }

    @Test
    void shouldRefuseAFlippedBitAnywhereWithOneLine() {
        byte[] bytes = HEX.parseHex(EXAMPLE_HEX);
        for (int i = 0; i < bytes.length; i++) {
            byte[] flipped = bytes.clone();
            flipped[i] ^= 0x10;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JobCredential.decode(KEYS, flipped), "byte " + i);
            assertEquals(-1, e.getMessage().indexOf('\n'));
        }
    }

    @Test
    void shouldRefuseOtherKeysLengthsAndTheJobKeyId() {
        ClusterKeys other = ClusterKeys.of(Map.of(1, HEX.parseHex(
                "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f91")), 1);
        assertEquals("credential MAC does not match",
                assertThrows(IllegalArgumentException.class, () -> JobCredential.decode(other,
                        HEX.parseHex(EXAMPLE_HEX))).getMessage());
        assertEquals("a credential has 88 bytes, not 87", assertThrows(IllegalArgumentException.class,
                () -> JobCredential.decode(KEYS, new byte[87])).getMessage());
        assertThrows(IllegalArgumentException.class, () -> EXAMPLE.encode(JobCredential.hostKeys(EXAMPLE.jobKey(KEYS))));
        assertThrows(IllegalArgumentException.class, () -> ClusterKeys.of(Map.of(0, sequentialKey()), 0));
    }

    @Test
    void shouldBeValidFromIssueToExpiryWithinTheSkew() {
        assertNull(EXAMPLE.invalidAt(ISSUED, 0));
        assertNull(EXAMPLE.invalidAt(ISSUED - 30_000, 30_000));
        assertNull(EXAMPLE.invalidAt(ISSUED + 3_630_000, 30_000));
        assertEquals("credential issued in the future (30001 ms ahead)", EXAMPLE.invalidAt(ISSUED - 30_001, 30_000));
        assertEquals("credential expired 3630001 ms ago".replace("3630001", "30001"),
                EXAMPLE.invalidAt(ISSUED + 3_630_001, 30_000));
    }

    @Test
    void shouldSignHostDatagramsWithTheJobKeyUnderKeyIdZero() {
        ClusterKeys host = JobCredential.hostKeys(EXAMPLE.jobKey(KEYS));
        assertEquals(JobCredential.JOB_KEY_ID, host.sendKeyId());
        assertArrayEquals(EXAMPLE.jobKey(KEYS), host.key(0));
    }

    private static void assertNotEquals(byte[] a, byte[] b) {
        org.junit.jupiter.api.Assertions.assertFalse(java.util.Arrays.equals(a, b));
    }

    private static byte[] sequentialKey() {
        byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) i;
        }
        return key;
    }
}
