package org.mpiproxy.benchmarks;

import org.mpiproxy.channel.shm.RingDescriptor;

import static org.mpiproxy.channel.shm.RingDescriptor.CONSUMER_MARK_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.COUNT_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.DATATYPE_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.END_MARK_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.PRODUCER_MARK_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.TAG_WORD_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.HEAD_POSITION_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.HEAD_RECORD_OFFSET_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.PADDING_TYPE;
import static org.mpiproxy.channel.shm.RingDescriptor.RECORD_HEADER_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.RING_HEADER_LENGTH;
import static org.mpiproxy.channel.shm.RingDescriptor.TAIL_POSITION_OFFSET;
import static org.mpiproxy.channel.shm.RingDescriptor.alignedLength;
import static org.mpiproxy.channel.shm.RingDescriptor.datatypeOffset;
import static org.mpiproxy.channel.shm.RingDescriptor.lengthOffset;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

import org.mpiproxy.api.MessageRing;

/**
 * An experiment kept for the benchmarks, not used by the product: the ring of layout 2.0 with
 * every access to the mapped region through {@code sun.misc.Unsafe} at its address, each record's
 * position and length validated once instead of on every access (the product's
 * {@code MappedMessageRing} stays on {@code ByteBuffer} VarHandles: JDK only). Measured beside
 * the product's ring and Agrona's in {@link RingSideBySide} and {@link RingCostBenchmark}.
 * <p>
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
 * Memory access: where {@code sun.misc.Unsafe} is available (module {@code jdk.unsupported};
 * in Karaf the system bundle exports {@code sun.misc}), the ring reads and writes the mapped
 * region at its address, without the bounds and session checks of each {@code ByteBuffer}
 * access; instead every record's position and length are validated once against the data area
 * before its bytes are touched (positions 8-byte aligned, the record inside the data area), and
 * the caller's buffer range once per copy. Releases are ordered stores, acquires volatile loads,
 * payloads are copied with {@code copyMemory} (word by word up to 64 bytes). Without
 * {@code Unsafe}, or with the system property {@code org.mpiproxy.channel.shm.unsafe=false},
 * the same code goes through the {@code ByteBuffer} VarHandles. Both produce the same bytes
 * (layout 2.0) and may be mixed across processes.
 * <p>
 * Longer than 500 lines for a reason: like the product's {@code MappedMessageRing}, it is both
 * halves of one memory-ordering protocol over one layout (the producer's tail and end marks, the
 * consumer's head and its offset inside a record), kept in one file so that each release can be
 * checked against its acquire, and whole so that it measures as one ring against the others.
 */
