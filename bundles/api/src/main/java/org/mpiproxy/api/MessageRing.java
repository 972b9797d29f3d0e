package org.mpiproxy.api;

import java.nio.ByteBuffer;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A single-producer/single-consumer ring of typed records in shared memory.
 * <p>
 * Every record carries an MPI datatype code, an element count and the elements themselves
 * (little-endian, densely packed). The consumer reads elements, not records: a read may take
 * part of a record (the rest stays for the next read) or gather elements from several
 * consecutive records of the same datatype. The consumer's position inside a partly read
 * record lives in the shared memory too, so a new consumer (after a bundle refresh) continues
 * exactly where the old one stopped.
 * <p>
 * Thread-safety: {@link #offer} may be called by one producer thread at a time and
 * {@link #poll}, {@link #peekDatatype} by one consumer thread at a time; the producer and the
 * consumer may be different threads or processes. The other methods may be called by any thread.
 */
@ProviderType
public interface MessageRing {

    /** Returned by {@link #poll} when the next record's datatype is not the requested one. */
    int TYPE_MISMATCH = -1;

    /** Returned by {@link #peekDatatype} when the ring is empty. */
    int EMPTY = -1;

    /**
     * Appends one record.
     *
     * @param datatype MPI datatype code of the elements (see the protocol bundle's {@code MpiDatatype})
     * @param count    number of elements, &gt;= 1
     * @param src      buffer holding the elements, little-endian and densely packed
     * @param offset   absolute index in {@code src} of the first element
     * @param length   number of bytes, {@code count * elementSize}
     * @return {@code true} when the record was written, {@code false} when the ring has too
     *         little free space now (nothing was written)
     * @throws IllegalArgumentException when the record can never fit or count/length disagree
     */
    boolean offer(int datatype, int count, ByteBuffer src, int offset, int length);

    /**
     * Removes up to {@code maxElements} elements of {@code datatype} from the head of the ring,
     * crossing record boundaries while the datatype stays the same.
     *
     * @param datatype    MPI datatype code expected
     * @param dst         buffer receiving the elements, densely packed
     * @param offset      absolute index in {@code dst} where the first element goes
     * @param maxElements how many elements at most; {@code dst} must have room for them
     * @return the number of elements copied (0 when the ring is empty), or
     *         {@link #TYPE_MISMATCH} when the head record holds another datatype (nothing consumed)
     */
    int poll(int datatype, ByteBuffer dst, int offset, int maxElements);

    /**
     * @return the datatype code of the head record, or {@link #EMPTY}; consumer thread only
     */
    int peekDatatype();

    /**
     * @return the number of elements of the head run: the elements of {@code datatype} that a
     *         {@link #poll} could take now; consumer thread only
     */
    long availableElements(int datatype);

    /** @return {@code true} when no record is waiting to be consumed */
    boolean isEmpty();

    /** @return the capacity of the record area in bytes */
    int capacity();

    /** @return bytes of free space for the producer, an estimate when called from the consumer */
    int freeBytes();

    /** @return total payload bytes written since the ring was created */
    long bytesWritten();

    /** @return total payload bytes read since the ring was created */
    long bytesRead();
}
