package org.mpiproxy.channel.shm;

/**
 * Layout of one single-producer/single-consumer ring inside a channel file, and of its records.
 *
 * <pre>
 *  Ring (offsets relative to the ring's start; C = capacity, a power of two)
 *  +------------------------------+ 0     producer line (128 bytes, written by the producer only)
 *  | tail position        int64   | 0       position after the last published record
 *  | (unused since 2.0)   int64   | 8       1.x: payload bytes ever written
 *  | producer mark        int64   | 16      the producer's protocol state (v2: next fragment sequence)
 *  | (zero)                       | 24..127
 *  +------------------------------+ 128   consumer line (128 bytes, written by the consumer only)
 *  | head position        int64   | 128     position of the head record (first unconsumed)
 *  | head record offset   int32   | 136     payload bytes already consumed from the head record
 *  | (zero)               int32   | 140
 *  | (unused since 2.0)   int64   | 144     1.x: payload bytes ever read
 *  | consumer mark        int64   | 152     the consumer's protocol state (v2: next fragment sequence)
 *  | (zero)                       | 160..255
 *  +------------------------------+ 256   data area, C bytes; position p lives at 256 + (p &amp; (C - 1))
 *  |            records           |
 *  +------------------------------+ 256 + C
 *
 *  Record (at an 8-byte aligned index of the data area)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |       Length (int32, native, &gt; 0, stored last with release)    |  0
 *  +---------------------------------------------------------------+
 *  |           Datatype (int32, native; -1 = padding record)       |  4
 *  +---------------------------------------------------------------+
 *  |              Count (int32, native, &gt;= 1 elements)              |  8
 *  +---------------------------------------------------------------+
 *  |     Tag word (int32: bit 31 more records follow, bits 0-30 tag) | 12
 *  +---------------------------------------------------------------+
 *  |          Elements: Length - 16 bytes, LITTLE-ENDIAN, dense   ...| 16
 *  +---------------------------------------------------------------+
 *  (then up to 7 bytes of alignment, any value)
 * </pre>
 * Positions are int64 byte counts that only grow; {@code tail - head} is the number of bytes
 * in use. Every header field (ring and record) is in the machine's native byte order; the
 * elements are little-endian and densely packed. A record's {@code Length} counts the 16-byte
 * header plus the elements (not the alignment padding); the element size is
 * {@code (Length - 16) / Count}. A record occupies {@link #alignedLength} bytes and never wraps:
 * when it does not fit before the end of the data area the producer first writes a padding
 * record (datatype {@link #PADDING_TYPE}, only Length and Datatype written, Length = bytes up to
 * the end of the data area) and the record at index 0.
 * <p>
 * Memory ordering (layout 2.0): the producer writes the elements, Datatype, Count and Tag word,
 * clears the {@link #END_MARK_LENGTH} bytes at the record's end position (where the next record
 * will start: its Length then reads 0), then stores Length with release; after a padding record's
 * real record at index 0 it stores the padding's Datatype and then its Length with release; last
 * the tail with release. The consumer loads Length at the head with acquire (0 = nothing
 * published yet), reads the record, and stores the head with release; it writes nothing into the
 * data area. The producer loads the head with acquire before reusing space, and needs
 * {@link #END_MARK_LENGTH} free bytes beyond each record for the end mark.
 * <p>
 * This class only holds constants and pure functions.
 */
public final class RingDescriptor {

    /** Offset of the tail position (int64, producer-owned, release). */
    public static final int TAIL_POSITION_OFFSET = 0;

    /**
     * Offset of the bytes-written counter of layout 1.x (int64); unused since 2.0, where the
     * tail position counts the bytes written.
     */
    public static final int BYTES_WRITTEN_OFFSET = 8;

    /** Offset of the producer mark (int64, producer-owned; since version 1.1, zero before). */
    public static final int PRODUCER_MARK_OFFSET = 16;

    /**
     * Offset of the consumer's doorbell (int64, volatile; since version 2.1, zero before and when
     * unused): 0, or the encoded UDP address where the consumer sleeps
     * ({@code ipv4 << 16 | port}). The consumer writes it before it sleeps; a producer that
     * published and reads it (after a full fence) sets it back to 0 with a compare-and-set and
     * sends a datagram there. On a cache line of its own.
     */
    public static final int DOORBELL_OFFSET = 64;

    /**
     * Offset of the producer's promise to ring the doorbell (int32; since version 2.1, zero
     * before and when unused): 1 when the producer rings {@link #DOORBELL_OFFSET} after it
     * publishes, so that its consumer may sleep longer than its timer-driven back-off would.
     */
    public static final int RINGS_DOORBELL_OFFSET = 72;

    /** Offset of the consumer mark (int64, consumer-owned; since version 1.1, zero before). */
    public static final int CONSUMER_MARK_OFFSET = 152;

