package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * One send or receive the engine carries out: pending until {@link #done()}; then its status
 * (source, tag, bytes) or its error. Created by {@link Engine}; its fields are the engine's.
 */
public abstract class Operation {

    int error;
    String errorText;
    boolean done;
    boolean cancelled;
    int source;
    int tag;
    int bytes;
    Kind kind;

    Operation(Kind kind) {
        this.kind = kind;
    }

    /** @return whether the operation has completed (well or with an error) */
    public final boolean done() {
        return done;
    }

    /** @return the MPI error class, 0 for success */
    public final int error() {
        return error;
    }

    /** @return why it failed, or {@code null} */
    public final String errorText() {
        return errorText;
    }

    /** @return the sender's world rank (a receive), the destination (a send) */
    public final int source() {
        return source;
    }

    /** @return the message's tag */
    public final int tag() {
        return tag;
    }

    /** @return bytes of elements received (a receive) or sent */
    public final int bytes() {
        return bytes;
    }

    /** @return the kind of the elements */
    public final Kind kind() {
        return kind;
    }

    /** @return whether a cancel took effect */
    public final boolean cancelled() {
        return cancelled;
    }

    final void fail(int errorClass, String text) {
        this.error = errorClass;
        this.errorText = text;
        this.done = true;
    }

    /** A message on its way out: envelope and elements. */
    public static final class Send extends Operation {
        final ByteBuffer message;
        final int dest;

        Send(Kind kind, ByteBuffer message, int dest, int tag) {
            super(kind);
            this.message = message;
            this.dest = dest;
            this.source = dest;
            this.tag = tag;
            this.bytes = message.limit() - Envelope.LENGTH;
        }
    }

    /** A posted receive: what it matches and where matching elements go. */
    public static final class Recv extends Operation {
        final int context;
        final int wantSource;
        final int wantTag;
        final int capacity;
        final Unpacker target;
        final Kind wantKind;

        Recv(int context, int wantSource, int wantTag, Kind kind, int capacity, Unpacker target) {
            super(kind);
            this.context = context;
            this.wantSource = wantSource;
            this.wantTag = wantTag;
            this.capacity = capacity;
            this.target = target;
            this.wantKind = kind;
        }

        boolean matches(int context, int source, int tag) {
            return this.context == context && (wantSource == Engine.ANY_SOURCE || wantSource == source)
                    && (wantTag == Engine.ANY_TAG || wantTag == tag);
        }
    }

    /** Where a receive's elements go. */
    @FunctionalInterface
    public interface Unpacker {
        /**
         * @param src   little-endian elements
         * @param at    index of the first byte in {@code src}
         * @param bytes how many bytes (at most the receive's capacity)
         */
        void unpack(ByteBuffer src, int at, int bytes);
    }
}
