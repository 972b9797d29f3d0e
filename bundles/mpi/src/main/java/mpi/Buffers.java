package mpi;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * Moves elements between a program's buffers (Java arrays, NIO buffers) and the packed
 * little-endian form messages carry. Offsets and counts are in elements of the datatype; NIO
 * buffers are addressed from index 0, whatever their position (as {@link MPI#slice} makes a
 * buffer that starts further in).
 */
final class Buffers {

    private Buffers() {
    }

    /** @return the number of elements of {@code type} the buffer holds */
    static int capacity(Object buf, Datatype type) throws MPIException {
        Kind k = type.kind;
        if (buf == null) {
            throw new MPIException(MPI.ERR_BUFFER, "the buffer is null");
        }
        if (buf instanceof ByteBuffer b) {
            return b.capacity() / type.extentBytes;
        }
        int parts = k == Kind.INT2 ? 2 : 1;
        int length = switch (k) {
            case BYTE, PACKED -> buf instanceof byte[] a ? a.length : -1;
            case BOOLEAN -> buf instanceof boolean[] a ? a.length : -1;
            case CHAR -> buf instanceof char[] a ? a.length : buf instanceof CharBuffer b ? b.capacity() : -1;
            case SHORT -> buf instanceof short[] a ? a.length : buf instanceof ShortBuffer b ? b.capacity() : -1;
            case INT, INT2 -> buf instanceof int[] a ? a.length : buf instanceof IntBuffer b ? b.capacity() : -1;
            case LONG -> buf instanceof long[] a ? a.length : buf instanceof LongBuffer b ? b.capacity() : -1;
            case FLOAT -> buf instanceof float[] a ? a.length : buf instanceof FloatBuffer b ? b.capacity() : -1;
            case DOUBLE -> buf instanceof double[] a ? a.length : buf instanceof DoubleBuffer b ? b.capacity() : -1;
            default -> -1;
        };
        if (length < 0) {
            throw new MPIException(MPI.ERR_TYPE, type + " does not fit a buffer of " + describe(buf) + " (it takes "
                    + expected(k) + ")");
        }
        return length / parts;
    }

    /** Checks that {@code offset + count} elements fit; no elements need no buffer. */
    static void check(Object buf, int offset, int count, Datatype type) throws MPIException {
        if (type == null) {
            throw new MPIException(MPI.ERR_TYPE, "the datatype is null");
        }
        type.checkUsable();
        if (type.mapped) {
            TypedBuffers.check(buf, offset, count, type);
            return;
        }
        if (count < 0) {
            throw new MPIException(MPI.ERR_COUNT, "count " + count + " is negative");
        }
        if (count == 0 && buf == null) {
            return;
        }
        int capacity = capacity(buf, type);
        if (offset < 0 || (long) offset + count > capacity) {
            throw new MPIException(MPI.ERR_BUFFER, (offset == 0 ? "" : "elements " + offset + ".. : ") + count
                    + " elements of " + type + " do not fit a buffer of " + describe(buf) + " (room for " + capacity
                    + ")");
        }
    }

    private static String describe(Object buf) {
        if (buf instanceof Buffer b) {
            return b.getClass().getSimpleName().replace("Heap", "").replace("Direct", "").replaceAll("[RUS]$", "")
                    + " of capacity " + b.capacity();
        }
        Class<?> c = buf.getClass();
        return c.isArray() ? c.getComponentType().getName() + "[" + java.lang.reflect.Array.getLength(buf) + "]"
                : c.getName();
    }

    private static String expected(Kind k) {
        return switch (k) {
            case BYTE, PACKED -> "byte[] or a ByteBuffer";
            case BOOLEAN -> "boolean[] or a ByteBuffer";
            case CHAR -> "char[], a CharBuffer or a ByteBuffer";
            case SHORT -> "short[], a ShortBuffer or a ByteBuffer";
            case INT -> "int[], an IntBuffer or a ByteBuffer";
            case INT2 -> "int[] pairs, an IntBuffer or a ByteBuffer";
            case LONG -> "long[], a LongBuffer or a ByteBuffer";
            case FLOAT -> "float[], a FloatBuffer or a ByteBuffer";
            case DOUBLE -> "double[], a DoubleBuffer or a ByteBuffer";
            default -> "a ByteBuffer";
        };
    }

    /** Packs {@code count} elements from element {@code offset} of {@code buf} into {@code dst} at byte {@code at}. */
    static void pack(Object buf, int offset, int count, Datatype type, ByteBuffer dst, int at) {
        if (type.mapped) {
            TypedBuffers.pack(buf, offset, count, type, dst, at);
            return;
        }
        Kind k = type.kind;
        if (count == 0) {
            return;
        }
        if (bulk(buf, offset, count, type, dst.slice(at, count * k.size()).order(ByteOrder.LITTLE_ENDIAN), true)) {
            return;
        }
        if (buf instanceof ByteBuffer b) {
            int ext = type.extentBytes;
            for (int i = 0; i < count; i++) {
                packOne(k, b, (offset + i) * ext, dst, at + i * k.size());
            }
            return;
        }
        switch (k) {
            case BYTE, PACKED -> dst.put(at, (byte[]) buf, offset, count);
            case BOOLEAN -> {
                boolean[] a = (boolean[]) buf;
                for (int i = 0; i < count; i++) {
                    dst.put(at + i, (byte) (a[offset + i] ? 1 : 0));
                }
            }
            case CHAR -> {
                for (int i = 0; i < count; i++) {
                    dst.putChar(at + 2 * i, buf instanceof char[] a ? a[offset + i] : ((CharBuffer) buf).get(offset + i));
                }
            }
            case SHORT -> {
                for (int i = 0; i < count; i++) {
                    dst.putShort(at + 2 * i, buf instanceof short[] a ? a[offset + i]
                            : ((ShortBuffer) buf).get(offset + i));
                }
            }
            case INT, INT2 -> {
                int n = k == Kind.INT2 ? 2 * count : count;
                int from = k == Kind.INT2 ? 2 * offset : offset;
                if (buf instanceof int[] a) {
                    for (int i = 0; i < n; i++) {
                        dst.putInt(at + 4 * i, a[from + i]);
                    }
                } else {
                    IntBuffer b = (IntBuffer) buf;
                    for (int i = 0; i < n; i++) {
                        dst.putInt(at + 4 * i, b.get(from + i));
                    }
                }
            }
            case LONG -> {
                for (int i = 0; i < count; i++) {
                    dst.putLong(at + 8 * i, buf instanceof long[] a ? a[offset + i] : ((LongBuffer) buf).get(offset + i));
                }
            }
            case FLOAT -> {
                for (int i = 0; i < count; i++) {
                    dst.putFloat(at + 4 * i, buf instanceof float[] a ? a[offset + i]
                            : ((FloatBuffer) buf).get(offset + i));
                }
            }
            case DOUBLE -> {
                if (buf instanceof double[] a) {
                    for (int i = 0; i < count; i++) {
                        dst.putDouble(at + 8 * i, a[offset + i]);
                    }
                } else {
                    DoubleBuffer b = (DoubleBuffer) buf;
                    for (int i = 0; i < count; i++) {
                        dst.putDouble(at + 8 * i, b.get(offset + i));
                    }
                }
            }
            default -> throw new IllegalStateException(k.name());
        }
    }

    /** Unpacks {@code bytes} of packed elements from {@code src} at {@code at} into {@code buf} from element {@code offset}. */
    static void unpack(ByteBuffer src, int at, int bytes, Object buf, int offset, Datatype type) {
        if (type.mapped) {
            TypedBuffers.unpack(src, at, bytes, buf, offset, type);
            return;
        }
        Kind k = type.kind;
        int count = bytes / k.size();
        if (count == 0) {
            return;
        }
        if (bulk(buf, offset, count, type, src.slice(at, count * k.size()).order(ByteOrder.LITTLE_ENDIAN), false)) {
            return;
        }
        if (buf instanceof ByteBuffer b) {
            int ext = type.extentBytes;
            for (int i = 0; i < count; i++) {
                unpackOne(k, src, at + i * k.size(), b, (offset + i) * ext);
            }
            return;
        }
        switch (k) {
            case BYTE, PACKED -> src.get(at, (byte[]) buf, offset, count);
            case BOOLEAN -> {
                boolean[] a = (boolean[]) buf;
                for (int i = 0; i < count; i++) {
                    a[offset + i] = src.get(at + i) != 0;
                }
            }
            case CHAR -> {
                for (int i = 0; i < count; i++) {
                    char c = src.getChar(at + 2 * i);
                    if (buf instanceof char[] a) {
                        a[offset + i] = c;
                    } else {
                        ((CharBuffer) buf).put(offset + i, c);
                    }
                }
            }
            case SHORT -> {
                for (int i = 0; i < count; i++) {
                    short s = src.getShort(at + 2 * i);
                    if (buf instanceof short[] a) {
                        a[offset + i] = s;
                    } else {
                        ((ShortBuffer) buf).put(offset + i, s);
                    }
                }
            }
            case INT, INT2 -> {
                int n = bytes / 4;
                int from = k == Kind.INT2 ? 2 * offset : offset;
                if (buf instanceof int[] a) {
                    for (int i = 0; i < n; i++) {
                        a[from + i] = src.getInt(at + 4 * i);
                    }
                } else {
                    IntBuffer b = (IntBuffer) buf;
                    for (int i = 0; i < n; i++) {
                        b.put(from + i, src.getInt(at + 4 * i));
                    }
                }
            }
            case LONG -> {
                for (int i = 0; i < count; i++) {
                    long v = src.getLong(at + 8 * i);
                    if (buf instanceof long[] a) {
                        a[offset + i] = v;
                    } else {
                        ((LongBuffer) buf).put(offset + i, v);
                    }
                }
            }
            case FLOAT -> {
                for (int i = 0; i < count; i++) {
                    float v = src.getFloat(at + 4 * i);
                    if (buf instanceof float[] a) {
                        a[offset + i] = v;
                    } else {
                        ((FloatBuffer) buf).put(offset + i, v);
                    }
                }
            }
            case DOUBLE -> {
                if (buf instanceof double[] a) {
                    for (int i = 0; i < count; i++) {
                        a[offset + i] = src.getDouble(at + 8 * i);
                    }
                } else {
                    DoubleBuffer b = (DoubleBuffer) buf;
                    for (int i = 0; i < count; i++) {
                        b.put(offset + i, src.getDouble(at + 8 * i));
                    }
                }
            }
            default -> throw new IllegalStateException(k.name());
        }
    }

    /**
     * Moves the elements with one bulk copy when the program's buffer holds them as the message
     * does (or as a typed view can convert: arrays and typed NIO buffers of the element's own
     * type), the JDK's copy (or swapping copy) instead of a loop of element accesses.
     *
     * @param packed the packed elements, little-endian, from index 0
     * @param pack   whether the elements go from {@code buf} into {@code packed} (else back)
     * @return whether it moved them; {@code false} leaves the work to the element loops
     */
    private static boolean bulk(Object buf, int offset, int count, Datatype type, ByteBuffer packed, boolean pack) {
        Kind k = type.kind;
        if (buf instanceof ByteBuffer b) {
            // contiguous elements (no gaps of a pair type's extent), byte for byte as packed
            if (type.extentBytes != k.size() || (k.size() > 1 && b.order() != ByteOrder.LITTLE_ENDIAN)) {
                return false;
            }
            if (pack) {
                packed.put(0, b, offset * k.size(), count * k.size());
            } else {
                b.put(offset * k.size(), packed, 0, count * k.size());
            }
            return true;
        }
        switch (k) {
            case CHAR -> {
                CharBuffer view = packed.asCharBuffer();
                if (buf instanceof char[] a) {
                    if (pack) {
                        view.put(a, offset, count);
                    } else {
                        view.get(a, offset, count);
                    }
                } else {
                    move(view, window((CharBuffer) buf, offset, count), pack);
                }
            }
            case SHORT -> {
                ShortBuffer view = packed.asShortBuffer();
                if (buf instanceof short[] a) {
                    if (pack) {
                        view.put(a, offset, count);
                    } else {
                        view.get(a, offset, count);
                    }
                } else {
                    move(view, window((ShortBuffer) buf, offset, count), pack);
                }
            }
            case INT, INT2 -> {
                int n = k == Kind.INT2 ? 2 * count : count;
                int from = k == Kind.INT2 ? 2 * offset : offset;
                IntBuffer view = packed.asIntBuffer();
                if (buf instanceof int[] a) {
                    if (pack) {
                        view.put(a, from, n);
                    } else {
                        view.get(a, from, n);
                    }
                } else {
                    move(view, window((IntBuffer) buf, from, n), pack);
                }
            }
            case LONG -> {
                LongBuffer view = packed.asLongBuffer();
                if (buf instanceof long[] a) {
                    if (pack) {
                        view.put(a, offset, count);
                    } else {
                        view.get(a, offset, count);
                    }
                } else {
                    move(view, window((LongBuffer) buf, offset, count), pack);
                }
            }
            case FLOAT -> {
                FloatBuffer view = packed.asFloatBuffer();
                if (buf instanceof float[] a) {
                    if (pack) {
                        view.put(a, offset, count);
                    } else {
                        view.get(a, offset, count);
                    }
                } else {
                    move(view, window((FloatBuffer) buf, offset, count), pack);
                }
            }
            case DOUBLE -> {
                DoubleBuffer view = packed.asDoubleBuffer();
                if (buf instanceof double[] a) {
                    if (pack) {
                        view.put(a, offset, count);
                    } else {
                        view.get(a, offset, count);
                    }
                } else {
                    move(view, window((DoubleBuffer) buf, offset, count), pack);
                }
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** @return elements {@code offset .. offset+count-1} of {@code b} (indexed from 0) as a buffer of their own */
    private static <B extends Buffer> B window(B b, int offset, int count) {
        @SuppressWarnings("unchecked")
        B w = (B) b.duplicate().clear().position(offset).limit(offset + count);
        return w;
    }

    private static void move(CharBuffer view, CharBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    private static void move(ShortBuffer view, ShortBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    private static void move(IntBuffer view, IntBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    private static void move(LongBuffer view, LongBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    private static void move(FloatBuffer view, FloatBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    private static void move(DoubleBuffer view, DoubleBuffer elements, boolean pack) {
        if (pack) {
            view.put(elements);
        } else {
            elements.put(view);
        }
    }

    /** One element from a program's ByteBuffer (its order, C layout for pairs) into packed form. */
    static void packOne(Kind k, ByteBuffer b, int x, ByteBuffer dst, int at) {
        switch (k) {
            case BYTE, PACKED, BOOLEAN -> dst.put(at, b.get(x));
            case CHAR -> dst.putChar(at, b.getChar(x));
            case SHORT -> dst.putShort(at, b.getShort(x));
            case INT -> dst.putInt(at, b.getInt(x));
            case LONG -> dst.putLong(at, b.getLong(x));
            case FLOAT -> dst.putFloat(at, b.getFloat(x));
            case DOUBLE -> dst.putDouble(at, b.getDouble(x));
            case INT2 -> dst.putInt(at, b.getInt(x)).putInt(at + 4, b.getInt(x + 4));
            case SHORT_INT -> dst.putShort(at, b.getShort(x)).putInt(at + 2, b.getInt(x + 4));
            case LONG_INT -> dst.putLong(at, b.getLong(x)).putInt(at + 8, b.getInt(x + 8));
            case FLOAT_INT -> dst.putFloat(at, b.getFloat(x)).putInt(at + 4, b.getInt(x + 4));
            case DOUBLE_INT -> dst.putDouble(at, b.getDouble(x)).putInt(at + 8, b.getInt(x + 8));
            default -> throw new IllegalStateException(k.name());
        }
    }

    /** One packed element into a program's ByteBuffer (its order, C layout for pairs). */
    static void unpackOne(Kind k, ByteBuffer src, int at, ByteBuffer b, int x) {
        switch (k) {
            case BYTE, PACKED, BOOLEAN -> b.put(x, src.get(at));
            case CHAR -> b.putChar(x, src.getChar(at));
            case SHORT -> b.putShort(x, src.getShort(at));
            case INT -> b.putInt(x, src.getInt(at));
            case LONG -> b.putLong(x, src.getLong(at));
            case FLOAT -> b.putFloat(x, src.getFloat(at));
            case DOUBLE -> b.putDouble(x, src.getDouble(at));
            case INT2 -> b.putInt(x, src.getInt(at)).putInt(x + 4, src.getInt(at + 4));
            case SHORT_INT -> b.putShort(x, src.getShort(at)).putInt(x + 4, src.getInt(at + 2));
            case LONG_INT -> b.putLong(x, src.getLong(at)).putInt(x + 8, src.getInt(at + 8));
            case FLOAT_INT -> b.putFloat(x, src.getFloat(at)).putInt(x + 4, src.getInt(at + 4));
            case DOUBLE_INT -> b.putDouble(x, src.getDouble(at)).putInt(x + 8, src.getInt(at + 8));
            default -> throw new IllegalStateException(k.name());
        }
    }
}
