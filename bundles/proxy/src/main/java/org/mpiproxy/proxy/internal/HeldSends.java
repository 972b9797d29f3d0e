package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * FIFO of SEND records copied aside while a rank's ring is full. Records sit back to back in
 * one heap buffer that is compacted and grown on demand, so a steady state allocates nothing.
 * Relay thread only.
 * <pre>
 *  record: datatype (int) | count (int) | length (int) | payload (length bytes)
 * </pre>
 */
final class HeldSends {

    static final int RECORD_HEADER_LENGTH = 12;
    private static final int INITIAL_CAPACITY = 4096;

    private ByteBuffer buffer = ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);
    private int head;
    private int tail;
    private long heldBytes;
    private int records;

    /**
     * Copies one record.
     *
     * @param limitBytes most payload bytes held in total
     * @return {@code false} when holding it would exceed {@code limitBytes} (nothing copied)
     */
    boolean add(int datatype, int count, ByteBuffer src, int offset, int length, long limitBytes) {
        if (heldBytes + length > limitBytes) {
            return false;
        }
        ensureRoom(RECORD_HEADER_LENGTH + length);
        buffer.putInt(tail, datatype);
        buffer.putInt(tail + 4, count);
        buffer.putInt(tail + 8, length);
        buffer.put(tail + RECORD_HEADER_LENGTH, src, offset, length);
        tail += RECORD_HEADER_LENGTH + length;
        heldBytes += length;
        records++;
        return true;
    }

    private void ensureRoom(int needed) {
        if (buffer.capacity() - tail >= needed) {
            return;
        }
        int used = tail - head;
        if (buffer.capacity() - used >= needed && used <= buffer.capacity() / 2) {
            // heap buffer: arraycopy handles the overlap
            System.arraycopy(buffer.array(), head, buffer.array(), 0, used);
        } else {
            int capacity = Math.max(INITIAL_CAPACITY, Math.max(buffer.capacity() * 2, used + needed));
            ByteBuffer grown = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
            grown.put(0, buffer, head, used);
            buffer = grown;
        }
        head = 0;
        tail = used;
    }

    boolean isEmpty() {
        return records == 0;
    }

    int headDatatype() {
        return buffer.getInt(head);
    }

    int headCount() {
        return buffer.getInt(head + 4);
    }

    int headLength() {
        return buffer.getInt(head + 8);
    }

    /** @return absolute index of the head record's payload in {@link #buffer()} */
    int headPayloadOffset() {
        return head + RECORD_HEADER_LENGTH;
    }

    ByteBuffer buffer() {
        return buffer;
    }

    /** Removes the head record. */
    void pop() {
        int length = headLength();
        head += RECORD_HEADER_LENGTH + length;
        heldBytes -= length;
        records--;
        if (records == 0) {
            head = 0;
            tail = 0;
        }
    }

    /** @return payload bytes held */
    long heldBytes() {
        return heldBytes;
    }

    int records() {
        return records;
    }

    /** Drops everything held. */
    void clear() {
        head = 0;
        tail = 0;
        heldBytes = 0;
        records = 0;
    }

    /** @return the held records as one array (each: datatype, count, length, payload), for a hand-over */
    byte[] export() {
        byte[] records = new byte[tail - head];
        buffer.get(head, records);
        return records;
    }

    /**
     * Holds again what {@link #export} gave, after what is held already.
     *
     * @param records the exported records
     * @throws IllegalArgumentException when they are not well formed
     */
    void restore(byte[] records) {
        ByteBuffer in = ByteBuffer.wrap(records).order(ByteOrder.LITTLE_ENDIAN);
        int at = 0;
        while (at < records.length) {
            if (records.length - at < RECORD_HEADER_LENGTH) {
                throw new IllegalArgumentException("held SEND records cut short at byte " + at);
            }
            int length = in.getInt(at + 8);
            if (length < 0 || length > records.length - at - RECORD_HEADER_LENGTH) {
                throw new IllegalArgumentException("held SEND record at byte " + at + " has length " + length);
            }
            add(in.getInt(at), in.getInt(at + 4), in, at + RECORD_HEADER_LENGTH, length, Long.MAX_VALUE);
            at += RECORD_HEADER_LENGTH + length;
        }
    }
}
