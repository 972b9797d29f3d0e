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

    /**
     * Counts the head run only as far as a caller needs it: a ring holding many records answers
     * without walking all of them.
     *
     * @param datatype the datatype of the run
     * @param limit    the count that is enough for the caller
     * @return the same as {@link #availableElements(int)} when that is below {@code limit},
     *         otherwise a number {@code >= limit}; consumer thread only
     */
    default long availableElements(int datatype, long limit) {
        return availableElements(datatype);
    }

    /**
     * @return the consumer's doorbell ({@link Doorbell#encode}), 0 when it does not wait on one;
     *         a volatile read, any thread. A producer reads it after a full fence that follows
     *         its publication, so that it and a consumer going to sleep cannot miss each other.
     */
    default long doorbell() {
        return 0;
    }

    /**
     * Consumer: announces where it waits (before it checks the ring one last time and sleeps),
     * or withdraws it with 0; a volatile write.
     *
     * @param encoded the encoded address, or 0
     */
    default void doorbell(long encoded) {
    }

    /**
     * Producer: takes the doorbell it read, so that it is rung once.
     *
     * @param encoded the value {@link #doorbell()} returned
     * @return {@code true} when it was still there (the caller rings it), {@code false} when the
     *         consumer withdrew it or another call took it
     */
    default boolean takeDoorbell(long encoded) {
        return false;
    }

    /**
     * @return {@code true} when the producer promised to ring the doorbell after it publishes, so
     *         that the consumer may sleep until it rings; any thread
     */
    default boolean producerRingsDoorbell() {
        return false;
    }

    /**
     * Producer: promises (or withdraws the promise) to ring the doorbell after it publishes.
     *
     * @param rings the promise
     */
    default void producerRingsDoorbell(boolean rings) {
    }

    /** @return {@code true} when no record is waiting to be consumed */
    boolean isEmpty();

    /** @return the capacity of the record area in bytes */
    int capacity();

    /** @return bytes of free space for the producer, an estimate when called from the consumer */
    int freeBytes();

    /**
     * @return total bytes written since the ring was created, in the ring's own accounting
     *         (payload, or records with their headers: a mapped ring counts its positions)
     */
    long bytesWritten();

    /** @return total bytes read since the ring was created, in the same accounting as {@link #bytesWritten} */
    long bytesRead();

    /**
     * Bit of a record's tag word: more records of the same message follow this one. The other
     * 31 bits are the message's tag (0 .. 2^31-1). Records written by {@link #offer(int, int,
     * ByteBuffer, int, int)} have tag word 0: tag 0, a message of one record.
     */
    int MORE_RECORDS = 0x8000_0000;

    /**
     * Appends one record with a tag word ({@link #MORE_RECORDS} plus the tag). Producer only.
     * The default supports tag word 0 only.
     *
     * @param datatype MPI datatype code
     * @param count    number of elements, &gt;= 1
     * @param tagWord  the tag, with {@link #MORE_RECORDS} when the message continues in the next record
     * @param src      buffer holding the elements
     * @param offset   absolute index of the first element
     * @param length   number of bytes
     * @return {@code true} when written, {@code false} when there is too little free space now
     * @throws UnsupportedOperationException when the ring cannot store tag words
     */
    default boolean offer(int datatype, int count, int tagWord, ByteBuffer src, int offset, int length) {
        if (tagWord != 0) {
            throw new UnsupportedOperationException(getClass().getName() + " does not store tags");
        }
        return offer(datatype, count, src, offset, length);
    }

    /** @return the tag word of the head record, 0 when the ring is empty; consumer only */
    default int peekTagWord() {
        return 0;
    }

    /** @return the elements left in the head record, 0 when the ring is empty; consumer only */
    default int headRecordElements() {
        throw new UnsupportedOperationException(getClass().getName() + " does not read single records");
    }

    /**
     * Like {@link #poll} but takes elements from the head record only, never from the next one,
     * so message boundaries (tag words) are kept. Consumer only.
     *
     * @param datatype    MPI datatype code expected
     * @param dst         buffer receiving the elements
     * @param offset      absolute index in {@code dst}
     * @param maxElements how many elements at most
     * @return elements copied (0 when empty), or {@link #TYPE_MISMATCH}
     */
    default int pollRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        throw new UnsupportedOperationException(getClass().getName() + " does not read single records");
    }

    /**
     * @return a 64-bit mark the producer keeps with the ring (v2 keeps the next expected
     *         fragment sequence number there), 0 initially; survives a new instance over the same memory
     */
    default long producerMark() {
        return 0;
    }

    /** @param mark the new producer mark; producer only */
    default void producerMark(long mark) {
        throw new UnsupportedOperationException(getClass().getName() + " does not keep marks");
    }

    /** @return a 64-bit mark the consumer keeps with the ring, 0 initially */
    default long consumerMark() {
        return 0;
    }

    /** @param mark the new consumer mark; consumer only */
    default void consumerMark(long mark) {
        throw new UnsupportedOperationException(getClass().getName() + " does not keep marks");
    }
    /**
     * The consumer's read-ahead cursor (peek and commit): {@link #peekRecord} reads at a cursor
     * private to this instance and releases nothing; {@link #commit} then releases the space up
     * to a cursor value the consumer got from {@link #peekPosition}. What is peeked and not
     * committed stays in the ring, so a new consumer instance reads it again from the released
     * head. The cursor starts at the released head (and returns there after {@link #rewindPeek}
     * or when a {@link #poll} passed it). Consumer only.
     *
     * @return the cursor: the ring position of the record at the cursor plus the payload bytes
     *         already peeked from it; grows with every element peeked
     */
    default long peekPosition() {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /** @return the datatype of the record at the read-ahead cursor, or {@link #EMPTY}; consumer only */
    default int peekNextDatatype() {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /** @return the tag word of the record at the read-ahead cursor, 0 when there is none; consumer only */
    default int peekNextTagWord() {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /** @return the elements of the record at the read-ahead cursor not yet peeked, 0 when there is none */
    default int peekNextElements() {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /**
     * Like {@link #pollRecord} at the read-ahead cursor: copies elements of the record there and
     * advances the cursor only; nothing is released. Consumer only.
     *
     * @return elements copied (0 when nothing is published past the cursor), or {@link #TYPE_MISMATCH}
     */
    default int peekRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /**
     * Releases everything before {@code position} (a value {@link #peekPosition} returned, not
     * before what is released already and not past the cursor) to the producer. Consumer only.
     *
     * @throws IllegalArgumentException when {@code position} is outside that range or not a
     *                                  position the cursor passed
     */
    default void commit(long position) {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }

    /** Moves the read-ahead cursor back to the released head. Consumer only. */
    default void rewindPeek() {
        throw new UnsupportedOperationException(getClass().getName() + " does not peek ahead");
    }
}
