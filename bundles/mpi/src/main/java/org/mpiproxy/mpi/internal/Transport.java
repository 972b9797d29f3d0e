package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;

/**
 * How one process of a job moves elements to and from its peers. Elements are little-endian
 * and densely packed in the buffers. Arguments are already validated by the caller. Not
 * thread-safe: one thread at a time.
 */
public interface Transport extends AutoCloseable {

    /**
     * Sends elements; returns once they are handed to the network or the channel.
     *
     * @param datatype MPI datatype code
     * @param src      the elements
     * @param offset   absolute index of the first element in {@code src}
     * @param count    number of elements, &gt;= 1
     * @param dest     the receiving rank
     * @throws org.mpiproxy.mpi.MpiException when the elements cannot be sent
     */
    void send(int datatype, ByteBuffer src, int offset, int count, int dest);

    /**
     * Receives exactly {@code count} elements.
     *
     * @param datatype MPI datatype code expected
     * @param dst      where the elements go
     * @param offset   absolute index in {@code dst} of the first element
     * @param count    number of elements, &gt;= 1
     * @param source   the sending rank
     * @throws org.mpiproxy.mpi.MpiException on a datatype mismatch, an error reply or a timeout
     */
    void recv(int datatype, ByteBuffer dst, int offset, int count, int source);

    /**
     * Ends the job's use of this transport (MPI_Finalize). Idempotent.
     *
     * @return exit status per rank (index = rank, 0 for this process), -1 where unknown
     */
    int[] finish();

    /** Same as {@link #finish()}. */
    @Override
    default void close() {
        finish();
    }
}
