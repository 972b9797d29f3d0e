package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A struct over a {@code ByteBuffer} (or a {@code byte[]}, in the machine's byte order), as Open
 * MPI's bindings describe one: a subclass adds its fields in its constructor ({@code addInt()},
 * {@code addDouble(3)}, ... each returns the field's byte offset; {@link #setOffset} leaves a gap),
 * and reads and writes them through its own {@link Data}. The first use makes the datatype
 * ({@link #getType}: {@link Datatype#createStruct} of the fields, committed), which sends and
 * receives the buffer; element {@code i} of an array of structs is at {@code i * getExtent()}.
 * Fields cannot be added after that.
 */
public abstract class Struct {

    private int extent;
    private final List<Object[]> fields = new ArrayList<>();
    private Datatype datatype;

    /** A subclass adds its fields in its constructor. */
    protected Struct() {
    }

    private void commit() throws MPIException {
        if (datatype != null) {
            return;
        }
        int n = fields.size();
        int[] lengths = new int[n];
        int[] offsets = new int[n];
        Datatype[] types = new Datatype[n];
        for (int i = 0; i < n; i++) {
            Object[] f = fields.get(i);
            types[i] = (Datatype) f[0];
            offsets[i] = (Integer) f[1];
            lengths[i] = (Integer) f[2];
        }
        Datatype t = Datatype.createStruct(lengths, offsets, types);
        t.commit();
        extent = t.getExtent();
        datatype = t;
    }

    /** @return the struct's extent in bytes: where the next struct of an array starts */
    public final int getExtent() throws MPIException {
        commit();
        return extent;
    }

    /** @return the struct's datatype, committed */
    public final Datatype getType() throws MPIException {
        commit();
        return datatype;
    }

    /** @return a new, unattached accessor of the subclass's kind */
    protected abstract Data newData();

    @SuppressWarnings("unchecked")
    private <T extends Data> T attach(ByteBuffer buffer, int offset) {
        Data d = newData();
        d.buffer = buffer;
        d.offset = offset;
        return (T) d;
    }

    /** @return an accessor of the struct at the start of {@code buffer} */
    public final <T extends Data> T getData(ByteBuffer buffer) throws MPIException {
        commit();
        return attach(buffer, 0);
    }

    /** @return an accessor of struct {@code index} of the array of structs in {@code buffer} */
    public final <T extends Data> T getData(ByteBuffer buffer, int index) throws MPIException {
        commit();
        return attach(buffer, index * extent);
    }

    /** @return an accessor of the struct at the start of {@code array}, in the machine's byte order */
    public final <T extends Data> T getData(byte[] array) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()));
    }

    /** @return an accessor of struct {@code index} of {@code array}, in the machine's byte order */
    public final <T extends Data> T getData(byte[] array, int index) throws MPIException {
        return getData(ByteBuffer.wrap(array).order(ByteOrder.nativeOrder()), index);
    }

    private int addField(Datatype type, int typeExtent, int length) {
        if (datatype != null) {
            throw new IllegalStateException("the struct's datatype is made: no field can be added");
        }
        if (length < 0) {
            throw new IllegalArgumentException("a field of " + length + " elements");
        }
        int offset = extent;
        extent += typeExtent * length;
        fields.add(new Object[] {type, offset, length});
        return offset;
    }

    /**
     * Places the next field at {@code offset}.
     *
     * @return this struct
     * @throws IllegalArgumentException when {@code offset} is before the end of the fields so far
     */
    public final Struct setOffset(int offset) {
        if (datatype != null) {
            throw new IllegalStateException("the struct's datatype is made: no field can be added");
        }
        if (offset < extent) {
            throw new IllegalArgumentException("offset " + offset + " is before the end of the fields so far ("
                    + extent + ")");
        }
        extent = offset;
        return this;
    }

    /** @return the byte offset of a new byte field */
    public final int addByte() {
        return addByte(1);
    }

    /** @return the byte offset of a new field of {@code length} bytes */
    public final int addByte(int length) {
        return addField(MPI.BYTE, 1, length);
    }

    /** @return the byte offset of a new char field */
    public final int addChar() {
        return addChar(1);
    }

    /** @return the byte offset of a new field of {@code length} chars */
    public final int addChar(int length) {
        return addField(MPI.CHAR, 2, length);
    }

    /** @return the byte offset of a new short field */
    public final int addShort() {
        return addShort(1);
    }

    /** @return the byte offset of a new field of {@code length} shorts */
    public final int addShort(int length) {
        return addField(MPI.SHORT, 2, length);
    }

    /** @return the byte offset of a new int field */
    public final int addInt() {
        return addInt(1);
    }

    /** @return the byte offset of a new field of {@code length} ints */
    public final int addInt(int length) {
        return addField(MPI.INT, 4, length);
    }

    /** @return the byte offset of a new long field */
    public final int addLong() {
        return addLong(1);
    }

    /** @return the byte offset of a new field of {@code length} longs */
    public final int addLong(int length) {
        return addField(MPI.LONG, 8, length);
    }

    /** @return the byte offset of a new float field */
    public final int addFloat() {
        return addFloat(1);
    }

    /** @return the byte offset of a new field of {@code length} floats */
    public final int addFloat(int length) {
        return addField(MPI.FLOAT, 4, length);
    }

    /** @return the byte offset of a new double field */
    public final int addDouble() {
        return addDouble(1);
    }

    /** @return the byte offset of a new field of {@code length} doubles */
    public final int addDouble(int length) {
        return addField(MPI.DOUBLE, 8, length);
    }

    /** Adds a field that is a struct. */
    public final int addStruct(Struct struct) throws MPIException {
        return addStruct(struct, 1);
    }

    /** Adds an array of {@code length} structs. */
    public final int addStruct(Struct struct, int length) throws MPIException {
        struct.commit();
        return addField(struct.datatype, struct.extent, length);
    }

    /** Adds a field of {@code type}. */
    public final int addData(Datatype type) throws MPIException {
        return addData(type, 1);
    }

    /** Adds an array of {@code length} elements of {@code type}. */
    public final int addData(Datatype type, int length) throws MPIException {
        return addField(type, type.extentBytes, length);
    }

    /** Reads and writes the fields of one struct in a buffer; a subclass names them. */
    public abstract class Data {
        private ByteBuffer buffer;
        private int offset;

        /** @return the buffer from this struct on, to send or receive it */
        public final ByteBuffer getBuffer() {
            return offset == 0 ? buffer : MPI.slice(buffer, offset);
        }

        protected final byte getByte(int field) {
            return buffer.get(offset + field);
        }

        protected final byte getByte(int field, int index) {
            return buffer.get(offset + field + index);
        }

        protected final void putByte(int field, byte v) {
            buffer.put(offset + field, v);
        }

        protected final void putByte(int field, int index, byte v) {
            buffer.put(offset + field + index, v);
        }

        protected final char getChar(int field) {
            return buffer.getChar(offset + field);
        }

        protected final char getChar(int field, int index) {
            return buffer.getChar(offset + field + 2 * index);
        }

        protected final void putChar(int field, char v) {
            buffer.putChar(offset + field, v);
        }

        protected final void putChar(int field, int index, char v) {
            buffer.putChar(offset + field + 2 * index, v);
        }

        protected final short getShort(int field) {
            return buffer.getShort(offset + field);
        }

        protected final short getShort(int field, int index) {
            return buffer.getShort(offset + field + 2 * index);
        }

        protected final void putShort(int field, short v) {
            buffer.putShort(offset + field, v);
        }

        protected final void putShort(int field, int index, short v) {
            buffer.putShort(offset + field + 2 * index, v);
        }

        protected final int getInt(int field) {
            return buffer.getInt(offset + field);
        }

        protected final int getInt(int field, int index) {
            return buffer.getInt(offset + field + 4 * index);
        }

        protected final void putInt(int field, int v) {
            buffer.putInt(offset + field, v);
        }

        protected final void putInt(int field, int index, int v) {
            buffer.putInt(offset + field + 4 * index, v);
        }

        protected final long getLong(int field) {
            return buffer.getLong(offset + field);
        }

        protected final long getLong(int field, int index) {
            return buffer.getLong(offset + field + 8 * index);
        }

        protected final void putLong(int field, long v) {
            buffer.putLong(offset + field, v);
        }

        protected final void putLong(int field, int index, long v) {
            buffer.putLong(offset + field + 8 * index, v);
        }

        protected final float getFloat(int field) {
            return buffer.getFloat(offset + field);
        }

        protected final float getFloat(int field, int index) {
            return buffer.getFloat(offset + field + 4 * index);
        }

        protected final void putFloat(int field, float v) {
            buffer.putFloat(offset + field, v);
        }

        protected final void putFloat(int field, int index, float v) {
            buffer.putFloat(offset + field + 4 * index, v);
        }

        protected final double getDouble(int field) {
            return buffer.getDouble(offset + field);
        }

        protected final double getDouble(int field, int index) {
            return buffer.getDouble(offset + field + 8 * index);
        }

        protected final void putDouble(int field, double v) {
            buffer.putDouble(offset + field, v);
        }

        protected final void putDouble(int field, int index, double v) {
            buffer.putDouble(offset + field + 8 * index, v);
        }

        /** @return an accessor of the struct field at {@code field} */
        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field) {
            return ((Struct) struct).attach(buffer, offset + field);
        }

        /** @return an accessor of struct {@code index} of the array of structs at {@code field} */
        protected final <S extends Struct, D extends Struct.Data> D getData(S struct, int field, int index) {
            Struct s = struct;
            return s.attach(buffer, offset + field + index * s.extent);
        }

        /** @return the buffer from the field at {@code field} on, to send or receive it */
        protected final ByteBuffer getBuffer(Datatype type, int field) {
            int at = offset + field;
            return at == 0 ? buffer : MPI.slice(buffer, at);
        }

        /** @return the buffer from element {@code index} of the array of {@code type} at {@code field} on */
        protected final ByteBuffer getBuffer(Datatype type, int field, int index) throws MPIException {
            int at = offset + field + index * type.extentBytes;
            return at == 0 ? buffer : MPI.slice(buffer, at);
        }
    }
}
