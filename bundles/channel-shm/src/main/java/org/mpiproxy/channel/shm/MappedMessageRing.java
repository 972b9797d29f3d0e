package org.mpiproxy.channel.shm;

import static org.mpiproxy.channel.shm.RingDescriptor.CONSUMER_MARK_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.COUNT_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.DATATYPE_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.DOORBELL_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.END_MARK_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.PRODUCER_MARK_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.RINGS_DOORBELL_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.TAG_WORD_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.HEAD_POSITION_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.HEAD_RECORD_OFFSET_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.PADDING_TYPE;
import static org.mpiproxy.channel.shm.RingDescriptor.RECORD_HEADER_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.RING_HEADER_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.TAIL_POSITION_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.alignedLength;
import static org.mpiproxy.channel.shm.RingDescriptor.countOffset;
import static org.mpiproxy.channel.shm.RingDescriptor.datatypeOffset;
import static org.mpiproxy.channel.shm.RingDescriptor.lengthOffset;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

import org.mpiproxy.api.MessageRing;

/**
 * A {@link MessageRing} over a direct buffer, normally one ring of a memory-mapped channel
 * file, laid out as {@link RingDescriptor} describes.
 * <p>
 * Thread-safety: as {@link MessageRing}: one producer thread calls {@link #offer}, one consumer
 * thread calls {@link #poll}, {@link #peekDatatype} and {@link #availableElements}; they may
 * be in different processes, each with its own instance over the same file. The consumer's
 * state (head, offset inside the head record) lives in the buffer only, so a new instance
 * continues where an old one stopped. {@code offer} and {@code poll} do not allocate.
 * <p>
 * Cost per record (layout 2.0): the consumer writes nothing into the data area (the producer
 * clears an 8-byte end mark instead of the consumer zeroing what it read), no byte counters are
 * kept (the positions are the counts), the element size is a shift for the sizes of MPI
 * datatypes, and a poll publishes the head once for all the records it took.
 * <p>
 * Longer than 500 lines for a reason: it is both halves of one memory-ordering protocol over one
 * layout (the producer's tail and end marks, the consumer's head and its offset inside a record);
 * every ordered read and write of the shared positions is in this file, so that the pairing of
 * each release with its acquire can be checked in one place, as the ring's tests and
 * docs/ring-layout.md describe it.
 */
public final class MappedMessageRing implements MessageRing {

    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int maxPayloadLength;

    /** Payloads up to this many bytes are copied word by word rather than in bulk. */
    private static final int SMALL_COPY = 64;

    /** Producer only: last head seen; stale values are smaller, so only conservative. */
    private long headCache;

    /**
     * Consumer only, this instance only: the read-ahead cursor (position of the record at the
     * cursor, payload bytes of it already peeked); -1 until first used.
     */
    private long peekHead = -1;
    private int peekConsumed;

    /**
     * Wraps a ring. Nothing is initialised: a zero-filled region is an empty ring.
     *
     * @param ring a direct buffer of {@code RING_HEADER_LENGTH + capacity} bytes from index 0 to
     *             its capacity, 8-byte aligned (a mapped region of a file starting at a multiple
     *             of 8 is); position and limit are ignored
     * @throws IllegalArgumentException when the buffer is not direct, not aligned, or its data
     *                                  area is not a valid capacity
     */
    public MappedMessageRing(ByteBuffer ring) {
        Objects.requireNonNull(ring, "ring");
        if (!ring.isDirect() || ring.isReadOnly()) {
            throw new IllegalArgumentException("ring buffer must be direct and writable");
        }
        if (ring.alignmentOffset(0, 8) != 0) {
            throw new IllegalArgumentException("ring buffer must be 8-byte aligned, alignmentOffset="
                + ring.alignmentOffset(0, 8));
        }
        int dataCapacity = ring.capacity() - RING_HEADER_LENGTH;
        if (!RingDescriptor.isValidCapacity(dataCapacity)) {
            throw new IllegalArgumentException("capacity=" + dataCapacity + " must be a power of two between "
                + RingDescriptor.MIN_CAPACITY + " and " + RingDescriptor.MAX_CAPACITY);
        }
        this.buffer = ring.duplicate().clear().order(ByteOrder.nativeOrder());
        this.capacity = dataCapacity;
        this.mask = dataCapacity - 1;
        this.maxPayloadLength = RingDescriptor.maxPayloadLength(dataCapacity);
    }

