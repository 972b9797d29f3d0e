package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * The 20 bytes before the elements of every message between two ranks, little-endian:
 *
 * <pre>
 * 0  i32 context   the communicator's context (even: point-to-point, odd: its collectives,
 *                  odd + 2^30: its non-blocking collectives)
 * 4  i32 source    the sender's rank in the world
 * 8  i32 tag       0 .. 2^31-1 (collectives: the operation and its root, see Collectives;
 *                  non-blocking ones: the call's number on the communicator, see Schedule)
 * 12 u8  kind      {@link Kind#code()}
 * 13 u8  flags     0
 * 14 u16 reserved  0
 * 16 i32 dest      the receiver's rank in the world (what a node that relays needs)
 * 20 ...           the elements, packed
 * </pre>
 *
 * A link carries a message as one unit with its envelope; the envelope is what a receive matches.
 */
public final class Envelope {

    /** Bytes of the envelope. */
    public static final int LENGTH = 20;

    static final int CONTEXT = 0;
    static final int SOURCE = 4;
    static final int TAG = 8;
    static final int KIND = 12;
    static final int DEST = 16;

    private Envelope() {
    }

    /** Writes an envelope at index {@code at} of a little-endian buffer. */
    static void write(ByteBuffer b, int at, int context, int source, int dest, int tag, Kind kind) {
        b.putInt(at + CONTEXT, context);
        b.putInt(at + SOURCE, source);
        b.putInt(at + TAG, tag);
        b.putInt(at + KIND, kind.code());
        b.putInt(at + DEST, dest);
    }

    static int dest(ByteBuffer b, int at) {
        return b.getInt(at + DEST);
    }

    /** @return the destination's world rank of a message whose envelope starts at index 0 */
    public static int destination(ByteBuffer message) {
        return message.getInt(DEST);
    }

    static int context(ByteBuffer b, int at) {
        return b.getInt(at + CONTEXT);
    }

    static int source(ByteBuffer b, int at) {
        return b.getInt(at + SOURCE);
    }

    static int tag(ByteBuffer b, int at) {
        return b.getInt(at + TAG);
    }

    static int kindCode(ByteBuffer b, int at) {
        return b.get(at + KIND) & 0xff;
    }
}
