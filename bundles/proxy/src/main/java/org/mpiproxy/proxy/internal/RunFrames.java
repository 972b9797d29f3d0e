package org.mpiproxy.proxy.internal;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The frames of a run through the local socket (docs/protocol-v2.md 4.4): a type byte, the
 * body's length (u32, little-endian) and the body. Types are lower-case ASCII letters, so that
 * the {@code ERR} line of a proxy that does not know {@code RUN} never reads as a frame.
 */
final class RunFrames {

    /** The front's first line: a run, version 1. */
    static final String RUN_LINE = "RUN 1";
    /** Front: one argument after {@code mpiproxy}, {@code run} first. */
    static final byte ARG = 'a';
    /** Front: one variable of its environment, {@code NAME=value}. */
    static final byte ENV = 'e';
    /** Front: its working directory, absolute. */
    static final byte CWD = 'c';
    /** Front: its process id, in decimal: the process {@code mpiproxy kill} signals. */
    static final byte PID = 'p';
    /** Front: start the run (empty). */
    static final byte GO = 'g';
    /** Front: a signal it caught, one byte: 2 (SIGINT) or 15 (SIGTERM). */
    static final byte SIGNAL = 's';
    /** Proxy: bytes for the front's standard output. */
    static final byte OUT = 'o';
    /** Proxy: bytes for the front's standard error. */
    static final byte ERR = 'r';
    /** Proxy: the run's exit status, one byte; the last frame. */
    static final byte EXIT = 'x';
    /** Proxy: the run was not started, one line (UTF-8) saying why; the last frame. */
    static final byte FAIL = 'f';

    /** Bytes of a frame's header: the type and the length. */
    static final int HEADER = 5;
    /** Longest body of a frame. */
    static final int MAX_BODY = 1 << 20;

    /**
     * One frame.
     *
     * @param type its type
     * @param body its body
     */
    record Frame(byte type, byte[] body) {
        /** @return the body as UTF-8 text */
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private RunFrames() {
    }

    /** @return the frame's bytes: header and body */
    static ByteBuffer encode(byte type, byte[] body, int offset, int length) {
        ByteBuffer b = ByteBuffer.allocate(HEADER + length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(type).putInt(length).put(body, offset, length);
        return b.flip();
    }

    /** @return the frame's bytes, with a UTF-8 text body */
    static ByteBuffer encode(byte type, String text) {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        return encode(type, body, 0, body.length);
    }

    /**
     * Reads one frame, the bytes of {@code pending} first.
     *
     * @param pending bytes read already (in read mode), consumed first
     * @return the frame, {@code null} at the end of the stream between frames
     * @throws IOException when the stream ends within a frame, or a body is longer than {@link #MAX_BODY}
     */
    static Frame read(ByteBuffer pending, ReadableByteChannel channel) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER).order(ByteOrder.LITTLE_ENDIAN);
        if (!fill(pending, channel, header, true)) {
            return null;
        }
        byte type = header.get(0);
        long length = Integer.toUnsignedLong(header.getInt(1));
        if (length > MAX_BODY) {
            throw new IOException("a frame of " + length + " bytes; at most " + MAX_BODY);
        }
        ByteBuffer body = ByteBuffer.allocate((int) length);
        fill(pending, channel, body, false);
        return new Frame(type, body.array());
    }

    /** Writes all of {@code frame}. */
    static void write(WritableByteChannel channel, ByteBuffer frame) throws IOException {
        while (frame.hasRemaining()) {
            channel.write(frame);
        }
    }

    /** @return {@code false} when the stream ended before the first byte and {@code endOk} */
    private static boolean fill(ByteBuffer pending, ReadableByteChannel channel, ByteBuffer to, boolean endOk)
            throws IOException {
        while (to.hasRemaining() && pending.hasRemaining()) {
            to.put(pending.get());
        }
        while (to.hasRemaining()) {
            if (channel.read(to) < 0) {
                if (endOk && to.position() == 0) {
                    return false;
                }
                throw new EOFException("the stream ended within a frame");
            }
        }
        return true;
    }
}
