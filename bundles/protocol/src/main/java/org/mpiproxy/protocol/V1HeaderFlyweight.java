package org.mpiproxy.protocol;

import static org.mpiproxy.protocol.V1HeaderDescriptor.CORE_COUNT_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.CORE_ID_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.DATACOUNT_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.DATATYPE_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OPERATION_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.RANK_ID_OFFSET;
import static org.mpiproxy.protocol.V1HeaderDescriptor.RESULT_OFFSET;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * A view over a v1 header in a {@link ByteBuffer}, heap or direct, whatever the buffer's own
 * byte order: fields are always little-endian. Reusable: {@link #wrap} another buffer.
 * Not thread-safe.
 */
public final class V1HeaderFlyweight {

    private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class,
            V1HeaderDescriptor.BYTE_ORDER);
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class,
            V1HeaderDescriptor.BYTE_ORDER);

    private ByteBuffer buffer;
    private int offset;

    /**
     * @param buffer the buffer holding the header
     * @param offset absolute index of the header's first byte
     * @return this
     * @throws IndexOutOfBoundsException when the buffer's capacity cannot hold a header there
     */
    public V1HeaderFlyweight wrap(ByteBuffer buffer, int offset) {
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

    public int operation() {
        return buffer.get(offset + OPERATION_OFFSET) & 0xff;
    }

    public V1HeaderFlyweight operation(int value) {
        buffer.put(offset + OPERATION_OFFSET, (byte) value);
        return this;
    }

    public int result() {
        return buffer.get(offset + RESULT_OFFSET) & 0xff;
    }

    public V1HeaderFlyweight result(int value) {
        buffer.put(offset + RESULT_OFFSET, (byte) value);
        return this;
    }

    public int rankId() {
        return (short) SHORT.get(buffer, offset + RANK_ID_OFFSET) & 0xffff;
    }

    public V1HeaderFlyweight rankId(int value) {
        SHORT.set(buffer, offset + RANK_ID_OFFSET, (short) value);
        return this;
    }

    public int coreId() {
        return (short) SHORT.get(buffer, offset + CORE_ID_OFFSET) & 0xffff;
    }

    public V1HeaderFlyweight coreId(int value) {
        SHORT.set(buffer, offset + CORE_ID_OFFSET, (short) value);
        return this;
    }

    /** @return the world size of an EXEC (the same field as {@link #datatype()}) */
    public int coreCount() {
        return (short) SHORT.get(buffer, offset + CORE_COUNT_OFFSET) & 0xffff;
    }

    public V1HeaderFlyweight coreCount(int value) {
        SHORT.set(buffer, offset + CORE_COUNT_OFFSET, (short) value);
        return this;
    }

    /** @return the datatype of a SEND or RECV (the same field as {@link #coreCount()}) */
    public int datatype() {
        return (short) SHORT.get(buffer, offset + DATATYPE_OFFSET) & 0xffff;
    }

    public V1HeaderFlyweight datatype(int value) {
        SHORT.set(buffer, offset + DATATYPE_OFFSET, (short) value);
        return this;
    }

    /** @return the element count, unsigned */
    public long datacount() {
        return (int) INT.get(buffer, offset + DATACOUNT_OFFSET) & 0xffffffffL;
    }

    public V1HeaderFlyweight datacount(long value) {
        INT.set(buffer, offset + DATACOUNT_OFFSET, (int) value);
        return this;
    }

    /**
     * Writes a whole header at once.
     *
     * @return this
     */
    public V1HeaderFlyweight set(int operation, int result, int rankId, int coreId, int typeOrCount, long datacount) {
        return operation(operation).result(result).rankId(rankId).coreId(coreId).datatype(typeOrCount)
                .datacount(datacount);
    }
}
