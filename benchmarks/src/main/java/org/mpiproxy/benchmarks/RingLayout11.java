package org.mpiproxy.benchmarks;
import org.mpiproxy.channel.shm.RingDescriptor;

import static org.mpiproxy.channel.shm.RingDescriptor.BYTES_READ_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.BYTES_WRITTEN_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.CONSUMER_MARK_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.PRODUCER_MARK_OFFSET;
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
import static org.mpiproxy.channel.shm.RingDescriptor.elementsOffset;
import static org.mpiproxy.channel.shm.RingDescriptor.lengthOffset;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

import org.mpiproxy.api.MessageRing;

/**
 * The ring of layout 1.1 as it was before layout 2.0, kept unchanged (but for its name) so that
 * {@link RingSideBySide} can measure both in one run. Not used by the product.
 * <p>
 * A {@link MessageRing} over a direct buffer, normally one ring of a memory-mapped channel
 * file, laid out as {@link RingDescriptor} describes.
 * <p>
 * Thread-safety: as {@link MessageRing}: one producer thread calls {@link #offer}, one consumer
 * thread calls {@link #poll}, {@link #peekDatatype} and {@link #availableElements}; they may
 * be in different processes, each with its own instance over the same file. The consumer's
 * state (head, offset inside the head record, bytes read) lives in the buffer only, so a new
 * instance continues where an old one stopped. {@code offer} and {@code poll} do not allocate.
 */
public final class RingLayout11 implements MessageRing {

    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buffer;
    private final int capacity;
    private final int mask;
    private final int maxPayloadLength;

    /** Producer only: last head seen; stale values are smaller, so only conservative. */
    private long headCache;

