package org.mpiproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Test;

class HmacSha256Test {

    private static byte[] tag(HmacSha256 mac, ByteBuffer buffer, int offset, int length) {
        byte[] out = new byte[HmacSha256.LENGTH + 3];
        mac.update(buffer, offset, length);
        mac.tag(out, 3);
        return Arrays.copyOfRange(out, 3, out.length);
    }

    private static byte[] jdk(byte[] key, byte[] message) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(message);
    }

    @Test
    void shouldGiveTheTagsOfRfc4231() {
        HmacSha256 jefe = new HmacSha256("Jefe".getBytes(StandardCharsets.US_ASCII));
        byte[] data = "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII);
        assertEquals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
                HexFormat.of().formatHex(tag(jefe, ByteBuffer.wrap(data), 0, data.length)));
        byte[] longKey = new byte[131];
        Arrays.fill(longKey, (byte) 0xaa);
        byte[] first = "Test Using Larger Than Block-Size Key - Hash Key First".getBytes(StandardCharsets.US_ASCII);
        assertEquals("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
                HexFormat.of().formatHex(tag(new HmacSha256(longKey), ByteBuffer.wrap(first), 0, first.length)),
                "a key longer than the block is hashed first");
    }

    @Test
    void shouldMatchTheJdksMacForEveryTagInTurnOverDirectBuffersAtAnOffset() throws Exception {
        Random random = new Random(42);
        byte[] key = new byte[32];
        random.nextBytes(key);
        HmacSha256 mac = new HmacSha256(key);
        ByteBuffer buffer = ByteBuffer.allocateDirect(70_000);
        for (int length : new int[] {0, 1, 55, 56, 63, 64, 65, 1416, 65475, 3}) {
            byte[] message = new byte[length];
            random.nextBytes(message);
            int offset = 17;
            buffer.put(offset, message);
            buffer.position(5).limit(69_000);
            assertArrayEquals(jdk(key, message), tag(mac, buffer, offset, length), "length " + length);
            assertEquals(5, buffer.position(), "the position stays");
            assertEquals(69_000, buffer.limit(), "the limit stays");
        }
    }
}