    /** Offset of the head position (int64, consumer-owned, release). */
    public static final int HEAD_POSITION_OFFSET = 128;

    /** Offset of the payload bytes already consumed from the head record (int32, consumer-owned). */
    public static final int HEAD_RECORD_OFFSET_OFFSET = 136;

    /**
     * Offset of the bytes-read counter of layout 1.x (int64); unused since 2.0, where the head
     * position counts the bytes read.
     */
    public static final int BYTES_READ_OFFSET = 144;

    /** Length of the ring header; the data area starts here. */
    public static final int RING_HEADER_LENGTH = 256;

    /** Offset of a record's length (int32, native, release/acquire). */
    public static final int LENGTH_OFFSET = 0;

    /** Offset of a record's datatype (int32, native). */
    public static final int DATATYPE_OFFSET = 4;

    /** Offset of a record's element count (int32, native). */
    public static final int COUNT_OFFSET = 8;

    /** Offset of a record's reserved field, the tag word since version 1.1 (int32). */
    public static final int RESERVED_OFFSET = 12;

    /** Offset of a record's tag word: bit 31 set when more records of the message follow, bits 0-30 the tag. */
    public static final int TAG_WORD_OFFSET = RESERVED_OFFSET;

    /** Length of a record header; the elements start here. */
    public static final int RECORD_HEADER_LENGTH = 16;

    /** Records start at multiples of this. */
    public static final int RECORD_ALIGNMENT = 8;

    /**
     * Bytes the producer clears at the end of each record it publishes (the next record's Length
     * and Datatype), so that the consumer finds Length 0 there until the next record is published.
     * They must be free: a record needs {@code alignedLength + END_MARK_LENGTH} free bytes.
     */
    public static final int END_MARK_LENGTH = 8;

    /** Datatype of a padding record, which fills the data area up to its end. */
    public static final int PADDING_TYPE = -1;

    /** Smallest ring capacity. */
    public static final int MIN_CAPACITY = 4096;

    /** Largest ring capacity. */
    public static final int MAX_CAPACITY = 1 << 30;

    private RingDescriptor() {
    }

    /**
     * @param capacity a capacity
     * @return {@code true} when it is a power of two between {@link #MIN_CAPACITY} and
     *         {@link #MAX_CAPACITY}
     */
    public static boolean isValidCapacity(int capacity) {
        return capacity >= MIN_CAPACITY && capacity <= MAX_CAPACITY && Integer.bitCount(capacity) == 1;
    }

    /**
     * @param capacity capacity of the data area
     * @return ring header plus data area
     */
    public static long ringLength(int capacity) {
        return RING_HEADER_LENGTH + (long) capacity;
    }

    /**
     * @param capacity capacity of the data area
     * @return the largest payload of one record: an aligned record takes at most half the data
     *         area, so an empty ring accepts it at any position
     */
    public static int maxPayloadLength(int capacity) {
        return capacity / 2 - RECORD_HEADER_LENGTH;
    }

    /**
     * @param payloadLength element bytes
     * @return the record's Length field: header plus elements
     */
    public static int recordLength(int payloadLength) {
        return RECORD_HEADER_LENGTH + payloadLength;
    }

    /**
     * @param recordLength a record's Length field
     * @return bytes the record occupies in the data area
     */
    public static int alignedLength(int recordLength) {
        return (recordLength + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }

    /**
     * @param position a head or tail position
     * @param capacity capacity of the data area
     * @return the index of the position inside the data area
     */
    public static int index(long position, int capacity) {
        return (int) position & (capacity - 1);
    }

    /**
     * @param index index inside the data area
     * @return offset of that index relative to the ring's start
     */
    public static int dataOffset(int index) {
        return RING_HEADER_LENGTH + index;
    }

    /**
     * @param index index of a record inside the data area
     * @return offset of the record's length field, relative to the ring's start
     */
    public static int lengthOffset(int index) {
        return RING_HEADER_LENGTH + index + LENGTH_OFFSET;
    }

    /**
     * @param index index of a record inside the data area
     * @return offset of the record's datatype field, relative to the ring's start
     */
    public static int datatypeOffset(int index) {
        return RING_HEADER_LENGTH + index + DATATYPE_OFFSET;
    }

    /**
     * @param index index of a record inside the data area
     * @return offset of the record's count field, relative to the ring's start
     */
    public static int countOffset(int index) {
        return RING_HEADER_LENGTH + index + COUNT_OFFSET;
    }

    /**
     * @param index index of a record inside the data area
     * @return offset of the record's first element, relative to the ring's start
     */
    public static int elementsOffset(int index) {
        return RING_HEADER_LENGTH + index + RECORD_HEADER_LENGTH;
    }
}
