package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;

/**
 * A {@link Transport} that keeps message boundaries and tags: protocol v2 on the host, the
 * shared-memory channel on a rank. Matching receives to messages is {@link TagMatcher}'s job.
 */
public interface TaggedTransport extends Transport {

    /**
     * Sends one message with a tag; returns once all of it is handed on.
     *
     * @param datatype MPI datatype code
     * @param tag      the tag, 0 .. 2^31-1
     * @param src      the elements
     * @param offset   byte index of the first element in {@code src}
     * @param count    number of elements, &gt;= 1
     * @param dest     the receiving rank
     */
    void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest);

    /**
     * The next whole message from a source, in the order the source sent them.
     *
     * @param source    the sending rank
     * @param waitNanos how long to wait for it; the part of a message received so far is kept
     *                  for the next call
     * @return the message, or {@code null} when it did not arrive completely in time
     * @throws org.mpiproxy.mpi.MpiException on an error reply or when the source ended
     */
    TaggedMessage nextMessage(int source, long waitNanos);

    /** @return the ranks this process can receive from: 1..size-1 on the host, 0 on a rank */
    int[] sources();

    /**
     * Takes the part of a message {@link #nextMessage} has assembled but not returned, so that a
     * receive by elements ({@link #recv}) continues exactly where the stream stands.
     *
     * @param source the sending rank
     * @return the elements assembled so far (its tag is the message's), or {@code null}
     */
    TaggedMessage takePartial(int source);
}