    @Override
    public boolean offer(int datatype, int count, ByteBuffer src, int offset, int length) {
        return offer(datatype, count, 0, src, offset, length);
    }

    @Override
    public boolean offer(int datatype, int count, int tagWord, ByteBuffer src, int offset, int length) {
        if (datatype < 0 || count < 1 || length > maxPayloadLength || length < count
                || (count != 1 && count != length && length % count != 0)) {
            throw badRecord(datatype, count, length, maxPayloadLength, capacity);
        }
        Objects.checkFromIndexSize(offset, length, src.limit());

        final ByteBuffer buffer = this.buffer;
        final int recordLength = RECORD_HEADER_LENGTH + length;
        final int aligned = alignedLength(recordLength);
        // plain: the producer owns the tail; a new producer instance starts after the old one stopped
        final long tail = (long) LONG.get(buffer, TAIL_POSITION_OFFSET);
        final int tailIndex = (int) tail & mask;
        final int toEnd = capacity - tailIndex;
        final int padding = aligned > toEnd ? toEnd : 0;
        final long newTail = tail + padding + aligned;

        // the 8 bytes at newTail are cleared below, so they must be free too
        if (newTail + END_MARK_LENGTH - headCache > capacity) {
            headCache = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
            if (newTail + END_MARK_LENGTH - headCache > capacity) {
                return false;
            }
        }

        final int index = padding == 0 ? tailIndex : 0;
        final int base = RING_HEADER_LENGTH + index;
        copy(src, offset, buffer, base + RECORD_HEADER_LENGTH, length);
        buffer.putInt(base + DATATYPE_OFFSET, datatype);
        buffer.putInt(base + COUNT_OFFSET, count);
        buffer.putInt(base + TAG_WORD_OFFSET, tagWord);
        // end mark: the record after this one reads as "nothing published" until it is
        LONG.set(buffer, RING_HEADER_LENGTH + ((int) newTail & mask), 0L);
        // release: elements, header and end mark must be visible before the length
        INT.setRelease(buffer, base, recordLength);
        if (padding != 0) {
            // the record at index 0 is complete before the padding leads the consumer to it
            buffer.putInt(datatypeOffset(tailIndex), PADDING_TYPE);
            INT.setRelease(buffer, lengthOffset(tailIndex), padding);
        }
        LONG.setRelease(buffer, TAIL_POSITION_OFFSET, newTail);
        return true;
    }

    @Override
    public int poll(int datatype, ByteBuffer dst, int offset, int maxElements) {
        return poll(datatype, dst, offset, maxElements, false);
    }

