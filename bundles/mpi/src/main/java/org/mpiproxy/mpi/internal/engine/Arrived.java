package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/** A message that arrived before its receive: its facts and a copy of its elements. */
public final class Arrived {
    final int context;
    final int source;
    final int tag;
    final Kind kind;
    final ByteBuffer data;

    Arrived(int context, int source, int tag, Kind kind, ByteBuffer data) {
        this.context = context;
        this.source = source;
        this.tag = tag;
        this.kind = kind;
        this.data = data;
    }

    /** @return the sender's world rank */
    public int source() {
        return source;
    }

    /** @return the tag */
    public int tag() {
        return tag;
    }

    /** @return the kind of the elements */
    public Kind kind() {
        return kind;
    }

    /** @return bytes of elements */
    public int bytes() {
        return data.limit();
    }
}
