package org.mpiproxy.protocol.pmi;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * Cuts what one connection sends into messages: PMI-1 lines ({@link PmiLine}), until
 * {@link #framed} switches to PMI-2's length-prefixed messages ({@link Pmi2Wire}); a connection
 * whose very first byte is a digit is framed from the start (a PMI-2 client that skips the
 * PMI-1 {@code init} line). Not thread-safe: the PMI thread only.
 */
final class PmiReader {

    private ByteBuffer in = ByteBuffer.allocate(PmiLine.MAX_LINE);
    private boolean framed;
    private boolean fresh = true;

    /**
     * @return the bytes read, -1 at the end of the stream
     * @throws IOException when the channel cannot be read
     */
    int read(ReadableByteChannel channel) throws IOException {
        return channel.read(in);
    }

    /** From now on the messages are PMI-2's. */
    void framed() {
        if (!framed) {
            framed = true;
            ByteBuffer larger = ByteBuffer.allocate(Pmi2Wire.LENGTH_FIELD + Pmi2Wire.MAX_BODY);
            in.flip();
            larger.put(in);
            in = larger;
        }
    }

    /** @return whether the messages are PMI-2's */
    boolean isFramed() {
        return framed;
    }

    /**
     * @return the next whole message (a line without its end, or a PMI-2 body without its length
     *         field), or {@code null} until more bytes come
     * @throws IllegalArgumentException when the bytes cannot be a message: a line longer than
     *                                  {@link PmiLine#MAX_LINE} - 1, a bad PMI-2 length field
     */
    String next() {
        if (fresh && in.position() > 0 && in.get(0) >= '0' && in.get(0) <= '9') {
            framed();
        }
        in.flip();
        try {
            String message = framed ? frame() : line();
            if (message != null) {
                fresh = false;
            }
            return message;
        } finally {
            in.compact();
        }
    }

    private String line() {
        for (int i = in.position(); i < in.limit(); i++) {
            if (in.get(i) == '\n') {
                byte[] bytes = new byte[i - in.position()];
                in.get(bytes);
                in.get();
                return new String(bytes, StandardCharsets.UTF_8);
            }
        }
        if (in.remaining() == in.capacity()) {
            throw new IllegalArgumentException("a line longer than " + (PmiLine.MAX_LINE - 1) + " bytes");
        }
        return null;
    }

    private String frame() {
        if (in.remaining() < Pmi2Wire.LENGTH_FIELD) {
            return null;
        }
        byte[] field = new byte[Pmi2Wire.LENGTH_FIELD];
        in.get(in.position(), field);
        int length = Pmi2Wire.length(new String(field, StandardCharsets.ISO_8859_1));
        if (in.remaining() < Pmi2Wire.LENGTH_FIELD + length) {
            return null;
        }
        in.position(in.position() + Pmi2Wire.LENGTH_FIELD);
        byte[] body = new byte[length];
        in.get(body);
        return new String(body, StandardCharsets.UTF_8);
    }
}
