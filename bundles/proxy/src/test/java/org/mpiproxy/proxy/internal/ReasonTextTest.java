package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class ReasonTextTest {

    private static String read(ByteBuffer buffer, int offset, int length) {
        byte[] b = new byte[length];
        buffer.get(offset, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void shouldWriteAShortReasonWhole() {
        ByteBuffer buffer = ByteBuffer.allocate(64);
        int n = ReasonText.put(buffer, 8, "no launcher", 40);
        assertEquals(11, n);
        assertEquals("no launcher", read(buffer, 8, n));
    }

    @Test
    void shouldCutALongReasonBeforeACharacterThatDoesNotFitWhole() {
        ByteBuffer buffer = ByteBuffer.allocate(64);
        // "ab" then three two-byte characters: 8 bytes; 5 would split the second "é"
        int n = ReasonText.put(buffer, 0, "abééé", 5);
        assertEquals(4, n);
        assertEquals("abé", read(buffer, 0, n));
    }

    @Test
    void shouldWriteNothingForNoReason() {
        assertEquals(0, ReasonText.put(ByteBuffer.allocate(8), 0, null, 8));
    }
}
