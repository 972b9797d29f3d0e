package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * How this process exchanges whole messages (envelope and elements) with one other rank: a
 * ring pair in shared memory, the proxy's channel, protocol v2, or a queue inside the process.
 * Messages on one link arrive in the order they were offered. Never blocks: the engine calls it
 * from its progress loop. One thread at a time.
 */
public interface Link {

    /**
     * Hands on as much of a message as the link takes now.
     *
     * @param message the envelope and elements from its position to its limit; the position
     *                advances past what was handed on
     * @return {@code true} when the whole message is out (the buffer may be reused)
     */
    boolean offer(ByteBuffer message);

    /**
     * Delivers the messages that arrived completely.
     *
     * @param sink receives each whole message
     * @return the number of messages delivered
     */
    int poll(Sink sink);

    /** Releases what the link holds; idempotent. */
    void close();

    /** Where a link delivers whole messages. */
    @FunctionalInterface
    interface Sink {
        /**
         * @param message the envelope at index 0 and the elements after it, little-endian; valid
         *                during the call only
         * @param length  bytes of envelope and elements
         */
        void accept(ByteBuffer message, int length);
    }
}