    /**
     * Wraps a ring. Nothing is initialised: a zero-filled region is an empty ring.
     *
     * @param ring a direct buffer of {@code RING_HEADER_LENGTH + capacity} bytes from index 0 to
     *             its capacity, 8-byte aligned (a mapped region of a file starting at a multiple
     *             of 8 is); position and limit are ignored
     * @throws IllegalArgumentException when the buffer is not direct, not aligned, or its data
     *                                  area is not a valid capacity
     */
    public RingLayout11(ByteBuffer ring) {
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
        if (datatype < 0 || count < 1 || length > maxPayloadLength || length < count || length % count != 0) {
            throw badRecord(datatype, count, length, maxPayloadLength, capacity);
        }
        Objects.checkFromIndexSize(offset, length, src.limit());

        final ByteBuffer buffer = this.buffer;
        final int recordLength = RECORD_HEADER_LENGTH + length;
        final int aligned = alignedLength(recordLength);
        final long tail = (long) LONG.getAcquire(buffer, TAIL_POSITION_OFFSET);
        final int tailIndex = (int) tail & mask;
        final int toEnd = capacity - tailIndex;
        final int padding = aligned > toEnd ? toEnd : 0;
        final long newTail = tail + padding + aligned;

        if (newTail - headCache > capacity) {
            headCache = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
            if (newTail - headCache > capacity) {
                return false;
            }
        }

        final int index = padding == 0 ? tailIndex : 0;
        buffer.put(elementsOffset(index), src, offset, length);
        buffer.putInt(datatypeOffset(index), datatype);
        buffer.putInt(countOffset(index), count);
        if (tagWord != 0) {
            buffer.putInt(RING_HEADER_LENGTH + index + TAG_WORD_OFFSET, tagWord);
        }
        if (padding != 0) {
            buffer.putInt(datatypeOffset(tailIndex), PADDING_TYPE);
            // release: the padding's datatype must be visible before its length
            INT.setRelease(buffer, lengthOffset(tailIndex), padding);
        }
        // release: elements, datatype and count must be visible before the length
        INT.setRelease(buffer, lengthOffset(index), recordLength);
        LONG.setRelease(buffer, TAIL_POSITION_OFFSET, newTail);
        LONG.setRelease(buffer, BYTES_WRITTEN_OFFSET, (long) LONG.get(buffer, BYTES_WRITTEN_OFFSET) + length);
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
        final long startHead = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        final int startConsumed = (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
        long head = startHead;
        int consumed = startConsumed;
        int elements = 0;
        int dstIndex = offset;
        boolean mismatch = false;
        try {
            while (elements < maxElements) {
                final int index = (int) head & mask;
                // acquire: pairs with the producer's release of the length
                final int recordLength = (int) INT.getAcquire(buffer, lengthOffset(index));
                if (recordLength == 0) {
                    break;
                }
                final int type = buffer.getInt(datatypeOffset(index));
                if (type == PADDING_TYPE) {
                    if (recordLength != capacity - index) {
                        throw corrupt(head, recordLength, type, 0, consumed);
                    }
                    // only the padding's first 8 bytes were ever written; the rest is still zero
                    buffer.putLong(lengthOffset(index), 0L);
                    head += recordLength;
                    continue;
                }
                if (type != datatype) {
                    mismatch = elements == 0;
                    break;
                }
                final int count = buffer.getInt(countOffset(index));
                final int payload = recordLength - RECORD_HEADER_LENGTH;
                final int elementSize = validElementSize(recordLength, count, consumed, index);
                if (elementSize <= 0) {
                    throw corrupt(head, recordLength, type, count, consumed);
                }
                final int remaining = (payload - consumed) / elementSize;
                final int take = Math.min(remaining, maxElements - elements);
                final int bytes = take * elementSize;
                dst.put(dstIndex, buffer, elementsOffset(index) + consumed, bytes);
                dstIndex += bytes;
                elements += take;
                if (take == remaining) {
                    final int aligned = alignedLength(recordLength);
                    zero(buffer, RING_HEADER_LENGTH + index, aligned);
                    head += aligned;
                    consumed = 0;
                } else {
                    consumed += bytes;
                }
                if (singleRecord) {
                    break;
                }
            }
        } finally {
            if (head != startHead || consumed != startConsumed) {
                INT.setRelease(buffer, HEAD_RECORD_OFFSET_OFFSET, consumed);
                LONG.setRelease(buffer, BYTES_READ_OFFSET, (long) LONG.get(buffer, BYTES_READ_OFFSET) + (dstIndex - offset));
                // release: zeroed bytes must be visible before the producer may reuse them
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
        int consumed = (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
        int elementSize = validElementSize(recordLength, count, index == ((int) headPosition() & mask) ? consumed : 0,
                index);
        if (elementSize <= 0) {
            throw corrupt(headPosition(), recordLength, buffer.getInt(datatypeOffset(index)), count, consumed);
        }
        int payload = recordLength - RECORD_HEADER_LENGTH;
        return index == ((int) headPosition() & mask) ? (payload - consumed) / elementSize : count;
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
    public long availableElements(int datatype) {
        final ByteBuffer buffer = this.buffer;
        final long startHead = (long) LONG.getAcquire(buffer, HEAD_POSITION_OFFSET);
        final long limit = startHead + capacity;
        long head = startHead;
        int consumed = (int) INT.getAcquire(buffer, HEAD_RECORD_OFFSET_OFFSET);
        long available = 0;
        while (head < limit) {
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
            final int elementSize = validElementSize(recordLength, count, consumed, index);
            if (elementSize <= 0) {
                throw corrupt(head, recordLength, type, count, consumed);
            }
            available += (recordLength - RECORD_HEADER_LENGTH - consumed) / elementSize;
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
        final long used = tail - head;
        return used <= 0 ? capacity : (int) Math.max(0, capacity - used);
    }

    @Override
    public long bytesWritten() {
        return (long) LONG.getAcquire(buffer, BYTES_WRITTEN_OFFSET);
    }

    @Override
    public long bytesRead() {
        return (long) LONG.getAcquire(buffer, BYTES_READ_OFFSET);
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

    /** @return the element size, or 0 when the record header is inconsistent */
    private int validElementSize(int recordLength, int count, int consumed, int index) {
        final int payload = recordLength - RECORD_HEADER_LENGTH;
        if (payload <= 0 || recordLength > capacity - index || count <= 0 || payload % count != 0) {
            return 0;
        }
        final int elementSize = payload / count;
        return consumed >= 0 && consumed < payload && consumed % elementSize == 0 ? elementSize : 0;
    }

    private static void zero(ByteBuffer buffer, int from, int length) {
        for (int i = from, end = from + length; i < end; i += 8) {
            buffer.putLong(i, 0L);
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