    @Override
    public int pollRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        return poll(datatype, dst, offset, maxElements, true);
    }

    private int poll(int datatype, ByteBuffer dst, int offset, int maxElements, boolean singleRecord) {
        if (maxElements <= 0) {
            return 0;
        }
        final ByteBuffer buffer = this.buffer;
        // plain: the consumer owns head and head record offset
        final long startHead = (long) LONG.get(buffer, HEAD_POSITION_OFFSET);
        final int startConsumed = (int) INT.get(buffer, HEAD_RECORD_OFFSET_OFFSET);
        long head = startHead;
        int consumed = startConsumed;
        int elements = 0;
        int dstIndex = offset;
        boolean mismatch = false;
        try {
            while (elements < maxElements) {
                final int index = (int) head & mask;
                final int base = RING_HEADER_LENGTH + index;
                // acquire: pairs with the producer's release of the length
                final int recordLength = (int) INT.getAcquire(buffer, base);
                if (recordLength == 0) {
                    break;
                }
                final int type = buffer.getInt(base + DATATYPE_OFFSET);
                if (type == PADDING_TYPE) {
                    if (recordLength != capacity - index || consumed != 0) {
                        throw corrupt(head, recordLength, type, 0, consumed);
                    }
                    head += recordLength;
                    continue;
                }
                if (type != datatype) {
                    mismatch = elements == 0;
                    break;
                }
                final int count = buffer.getInt(base + COUNT_OFFSET);
                final int elementSize = elementSize(recordLength, count, consumed, index);
                if (elementSize <= 0) {
                    throw corrupt(head, recordLength, type, count, consumed);
                }
                final int remainingBytes = recordLength - RECORD_HEADER_LENGTH - consumed;
                final long wantedBytes = (long) (maxElements - elements) * elementSize;
                if (wantedBytes >= remainingBytes) {
                    copy(buffer, base + RECORD_HEADER_LENGTH + consumed, dst, dstIndex, remainingBytes);
                    dstIndex += remainingBytes;
                    elements += divide(remainingBytes, elementSize);
                    head += alignedLength(recordLength);
                    consumed = 0;
                } else {
                    final int bytes = (int) wantedBytes;
                    copy(buffer, base + RECORD_HEADER_LENGTH + consumed, dst, dstIndex, bytes);
                    dstIndex += bytes;
                    elements = maxElements;
                    consumed += bytes;
                }
                if (singleRecord) {
                    break;
                }
            }
        } finally {
            if (consumed != startConsumed) {
                INT.setRelease(buffer, HEAD_RECORD_OFFSET_OFFSET, consumed);
            }
            if (head != startHead) {
                // release: the producer may overwrite what was read once it sees the new head
                LONG.setRelease(buffer, HEAD_POSITION_OFFSET, head);
            }
        }
        return mismatch ? TYPE_MISMATCH : elements;
    }

    @Override
    public int peekDatatype() {
        final ByteBuffer buffer = this.buffer;
        final long head = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        int index = (int) head & mask;
        int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
        if (recordLength == 0) {
            return EMPTY;
        }
        int type = buffer.getInt(datatypeOffset(index));
        if (type == PADDING_TYPE) {
            index = 0;
            recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
            if (recordLength == 0) {
                return EMPTY;
            }
            type = buffer.getInt(datatypeOffset(index));
        }
        return type;
    }

    @Override
    public int peekTagWord() {
        int index = headIndex();
        return index < 0 ? 0 : buffer.getInt(RING_HEADER_LENGTH + index + TAG_WORD_OFFSET);
    }

    @Override
    public int headRecordElements() {
        int index = headIndex();
        if (index < 0) {
            return 0;
        }
        int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
        int count = buffer.getInt(countOffset(index));
        int consumed = index == ((int) headPosition() & mask) ? (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET) : 0;
        int elementSize = elementSize(recordLength, count, consumed, index);
        if (elementSize <= 0) {
            throw corrupt(headPosition(), recordLength, buffer.getInt(datatypeOffset(index)), count, consumed);
        }
        return divide(recordLength - RECORD_HEADER_LENGTH - consumed, elementSize);
    }

    /** @return the data-area index of the head record (past a padding record), or -1 when empty */
    private int headIndex() {
        final long head = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        int index = (int) head & mask;
        // acquire: pairs with the producer's release of the length
        int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
        if (recordLength == 0) {
            return -1;
        }
        if (buffer.getInt(datatypeOffset(index)) == PADDING_TYPE) {
            index = 0;
            if ((int) INT.getAcquire(buffer, lengthOffset(index)) == 0) {
                return -1;
            }
        }
        return index;
    }

    @Override
    public long doorbell() {
        return (long) LONG.getVolatile(buffer, DOORBELL_OFFSET);
    }

    @Override
    public void doorbell(long encoded) {
        LONG.setVolatile(buffer, DOORBELL_OFFSET, encoded);
    }

    @Override
    public boolean takeDoorbell(long encoded) {
        return encoded != 0 && LONG.compareAndSet(buffer, DOORBELL_OFFSET, encoded, 0L);
    }

    @Override
    public boolean producerRingsDoorbell() {
        return (int) INT.getVolatile(buffer, RINGS_DOORBELL_OFFSET) == 1;
    }

    @Override
    public void producerRingsDoorbell(boolean rings) {
        INT.setVolatile(buffer, RINGS_DOORBELL_OFFSET, rings ? 1 : 0);
    }

    @Override
    public long producerMark() {
        return (long) LONG.getAcquire(buffer, PRODUCER_MARK_OFFSET);
    }

    @Override
    public void producerMark(long mark) {
        LONG.setRelease(buffer, PRODUCER_MARK_OFFSET, mark);
    }

    @Override
    public long consumerMark() {
        return (long) LONG.getAcquire(buffer, CONSUMER_MARK_OFFSET);
    }

    @Override
    public void consumerMark(long mark) {
        LONG.setRelease(buffer, CONSUMER_MARK_OFFSET, mark);
    }

    @Override
    public long peekPosition() {
        syncPeek();
        return peekHead + peekConsumed;
    }

    @Override
    public int peekNextDatatype() {
        int index = peekIndex();
        return index < 0 ? EMPTY : buffer.getInt(RING_HEADER_LENGTH + index + DATATYPE_OFFSET);
    }

    @Override
    public int peekNextTagWord() {
        int index = peekIndex();
        return index < 0 ? 0 : buffer.getInt(RING_HEADER_LENGTH + index + TAG_WORD_OFFSET);
    }

    @Override
    public int peekNextElements() {
        int index = peekIndex();
        if (index < 0) {
            return 0;
        }
        int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
        int count = buffer.getInt(countOffset(index));
        int elementSize = elementSize(recordLength, count, peekConsumed, index);
        if (elementSize <= 0) {
            throw corrupt(peekHead, recordLength, buffer.getInt(datatypeOffset(index)), count, peekConsumed);
        }
        return divide(recordLength - RECORD_HEADER_LENGTH - peekConsumed, elementSize);
    }

    @Override
    public int peekRecord(int datatype, ByteBuffer dst, int offset, int maxElements) {
        if (maxElements <= 0) {
            return 0;
        }
        final int index = peekIndex();
        if (index < 0) {
            return 0;
        }
        final ByteBuffer buffer = this.buffer;
        final int base = RING_HEADER_LENGTH + index;
        final int recordLength = (int) INT.getAcquire(buffer, base);
        final int type = buffer.getInt(base + DATATYPE_OFFSET);
        if (type != datatype) {
            return TYPE_MISMATCH;
        }
        final int count = buffer.getInt(base + COUNT_OFFSET);
        final int consumed = peekConsumed;
        final int elementSize = elementSize(recordLength, count, consumed, index);
        if (elementSize <= 0) {
            throw corrupt(peekHead, recordLength, type, count, consumed);
        }
        final int remainingBytes = recordLength - RECORD_HEADER_LENGTH - consumed;
        final long wantedBytes = (long) maxElements * elementSize;
        if (wantedBytes >= remainingBytes) {
            copy(buffer, base + RECORD_HEADER_LENGTH + consumed, dst, offset, remainingBytes);
            peekHead += alignedLength(recordLength);
            peekConsumed = 0;
            return divide(remainingBytes, elementSize);
        }
        copy(buffer, base + RECORD_HEADER_LENGTH + consumed, dst, offset, (int) wantedBytes);
        peekConsumed = consumed + (int) wantedBytes;
        return maxElements;
    }

    @Override
    public void commit(long position) {
        final ByteBuffer buffer = this.buffer;
        // plain: the consumer owns head and head record offset
        final long startHead = (long) LONG.get(buffer, HEAD_POSITION_OFFSET);
        final int startConsumed = (int) INT.get(buffer, HEAD_RECORD_OFFSET_OFFSET);
        final long limit = peekPosition();
        if (position < startHead + startConsumed || position > limit) {
            throw new IllegalArgumentException("commit position=" + position + " is outside the released "
                + (startHead + startConsumed) + " .. peeked " + limit);
        }
        long head = startHead;
        int consumed = startConsumed;
        // walk the records between the released head and the position (all published: peeked)
        while (head + consumed != position) {
            final int index = (int) head & mask;
            final int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
            final int type = buffer.getInt(datatypeOffset(index));
            if (recordLength <= 0) {
                throw corrupt(head, recordLength, type, 0, consumed);
            }
            if (type == PADDING_TYPE) {
                head += recordLength;
                continue;
            }
            final long end = head + alignedLength(recordLength);
            if (position >= end) {
                head = end;
                consumed = 0;
            } else {
                final int count = buffer.getInt(countOffset(index));
                final int inRecord = (int) (position - head);
                if (inRecord >= recordLength - RECORD_HEADER_LENGTH
                        || elementSize(recordLength, count, inRecord, index) <= 0) {
                    throw new IllegalArgumentException("commit position=" + position
                        + " is not an element boundary of the record at " + head);
                }
                consumed = inRecord;
            }
        }
        if (consumed != startConsumed) {
            INT.setRelease(buffer, HEAD_RECORD_OFFSET_OFFSET, consumed);
        }
        if (head != startHead) {
            // release: the producer may overwrite what was read once it sees the new head
            LONG.setRelease(buffer, HEAD_POSITION_OFFSET, head);
        }
    }

    @Override
    public void rewindPeek() {
        peekHead = -1;
    }

    /** Starts the read-ahead cursor at the released head when unused, or behind the head after a poll. */
    private void syncPeek() {
        final long head = (long) LONG.get(buffer, HEAD_POSITION_OFFSET);
        final int consumed = (int) INT.get(buffer, HEAD_RECORD_OFFSET_OFFSET);
        if (peekHead < 0 || peekHead + peekConsumed < head + consumed) {
            peekHead = head;
            peekConsumed = consumed;
        }
    }

    /** @return the data-area index of the record at the read-ahead cursor (past padding), or -1 */
    private int peekIndex() {
        syncPeek();
        final ByteBuffer buffer = this.buffer;
        int index = (int) peekHead & mask;
        // acquire: pairs with the producer's release of the length
        int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
        if (recordLength == 0) {
            return -1;
        }
        if (buffer.getInt(datatypeOffset(index)) == PADDING_TYPE) {
            if (recordLength != capacity - index || peekConsumed != 0) {
                throw corrupt(peekHead, recordLength, PADDING_TYPE, 0, peekConsumed);
            }
            peekHead += recordLength;
            index = 0;
            if ((int) INT.getAcquire(buffer, lengthOffset(index)) == 0) {
                return -1;
            }
        }
        return index;
    }

    @Override
    public long availableElements(int datatype) {
        return availableElements(datatype, Long.MAX_VALUE);
    }

    @Override
    public long availableElements(int datatype, long limit) {
        final ByteBuffer buffer = this.buffer;
        final long startHead = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        final long end = startHead + capacity;
        long head = startHead;
        int consumed = (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
        long available = 0;
        while (head < end && available < limit) {
            final int index = (int) head & mask;
            final int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
            if (recordLength == 0) {
                break;
            }
            final int type = buffer.getInt(datatypeOffset(index));
            if (type == PADDING_TYPE) {
                head += capacity - index;
                continue;
            }
            if (type != datatype) {
                break;
            }
            final int count = buffer.getInt(countOffset(index));
            final int elementSize = elementSize(recordLength, count, consumed, index);
            if (elementSize <= 0) {
                throw corrupt(head, recordLength, type, count, consumed);
            }
            available += divide(recordLength - RECORD_HEADER_LENGTH - consumed, elementSize);
            consumed = 0;
            head += alignedLength(recordLength);
        }
        return available;
    }

    @Override
    public boolean isEmpty() {
        final long tail = (long) LONG.getAcquire(buffer, TAIL_POSITION_OFFSET);
        final long head = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        return head >= tail;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int freeBytes() {
        final long head = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        final long tail = (long) LONG.getAcquire(buffer, TAIL_POSITION_OFFSET);
        final long used = Math.max(0, tail - head) + END_MARK_LENGTH;
        return (int) Math.max(0, capacity - used);
    }

    /**
     * @return bytes of the data area ever published: records with their headers, alignment and
     *         padding records (the tail position); any thread
     */
    @Override
    public long bytesWritten() {
        return tailPosition();
    }

    /**
     * @return bytes of the data area ever released by the consumer (the head position) plus the
     *         payload bytes already taken from the head record; any thread
     */
    @Override
    public long bytesRead() {
        final long head = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        return head + (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
    }

    /**
     * @return the largest payload one {@link #offer} accepts: {@code capacity / 2 - 16} bytes;
     *         larger messages must be split into several records
     */
    public int maxPayloadLength() {
        return maxPayloadLength;
    }

    /** @return the producer position (bytes ever committed, including padding); any thread */
    public long tailPosition() {
        return (long) LONG.getAcquire(buffer, TAIL_POSITION_OFFSET);
    }

    /** @return the consumer position (start of the head record); any thread */
    public long headPosition() {
        return (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
    }

    /** @return payload bytes already consumed from the head record; any thread */
    public int headRecordOffset() {
        return (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
    }

    @Override
    public String toString() {
        return "MappedMessageRing[capacity=" + capacity + ", head=" + headPosition() + ", tail=" + tailPosition() + "]";
    }

    /**
     * @return the element size, or 0 when the record header is inconsistent; divides only when
     *         the count is neither 1 nor the payload length
     */
    private int elementSize(int recordLength, int count, int consumed, int index) {
        final int payload = recordLength - RECORD_HEADER_LENGTH;
        if (payload <= 0 || recordLength > capacity - index || count <= 0) {
            return 0;
        }
        final int elementSize;
        if (count == 1) {
            elementSize = payload;
        } else if (count == payload) {
            elementSize = 1;
        } else {
            elementSize = payload / count;
            if (elementSize * count != payload) {
                return 0;
            }
        }
        if (consumed == 0) {
            return elementSize;
        }
        return consumed > 0 && consumed < payload && divide(consumed, elementSize) * elementSize == consumed
            ? elementSize : 0;
    }

    /** @return {@code bytes / elementSize}, a shift for the power-of-two sizes of MPI datatypes */
    private static int divide(int bytes, int elementSize) {
        return (elementSize & (elementSize - 1)) == 0 ? bytes >>> Integer.numberOfTrailingZeros(elementSize)
            : bytes / elementSize;
    }

    /**
     * Copies bytes between buffers: short runs with 8-, 4- and 1-byte loads and stores (cheaper
     * than the bulk copy's checks), longer ones with the bulk copy. Bytes keep their order. Every
     * access is bounds-checked; the callers check the whole range first where a partial copy
     * would matter.
     */
    private static void copy(ByteBuffer from, int fromIndex, ByteBuffer to, int toIndex, int length) {
        if (length > SMALL_COPY) {
            to.put(toIndex, from, fromIndex, length);
            return;
        }
        int i = 0;
        for (; i + 8 <= length; i += 8) {
            LONG.set(to, toIndex + i, (long) LONG.get(from, fromIndex + i));
        }
        if (i + 4 <= length) {
            INT.set(to, toIndex + i, (int) INT.get(from, fromIndex + i));
            i += 4;
        }
        for (; i < length; i++) {
            to.put(toIndex + i, from.get(fromIndex + i));
        }
    }

    private static IllegalArgumentException badRecord(int datatype, int count, int length, int maxPayload, int capacity) {
        return new IllegalArgumentException("invalid record: datatype=" + datatype + " count=" + count
            + " length=" + length + " (datatype >= 0, count >= 1, length a multiple of count, length <= "
            + maxPayload + " for capacity=" + capacity + ")");
    }

    private static IllegalStateException corrupt(long position, int recordLength, int type, int count, int consumed) {
        return new IllegalStateException("corrupt ring record at position=" + position + ": length=" + recordLength
            + " datatype=" + type + " count=" + count + " headRecordOffset=" + consumed);
    }
}
