package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.Map;

import org.junit.jupiter.api.Test;

class V2AuthenticatorTest {

    private static final long NOW = V2Examples.TIME;

    private static V2Authenticator proxy() {
        return V2Examples.authenticator();
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining()).order(ByteOrder.LITTLE_ENDIAN);
        c.put(0, b, b.position(), b.remaining());
        return c;
    }

    private static int verify(V2Authenticator a, ByteBuffer b, long now) {
        return a.verify(b, 0, b.limit(), now);
    }

    @Test
    void shouldAcceptAnAuthenticRequest() {
        assertEquals(V2Authenticator.OK, verify(proxy(), V2Examples.exec(), NOW));
    }

    @Test
    void shouldRefuseEveryFlippedBit() {
        ByteBuffer original = V2Examples.send();
        for (int i = 0; i < original.limit(); i++) {
            for (int bit = 0; bit < 8; bit++) {
                ByteBuffer b = copy(original);
                b.put(i, (byte) (b.get(i) ^ (1 << bit)));
                int result = verify(proxy(), b, NOW);
                if (i == 0) {
                    assertEquals(V2Authenticator.BAD_MAGIC, result, "byte 0 bit " + bit);
                } else if (i == V2HeaderDescriptor.PAYLOAD_LENGTH_OFFSET
                        || i == V2HeaderDescriptor.PAYLOAD_LENGTH_OFFSET + 1) {
                    assertEquals(V2Authenticator.BAD_LENGTH, result, "byte " + i + " bit " + bit);
                } else if (i == V2HeaderDescriptor.KEY_ID_OFFSET) {
                    // key id 1 becomes 0 with bit 0: a job key, of a job whose key the proxy was not shown
                    assertEquals(bit == 0 ? V2Authenticator.NO_CREDENTIAL : V2Authenticator.UNKNOWN_KEY, result,
                            "byte " + i + " bit " + bit);
                } else {
                    assertEquals(V2Authenticator.BAD_MAC, result, "byte " + i + " bit " + bit);
                }
            }
        }
    }

    /** A datagram of {@code op}, {@code flags} and {@code keyId} whose MAC field is zero, as a MUNGE request's. */
    private static ByteBuffer unsigned(int op, int flags, int keyId) {
        ByteBuffer b = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH + 8 + V2HeaderDescriptor.MAC_LENGTH)
                .order(ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(b, 0).reset(op, flags).keyId(keyId).nodeId(NodeIds.of("node-a")).jobId(7)
                .timestamp(NOW).nonce(5).payloadLength(8);
        return b;
    }

    @Test
    void shouldPassOnlyACredentialRequestOfKeyIdZeroWithTheMungeFlagAloneWithoutItsMac() {
        V2Authenticator a = proxy();
        assertEquals(V2Authenticator.MUNGE, verify(a, unsigned(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_MUNGE, 0), NOW));
        assertEquals("munge", V2Authenticator.reason(V2Authenticator.MUNGE));
        // another operation, a reply, more flags, a cluster key: checked as ever, and their MAC fails
        assertEquals(V2Authenticator.NO_CREDENTIAL, verify(a, unsigned(V2HeaderDescriptor.OP_EXEC,
                V2HeaderDescriptor.FLAG_MUNGE, 0), NOW));
        assertEquals(V2Authenticator.BAD_CREDENTIAL, verify(a, unsigned(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_MUNGE | V2HeaderDescriptor.FLAG_REPLY, 0), NOW));
        assertEquals(V2Authenticator.BAD_CREDENTIAL, verify(a, unsigned(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_MUNGE | V2HeaderDescriptor.FLAG_OUTPUT, 0), NOW));
        assertEquals(V2Authenticator.BAD_MAC, verify(a, unsigned(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_MUNGE, 1), NOW));
        // a host, which holds a job key, checks the MAC of every datagram of key id 0
        V2Authenticator host = new V2Authenticator(JobCredential.hostKeys(new byte[32]), NodeIds.of("node-a"),
                30_000, 16);
        assertEquals(V2Authenticator.BAD_MAC, verify(host, unsigned(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_MUNGE, 0), NOW));
    }

    @Test
    void shouldRefuseADatagramMadeWithAnotherKey() {
        byte[] other = HexFormat.of().parseHex(V2Examples.KEY_HEX);
        other[31] ^= 1;
        V2Authenticator wrong = new V2Authenticator(ClusterKeys.of(Map.of(1, other), 1), NodeIds.of("node-a"),
                30_000, 16);
        assertEquals(V2Authenticator.BAD_MAC, verify(wrong, V2Examples.exec(), NOW));
    }

    @Test
    void shouldRefuseAReplayButAcceptItUnderANewNonce() {
        V2Authenticator a = proxy();
        assertEquals(V2Authenticator.OK, verify(a, V2Examples.exec(), NOW));
        assertEquals(V2Authenticator.REPLAYED, verify(a, V2Examples.exec(), NOW + 1));
        assertEquals(V2Authenticator.REPLAYED, verify(a, V2Examples.exec(), NOW + 29_999));
        ByteBuffer fresh = V2Examples.exec();
        new V2HeaderFlyweight().wrap(fresh, 0).nonce(99);
        a.sign(fresh, 0);
        assertEquals(V2Authenticator.OK, verify(a, fresh, NOW + 2));
    }

    @Test
    void shouldRotateKeysWithoutForgettingWhatWasAccepted() {
        V2Authenticator a = proxy();
        assertEquals(V2Authenticator.OK, verify(a, V2Examples.exec(), NOW));
        byte[] key1 = HexFormat.of().parseHex(V2Examples.KEY_HEX);
        byte[] key2 = key1.clone();
        key2[0] ^= 0x55;
        long node = NodeIds.of(V2Examples.NODE);

        V2Authenticator both = a.rekey(ClusterKeys.of(Map.of(1, key1, 2, key2), 2), node);
        assertEquals(2, both.sendKeyId(), "the new key signs replies");
        assertEquals(V2Authenticator.REPLAYED, verify(both, V2Examples.exec(), NOW + 1),
                "an unchanged key keeps its replay cache");
        ByteBuffer underKey2 = V2Examples.exec();
        new V2HeaderFlyweight().wrap(underKey2, 0).keyId(2);
        both.sign(underKey2, 0);
        assertEquals(V2Authenticator.OK, verify(both, underKey2, NOW + 2));

        V2Authenticator onlyKey2 = both.rekey(ClusterKeys.of(Map.of(2, key2), 2), node);
        ByteBuffer fresh = V2Examples.exec();
        new V2HeaderFlyweight().wrap(fresh, 0).nonce(12345);
        a.sign(fresh, 0);
        assertEquals(V2Authenticator.UNKNOWN_KEY, verify(onlyKey2, fresh, NOW + 3), "a removed key is refused");
        assertEquals(V2Authenticator.REPLAYED, verify(onlyKey2, underKey2, NOW + 4));
        assertThrows(IllegalArgumentException.class, () -> onlyKey2.sign(V2Examples.exec(), 0),
                "nothing is signed under a removed key");

        V2Authenticator renamed = onlyKey2.rekey(ClusterKeys.of(Map.of(2, key2), 2), NodeIds.of("node-b"));
        ByteBuffer forA = V2Examples.exec();
        new V2HeaderFlyweight().wrap(forA, 0).keyId(2).nonce(777);
        onlyKey2.sign(forA, 0);
        assertEquals(V2Authenticator.WRONG_NODE, verify(renamed, forA, NOW + 5), "a request for the old name");
    }

    @Test
    void shouldRefuseStaleAndFutureTimestampsBeyondTheSkew() {
        V2Authenticator a = proxy();
        assertEquals(V2Authenticator.STALE, verify(a, V2Examples.exec(), NOW + 30_001));
        assertEquals(V2Authenticator.FUTURE, verify(a, V2Examples.exec(), NOW - 30_001));
        assertEquals(V2Authenticator.OK, verify(a, V2Examples.exec(), NOW + 30_000));
    }

    @Test
    void shouldNotRememberTheNonceOfARefusedRequest() {
        V2Authenticator a = proxy();
        assertEquals(V2Authenticator.STALE, verify(a, V2Examples.exec(), NOW + 60_000));
        assertEquals(V2Authenticator.OK, verify(a, V2Examples.exec(), NOW));
    }

    @Test
    void shouldRefuseARequestForAnotherNode() {
        V2Authenticator nodeB = new V2Authenticator(V2Examples.keys(), NodeIds.of("node-b"), 30_000, 16);
        assertEquals(V2Authenticator.WRONG_NODE, verify(nodeB, V2Examples.exec(), NOW));
    }

    @Test
    void shouldRefuseTruncatedAndPaddedDatagrams() {
        ByteBuffer b = V2Examples.exec();
        for (int length = 0; length < b.limit(); length++) {
            int result = proxy().verify(b, 0, length, NOW);
            assertEquals(length < 104 ? V2Authenticator.TOO_SHORT : V2Authenticator.BAD_LENGTH, result,
                    "length " + length);
        }
        ByteBuffer longer = ByteBuffer.allocate(b.limit() + 1);
        longer.put(0, b, 0, b.limit());
        assertEquals(V2Authenticator.BAD_LENGTH, proxy().verify(longer, 0, b.limit() + 1, NOW));
    }

    @Test
    void shouldAcceptBothKeysDuringARotationAndSignWithTheFirst() {
        byte[] oldKey = HexFormat.of().parseHex(V2Examples.KEY_HEX);
        byte[] newKey = new byte[32];
        java.util.Arrays.fill(newKey, (byte) 0x5a);
        Map<Integer, byte[]> both = new java.util.LinkedHashMap<>();
        both.put(2, newKey);
        both.put(1, oldKey);
        V2Authenticator rotating = new V2Authenticator(ClusterKeys.of(both, 2), NodeIds.of("node-a"), 30_000, 16);
        assertEquals(V2Authenticator.OK, verify(rotating, V2Examples.exec(), NOW));
        ByteBuffer signedNew = V2Examples.send();
        new V2HeaderFlyweight().wrap(signedNew, 0).keyId(rotating.sendKeyId());
        rotating.sign(signedNew, 0);
        assertEquals(2, rotating.sendKeyId());
        assertEquals(V2Authenticator.OK, verify(rotating, signedNew, NOW));
        assertEquals(V2Authenticator.UNKNOWN_KEY, verify(proxy(), signedNew, NOW));
    }

    @Test
    void shouldSignOnlyWithAConfiguredKey() {
        ByteBuffer b = V2Examples.exec();
        new V2HeaderFlyweight().wrap(b, 0).keyId(9);
        assertThrows(IllegalArgumentException.class, () -> proxy().sign(b, 0));
    }

    @Test
    void shouldVerifyAtAnOffsetInADirectBufferWithoutMovingIt() {
        ByteBuffer src = V2Examples.exec();
        ByteBuffer b = ByteBuffer.allocateDirect(400);
        b.put(100, src, 0, src.limit());
        b.position(7).limit(300);
        assertEquals(V2Authenticator.OK, proxy().verify(b, 100, src.limit(), NOW));
        assertEquals(7, b.position());
        assertEquals(300, b.limit());
    }

    @Test
    void shouldRefuseWhenTheReplayCacheIsFull() {
        V2Authenticator a = new V2Authenticator(V2Examples.keys(), NodeIds.of("node-a"), 30_000, 2);
        for (int i = 0; i < 3; i++) {
            ByteBuffer b = V2Examples.exec();
            new V2HeaderFlyweight().wrap(b, 0).nonce(i);
            a.sign(b, 0);
            assertEquals(i < 2 ? V2Authenticator.OK : V2Authenticator.REPLAY_CACHE_FULL, verify(a, b, NOW));
        }
    }

    private static ByteBuffer status(V2Authenticator a, long nonce) {
        return status(a, nonce, NOW);
    }

    private static ByteBuffer status(V2Authenticator a, long nonce, long timestamp) {
        ByteBuffer b = V2Examples.status();
        new V2HeaderFlyweight().wrap(b, 0).nonce(nonce).timestamp(timestamp);
        a.sign(b, 0);
        return b;
    }

    @Test
    void shouldRefuseASourceOverItsShareWhileAnotherSourceIsServed() {
        V2Authenticator a = new V2Authenticator(V2Examples.keys(), NodeIds.of("node-a"), 30_000, 8, 3);
        long filler = 0x1_0a00_0001L;
        long other = 0x1_0a00_0002L;
        for (int i = 0; i < 10; i++) {
            ByteBuffer b = status(a, i);
            assertEquals(i < 3 ? V2Authenticator.OK : V2Authenticator.REPLAY_SOURCE_FULL,
                    a.verify(b, 0, b.limit(), NOW, true, filler), "request " + i);
        }
        ByteBuffer fromOther = status(a, 100);
        assertEquals(V2Authenticator.OK, a.verify(fromOther, 0, fromOther.limit(), NOW, true, other));
        assertEquals(V2Authenticator.REPLAYED, a.verify(fromOther, 0, fromOther.limit(), NOW, true, filler));
        ByteBuffer later = status(a, 3, NOW + 60_001);
        assertEquals(V2Authenticator.OK, a.verify(later, 0, later.limit(), NOW + 60_001, true, filler),
                "the window (2 * skew + 1 ms) is over");
        assertEquals(1, a.replaySizeOf(1, filler));
        assertEquals(1, a.replaySize(1));
        assertEquals("replay.source.full", V2Authenticator.reason(V2Authenticator.REPLAY_SOURCE_FULL));
    }

    @Test
    void shouldKeepTheShareAcrossARekey() {
        V2Authenticator a = new V2Authenticator(V2Examples.keys(), NodeIds.of("node-a"), 30_000, 8, 2)
                .rekey(V2Examples.keys(), NodeIds.of("node-a"));
        assertEquals(2, a.sourceShare());
        for (int i = 0; i < 3; i++) {
            ByteBuffer b = status(a, i);
            assertEquals(i < 2 ? V2Authenticator.OK : V2Authenticator.REPLAY_SOURCE_FULL,
                    a.verify(b, 0, b.limit(), NOW, true, 5));
        }
    }

    @Test
    void shouldAnswerAFullCacheWithTheRetryableBusyRefusal() {
        assertEquals(V2RefusalDescriptor.REASON_BUSY, V2RefusalDescriptor.reasonOf(V2Authenticator.REPLAY_CACHE_FULL));
        assertEquals(V2RefusalDescriptor.REASON_BUSY, V2RefusalDescriptor.reasonOf(V2Authenticator.REPLAY_SOURCE_FULL));
        assertEquals(0, V2RefusalDescriptor.reasonOf(V2Authenticator.REPLAYED));
        assertEquals(true, V2RefusalDescriptor.isRetryable(V2RefusalDescriptor.REASON_BUSY));
        for (int reason = 1; reason <= 4; reason++) {
            assertEquals(false, V2RefusalDescriptor.isRetryable(reason), "reason " + reason);
        }
    }
}