public final class RingUnsafe20 implements MessageRing {

    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    /** Whether the region is accessed through {@code Unsafe} at {@link #address}; constant for the JIT. */
    private static final boolean UNSAFE = probeUnsafe();
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final ByteBuffer buffer;
    /** Address of index 0 of {@link #buffer} when {@link #UNSAFE}; the buffer keeps the mapping alive. */
    private final long address;
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
    public RingUnsafe20(ByteBuffer ring) {
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
        this.address = UNSAFE ? RingUnsafeMemory.address(ring) : 0L;
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

        final int recordLength = RECORD_HEADER_LENGTH + length;
        final int aligned = alignedLength(recordLength);
        // plain: the producer owns the tail; a new producer instance starts after the old one stopped
        final long tail = checkAligned(getLong(TAIL_POSITION_OFFSET));
        final int tailIndex = (int) tail & mask;
        final int toEnd = capacity - tailIndex;
        final int padding = aligned > toEnd ? toEnd : 0;
        final long newTail = tail + padding + aligned;

        // the 8 bytes at newTail are cleared below, so they must be free too
        if (newTail + END_MARK_LENGTH - headCache > capacity) {
            headCache = getLongAcquire(HEAD_POSITION_OFFSET);
            if (newTail + END_MARK_LENGTH - headCache > capacity) {
                return false;
            }
        }

        final int index = padding == 0 ? tailIndex : 0;
        final int base = RING_HEADER_LENGTH + index;
        copyIn(src, offset, base + RECORD_HEADER_LENGTH, length);
        putInt(base + DATATYPE_OFFSET, datatype);
        // count (offset 8) and tag word (offset 12) in one aligned 8-byte store
        putLong(base + COUNT_OFFSET, LITTLE_ENDIAN ? (count & 0xFFFF_FFFFL) | ((long) tagWord << 32)
            : ((long) count << 32) | (tagWord & 0xFFFF_FFFFL));
        // end mark: the record after this one reads as "nothing published" until it is
        putLong(RING_HEADER_LENGTH + ((int) newTail & mask), 0L);
        // release: elements, header and end mark must be visible before the length
        putIntRelease(base, recordLength);
        if (padding != 0) {
            // the record at index 0 is complete before the padding leads the consumer to it
            putInt(datatypeOffset(tailIndex), PADDING_TYPE);
            putIntRelease(lengthOffset(tailIndex), padding);
        }
        putLongRelease(TAIL_POSITION_OFFSET, newTail);
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
        // plain: the consumer owns head and head record offset
        final long startHead = checkAligned(getLong(HEAD_POSITION_OFFSET));
        final int startConsumed = getInt(HEAD_RECORD_OFFSET_OFFSET);
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
                final int recordLength = getIntAcquire(base);
                if (recordLength == 0) {
                    break;
                }
                final int type = getInt(base + DATATYPE_OFFSET);
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
                final int count = countAt(index, recordLength);
                final int elementSize = elementSize(recordLength, count, consumed, index);
                if (elementSize <= 0) {
                    throw corrupt(head, recordLength, type, count, consumed);
                }
                final int remainingBytes = recordLength - RECORD_HEADER_LENGTH - consumed;
                final long wantedBytes = (long) (maxElements - elements) * elementSize;
                if (wantedBytes >= remainingBytes) {
                    copyOut(base + RECORD_HEADER_LENGTH + consumed, dst, dstIndex, remainingBytes);
                    dstIndex += remainingBytes;
                    elements += divide(remainingBytes, elementSize);
                    head += alignedLength(recordLength);
                    consumed = 0;
                } else {
                    final int bytes = (int) wantedBytes;
                    copyOut(base + RECORD_HEADER_LENGTH + consumed, dst, dstIndex, bytes);
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
                putIntRelease(HEAD_RECORD_OFFSET_OFFSET, consumed);
            }
            if (head != startHead) {
                // release: the producer may overwrite what was read once it sees the new head
                putLongRelease(HEAD_POSITION_OFFSET, head);
            }
        }
        return mismatch ? TYPE_MISMATCH : elements;
    }

    @Override
    public int peekDatatype() {
        final long head = checkAligned(getLongAcquire(HEAD_POSITION_OFFSET));
        int index = (int) head & mask;
        int recordLength = getIntAcquire(lengthOffset(index));
        if (recordLength == 0) {
            return EMPTY;
        }
        int type = getInt(datatypeOffset(index));
        if (type == PADDING_TYPE) {
            index = 0;
            recordLength = getIntAcquire(lengthOffset(index));
            if (recordLength == 0) {
                return EMPTY;
            }
            type = getInt(datatypeOffset(index));
        }
        return type;
    }

    @Override
    public int peekTagWord() {
        int index = headIndex();
        return index < 0 ? 0 : tagAt(index);
    }

    @Override
    public int headRecordElements() {
        int index = headIndex();
        if (index < 0) {
            return 0;
        }
        int recordLength = getIntAcquire(lengthOffset(index));
        int count = countAt(index, recordLength);
        int consumed = index == ((int) headPosition() & mask) ? getIntAcquire(HEAD_RECORD_OFFSET_OFFSET) : 0;
        int elementSize = elementSize(recordLength, count, consumed, index);
        if (elementSize <= 0) {
            throw corrupt(headPosition(), recordLength, getInt(datatypeOffset(index)), count, consumed);
        }
        return divide(recordLength - RECORD_HEADER_LENGTH - consumed, elementSize);
    }

    /** @return the data-area index of the head record (past a padding record), or -1 when empty */
    private int headIndex() {
        final long head = checkAligned(getLongAcquire(HEAD_POSITION_OFFSET));
        int index = (int) head & mask;
        // acquire: pairs with the producer's release of the length
        int recordLength = getIntAcquire(lengthOffset(index));
        if (recordLength == 0) {
            return -1;
        }
        if (getInt(datatypeOffset(index)) == PADDING_TYPE) {
            index = 0;
            if (getIntAcquire(lengthOffset(index)) == 0) {
                return -1;
            }
        }
        return index;
    }

    @Override
    public long producerMark() {
        return getLongAcquire(PRODUCER_MARK_OFFSET);
    }

    @Override
    public void producerMark(long mark) {
        putLongRelease(PRODUCER_MARK_OFFSET, mark);
    }

    @Override
    public long consumerMark() {
        return getLongAcquire(CONSUMER_MARK_OFFSET);
    }

    @Override
    public void consumerMark(long mark) {
        putLongRelease(CONSUMER_MARK_OFFSET, mark);
    }

    @Override
    public long peekPosition() {
        syncPeek();
        return peekHead + peekConsumed;
    }

    @Override
    public int peekNextDatatype() {
        int index = peekIndex();
        return index < 0 ? EMPTY : getInt(RING_HEADER_LENGTH + index + DATATYPE_OFFSET);
    }

    @Override
    public int peekNextTagWord() {
        int index = peekIndex();
        return index < 0 ? 0 : tagAt(index);
    }

    @Override
    public int peekNextElements() {
        int index = peekIndex();
        if (index < 0) {
            return 0;
        }
        int recordLength = getIntAcquire(lengthOffset(index));
        int count = countAt(index, recordLength);
        int elementSize = elementSize(recordLength, count, peekConsumed, index);
        if (elementSize <= 0) {
            throw corrupt(peekHead, recordLength, getInt(datatypeOffset(index)), count, peekConsumed);
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
        final int base = RING_HEADER_LENGTH + index;
        final int recordLength = getIntAcquire(base);
        final int type = getInt(base + DATATYPE_OFFSET);
        if (type != datatype) {
            return TYPE_MISMATCH;
        }
        final int count = countAt(index, recordLength);
        final int consumed = peekConsumed;
        final int elementSize = elementSize(recordLength, count, consumed, index);
        if (elementSize <= 0) {
            throw corrupt(peekHead, recordLength, type, count, consumed);
        }
        final int remainingBytes = recordLength - RECORD_HEADER_LENGTH - consumed;
        final long wantedBytes = (long) maxElements * elementSize;
        if (wantedBytes >= remainingBytes) {
            copyOut(base + RECORD_HEADER_LENGTH + consumed, dst, offset, remainingBytes);
            peekHead += alignedLength(recordLength);
            peekConsumed = 0;
            return divide(remainingBytes, elementSize);
        }
        copyOut(base + RECORD_HEADER_LENGTH + consumed, dst, offset, (int) wantedBytes);
        peekConsumed = consumed + (int) wantedBytes;
        return maxElements;
    }

    @Override
    public void commit(long position) {
        // plain: the consumer owns head and head record offset
        final long startHead = checkAligned(getLong(HEAD_POSITION_OFFSET));
        final int startConsumed = getInt(HEAD_RECORD_OFFSET_OFFSET);
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
            final int recordLength = getIntAcquire(lengthOffset(index));
            final int type = getInt(datatypeOffset(index));
            if (recordLength <= 0) {
                throw corrupt(head, recordLength, type, 0, consumed);
            }
            if (type == PADDING_TYPE) {
                if (recordLength != capacity - index) {
                    throw corrupt(head, recordLength, type, 0, consumed);
                }
                head += recordLength;
                continue;
            }
            final long end = head + alignedLength(recordLength);
            if (position >= end) {
                head = end;
                consumed = 0;
            } else {
                final int count = countAt(index, recordLength);
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
            putIntRelease(HEAD_RECORD_OFFSET_OFFSET, consumed);
        }
        if (head != startHead) {
            // release: the producer may overwrite what was read once it sees the new head
            putLongRelease(HEAD_POSITION_OFFSET, head);
        }
    }

    @Override
    public void rewindPeek() {
        peekHead = -1;
    }

    /** Starts the read-ahead cursor at the released head when unused, or behind the head after a poll. */
    private void syncPeek() {
        final long head = checkAligned(getLong(HEAD_POSITION_OFFSET));
        final int consumed = getInt(HEAD_RECORD_OFFSET_OFFSET);
        if (peekHead < 0 || peekHead + peekConsumed < head + consumed) {
            peekHead = head;
            peekConsumed = consumed;
        }
    }

    /** @return the data-area index of the record at the read-ahead cursor (past padding), or -1 */
    private int peekIndex() {
        syncPeek();
        int index = (int) peekHead & mask;
        // acquire: pairs with the producer's release of the length
        int recordLength = getIntAcquire(lengthOffset(index));
        if (recordLength == 0) {
            return -1;
        }
        if (getInt(datatypeOffset(index)) == PADDING_TYPE) {
            if (recordLength != capacity - index || peekConsumed != 0) {
                throw corrupt(peekHead, recordLength, PADDING_TYPE, 0, peekConsumed);
            }
            peekHead += recordLength;
            index = 0;
            if (getIntAcquire(lengthOffset(index)) == 0) {
                return -1;
            }
        }
        return index;
    }

    @Override
    public long availableElements(int datatype) {
        final long startHead = checkAligned(getLongAcquire(HEAD_POSITION_OFFSET));
        final long limit = startHead + capacity;
        long head = startHead;
        int consumed = getIntAcquire(HEAD_RECORD_OFFSET_OFFSET);
        long available = 0;
        while (head < limit) {
            final int index = (int) head & mask;
            final int recordLength = getIntAcquire(lengthOffset(index));
            if (recordLength == 0) {
                break;
            }
            final int type = getInt(datatypeOffset(index));
            if (type == PADDING_TYPE) {
                head += capacity - index;
                continue;
            }
            if (type != datatype) {
                break;
            }
            final int count = countAt(index, recordLength);
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
        final long tail = getLongAcquire(TAIL_POSITION_OFFSET);
        final long head = getLongAcquire(HEAD_POSITION_OFFSET);
        return head >= tail;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public int freeBytes() {
        final long head = getLongAcquire(HEAD_POSITION_OFFSET);
        final long tail = getLongAcquire(TAIL_POSITION_OFFSET);
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
        final long head = getLongAcquire(HEAD_POSITION_OFFSET);
        return head + getIntAcquire(HEAD_RECORD_OFFSET_OFFSET);
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
        return getLongAcquire(TAIL_POSITION_OFFSET);
    }

    /** @return the consumer position (start of the head record); any thread */
    public long headPosition() {
        return getLongAcquire(HEAD_POSITION_OFFSET);
    }

    /** @return payload bytes already consumed from the head record; any thread */
    public int headRecordOffset() {
        return getIntAcquire(HEAD_RECORD_OFFSET_OFFSET);
    }

    @Override
    public String toString() {
        return "RingUnsafe20[capacity=" + capacity + ", head=" + headPosition() + ", tail=" + tailPosition() + "]";
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

    /** @return the tag word of the published record at {@code index}, or 0 when its length is out of range */
    private int tagAt(int index) {
        final int recordLength = getIntAcquire(lengthOffset(index));
        return recordLength >= RECORD_HEADER_LENGTH && recordLength <= capacity - index
            ? getInt(RING_HEADER_LENGTH + index + TAG_WORD_OFFSET) : 0;
    }

    /**
     * @return the count of the record at {@code index}, or 0 (which the callers report as a
     *         corrupt record) when the record does not lie inside the data area: the count is
     *         read only where a record header can be
     */
    private int countAt(int index, int recordLength) {
        return recordLength >= RECORD_HEADER_LENGTH && recordLength <= capacity - index
            ? getInt(RING_HEADER_LENGTH + index + COUNT_OFFSET) : 0;
    }

    /**
     * @return {@code position}, checked to be a multiple of 8 (every position the ring stores is),
     *         so that the 8 bytes of a record's length and datatype lie inside the data area
     */
    private static long checkAligned(long position) {
        if ((position & (RingDescriptor.RECORD_ALIGNMENT - 1)) != 0) {
            throw new IllegalStateException("corrupt ring position=" + position + ": not a multiple of "
                + RingDescriptor.RECORD_ALIGNMENT);
        }
        return position;
    }

    // Accesses of the ring's region by offset from its start: through Unsafe at the address,
    // or through the checked ByteBuffer accesses (native order).

    private int getInt(int offset) {
        return UNSAFE ? RingUnsafeMemory.getInt(address + offset) : buffer.getInt(offset);
    }

    private long getLong(int offset) {
        return UNSAFE ? RingUnsafeMemory.getLong(address + offset) : buffer.getLong(offset);
    }

    private void putInt(int offset, int value) {
        if (UNSAFE) {
            RingUnsafeMemory.putInt(address + offset, value);
        } else {
            buffer.putInt(offset, value);
        }
    }

    private void putLong(int offset, long value) {
        if (UNSAFE) {
            RingUnsafeMemory.putLong(address + offset, value);
        } else {
            buffer.putLong(offset, value);
        }
    }

    private int getIntAcquire(int offset) {
        return UNSAFE ? RingUnsafeMemory.getIntAcquire(address + offset) : (int) INT.getAcquire(buffer, offset);
    }

    private long getLongAcquire(int offset) {
        return UNSAFE ? RingUnsafeMemory.getLongAcquire(address + offset) : (long) LONG.getAcquire(buffer, offset);
    }

    private void putIntRelease(int offset, int value) {
        if (UNSAFE) {
            RingUnsafeMemory.putIntRelease(address + offset, value);
        } else {
            INT.setRelease(buffer, offset, value);
        }
    }

    private void putLongRelease(int offset, long value) {
        if (UNSAFE) {
            RingUnsafeMemory.putLongRelease(address + offset, value);
        } else {
            LONG.setRelease(buffer, offset, value);
        }
    }

    /** Copies {@code length} bytes of {@code src} (range checked by the caller) into the ring. */
    private void copyIn(ByteBuffer src, int srcIndex, int ringOffset, int length) {
        if (UNSAFE) {
            if (src.isDirect()) {
                RingUnsafeMemory.copy(null, RingUnsafeMemory.address(src) + srcIndex, null, address + ringOffset, length);
                Reference.reachabilityFence(src);
                return;
            }
            if (src.hasArray()) {
                RingUnsafeMemory.copy(src.array(), RingUnsafeMemory.arrayOffset(src) + srcIndex, null, address + ringOffset, length);
                return;
            }
        }
        copy(src, srcIndex, buffer, ringOffset, length);
    }

    /**
     * Copies {@code length} bytes of the ring (a range inside a validated record) into
     * {@code dst}, whose range is checked here, before anything is written.
     */
    private void copyOut(int ringOffset, ByteBuffer dst, int dstIndex, int length) {
        Objects.checkFromIndexSize(dstIndex, length, dst.limit());
        if (UNSAFE) {
            if (dst.isDirect() && !dst.isReadOnly()) {
                RingUnsafeMemory.copy(null, address + ringOffset, null, RingUnsafeMemory.address(dst) + dstIndex, length);
                Reference.reachabilityFence(dst);
                return;
            }
            if (dst.hasArray()) {
                RingUnsafeMemory.copy(null, address + ringOffset, dst.array(), RingUnsafeMemory.arrayOffset(dst) + dstIndex, length);
                return;
            }
        }
        copy(buffer, ringOffset, dst, dstIndex, length);
    }

    /** @return whether {@link RingUnsafeMemory} works here (false when {@code sun.misc} cannot be loaded) */
    private static boolean probeUnsafe() {
        try {
            return RingUnsafeMemory.probe();
        } catch (LinkageError e) {
            return false;
        }
    }

    /** @return whether this JVM's rings access memory through {@code Unsafe} (for tests and benchmarks) */
    static boolean usesUnsafe() {
        return UNSAFE;
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
