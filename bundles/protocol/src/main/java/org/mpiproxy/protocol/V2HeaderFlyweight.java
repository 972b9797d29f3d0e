package org.mpiproxy.protocol;

import static org.mpiproxy.protocol.V2HeaderDescriptor.ACK_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.ARGUMENT_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.CORE_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.DATATYPE_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAGS_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.JOB_ID_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.KEY_ID_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAGIC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.MAGIC_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.NODE_ID_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.NONCE_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OPERATION_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.PAYLOAD_LENGTH_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.RANK_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.RESULT_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.SEQUENCE_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.TAG_OFFSET;
import static org.mpiproxy.protocol.V2HeaderDescriptor.TIMESTAMP_OFFSET;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * A view over a v2 header in a {@link ByteBuffer}, heap or direct, whatever the buffer's own
 * byte order: fields are always little-endian. Reusable: {@link #wrap} another buffer.
 * Not thread-safe.
 */
public final class V2HeaderFlyweight {

    private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class,
            V2HeaderDescriptor.BYTE_ORDER);
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class,
            V2HeaderDescriptor.BYTE_ORDER);
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class,
            V2HeaderDescriptor.BYTE_ORDER);

    private ByteBuffer buffer;
    private int offset;

    /**
     * @param buffer the buffer holding the header
     * @param offset absolute index of the header's first byte
     * @return this
     * @throws IndexOutOfBoundsException when the buffer's capacity cannot hold a header there
     */
    public V2HeaderFlyweight wrap(ByteBuffer buffer, int offset) {
        if (offset < 0 || offset + HEADER_LENGTH > buffer.capacity()) {
            throw new IndexOutOfBoundsException("offset=" + offset + " capacity=" + buffer.capacity());
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the wrapped buffer */
    public ByteBuffer buffer() {
        return buffer;
    }

    /** @return absolute index of the header */
    public int offset() {
        return offset;
    }

    /** @return absolute index of the first payload byte */
    public int payloadOffset() {
        return offset + HEADER_LENGTH;
    }

    /** @return absolute index of the MAC trailer, after the payload */
    public int macOffset() {
        return offset + HEADER_LENGTH + payloadLength();
    }

    /** @return header plus payload plus MAC, from the declared payload length */
    public int datagramLength() {
        return V2HeaderDescriptor.datagramLength(payloadLength());
    }

    public int magic() {
        return buffer.get(offset + MAGIC_OFFSET) & 0xff;
    }

    /** Writes the v2 magic byte. @return this */
    public V2HeaderFlyweight writeMagic() {
        buffer.put(offset + MAGIC_OFFSET, (byte) MAGIC);
        return this;
    }

    public int operation() {
        return buffer.get(offset + OPERATION_OFFSET) & 0xff;
    }

    public V2HeaderFlyweight operation(int value) {
        buffer.put(offset + OPERATION_OFFSET, (byte) value);
        return this;
    }

    public int flags() {
        return buffer.get(offset + FLAGS_OFFSET) & 0xff;
    }

    public V2HeaderFlyweight flags(int value) {
        buffer.put(offset + FLAGS_OFFSET, (byte) value);
        return this;
    }

    public int keyId() {
        return buffer.get(offset + KEY_ID_OFFSET) & 0xff;
    }

    public V2HeaderFlyweight keyId(int value) {
        buffer.put(offset + KEY_ID_OFFSET, (byte) value);
        return this;
    }

    public int result() {
        return (short) SHORT.get(buffer, offset + RESULT_OFFSET) & 0xffff;
    }

    public V2HeaderFlyweight result(int value) {
        SHORT.set(buffer, offset + RESULT_OFFSET, (short) value);
        return this;
    }

    public int datatype() {
        return (short) SHORT.get(buffer, offset + DATATYPE_OFFSET) & 0xffff;
    }

    public V2HeaderFlyweight datatype(int value) {
        SHORT.set(buffer, offset + DATATYPE_OFFSET, (short) value);
        return this;
    }

    public long nodeId() {
        return (long) LONG.get(buffer, offset + NODE_ID_OFFSET);
    }

    public V2HeaderFlyweight nodeId(long value) {
        LONG.set(buffer, offset + NODE_ID_OFFSET, value);
        return this;
    }

    public long jobId() {
        return (long) LONG.get(buffer, offset + JOB_ID_OFFSET);
    }

    public V2HeaderFlyweight jobId(long value) {
        LONG.set(buffer, offset + JOB_ID_OFFSET, value);
        return this;
    }

    /** @return the rank, unsigned */
    public long rank() {
        return (int) INT.get(buffer, offset + RANK_OFFSET) & 0xffffffffL;
    }

    public V2HeaderFlyweight rank(long value) {
        INT.set(buffer, offset + RANK_OFFSET, (int) value);
        return this;
    }

    public int tag() {
        return (int) INT.get(buffer, offset + TAG_OFFSET);
    }

    public V2HeaderFlyweight tag(int value) {
        INT.set(buffer, offset + TAG_OFFSET, value);
        return this;
    }

    public long sequence() {
        return (long) LONG.get(buffer, offset + SEQUENCE_OFFSET);
    }

    public V2HeaderFlyweight sequence(long value) {
        LONG.set(buffer, offset + SEQUENCE_OFFSET, value);
        return this;
    }

    public long ack() {
        return (long) LONG.get(buffer, offset + ACK_OFFSET);
    }

    public V2HeaderFlyweight ack(long value) {
        LONG.set(buffer, offset + ACK_OFFSET, value);
        return this;
    }

    public long timestamp() {
        return (long) LONG.get(buffer, offset + TIMESTAMP_OFFSET);
    }

    public V2HeaderFlyweight timestamp(long value) {
        LONG.set(buffer, offset + TIMESTAMP_OFFSET, value);
        return this;
    }

    public long nonce() {
        return (long) LONG.get(buffer, offset + NONCE_OFFSET);
    }

    public V2HeaderFlyweight nonce(long value) {
        LONG.set(buffer, offset + NONCE_OFFSET, value);
        return this;
    }

    /** @return the argument, unsigned */
    public long argument() {
        return (int) INT.get(buffer, offset + ARGUMENT_OFFSET) & 0xffffffffL;
    }

    public V2HeaderFlyweight argument(long value) {
        INT.set(buffer, offset + ARGUMENT_OFFSET, (int) value);
        return this;
    }

    public int core() {
        return (short) SHORT.get(buffer, offset + CORE_OFFSET) & 0xffff;
    }

    public V2HeaderFlyweight core(int value) {
        SHORT.set(buffer, offset + CORE_OFFSET, (short) value);
        return this;
    }

    public int payloadLength() {
        return (short) SHORT.get(buffer, offset + PAYLOAD_LENGTH_OFFSET) & 0xffff;
    }

    public V2HeaderFlyweight payloadLength(int value) {
        SHORT.set(buffer, offset + PAYLOAD_LENGTH_OFFSET, (short) value);
        return this;
    }

    /**
     * Zeroes the header and writes the magic, operation and flags: the start of every datagram.
     *
     * @return this
     */
    public V2HeaderFlyweight reset(int operation, int flags) {
        for (int i = 0; i < HEADER_LENGTH; i += 8) {
            LONG.set(buffer, offset + i, 0L);
        }
        return writeMagic().operation(operation).flags(flags);
    }
}
