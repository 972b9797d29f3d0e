package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;

import org.mpiproxy.protocol.MpiDatatype;

/**
 * One whole message as it arrived: who sent it, its tag and datatype, and its elements
 * (little-endian, densely packed, from the buffer's position to its limit).
 *
 * @param source   the sending rank
 * @param tag      the message's tag, &gt;= 0
 * @param datatype MPI datatype code of the elements
 * @param data     the elements
 */
public record TaggedMessage(int source, int tag, int datatype, ByteBuffer data) {

    /** @return the number of elements */
    public int elements() {
        int size = MpiDatatype.sizeOf(datatype);
        return size <= 0 ? 0 : data.remaining() / size;
    }
}
