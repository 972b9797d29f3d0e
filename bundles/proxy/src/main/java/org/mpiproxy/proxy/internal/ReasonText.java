package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The reason a refusal carries as its payload (both protocols): UTF-8, cut to what one datagram holds. */
final class ReasonText {

    private ReasonText() {
    }

    /**
     * Writes {@code reason} at {@code offset}, at most {@code max} bytes, cut before a character
     * that would not fit whole.
     *
     * @return the bytes written
     */
    static int put(ByteBuffer buffer, int offset, String reason, int max) {
        byte[] text = (reason == null ? "" : reason).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, max);
        while (n > 0 && n < text.length && (text[n] & 0xc0) == 0x80) {
            n--;
        }
        buffer.put(offset, text, 0, n);
        return n;
    }
}
