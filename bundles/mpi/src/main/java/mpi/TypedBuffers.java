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
 * Moves elements of a datatype with a typemap (the derived types, and the complex types) between a
 * program's buffer and the packed form: element {@code i} from element {@code offset} on starts
 * at byte {@code (offset + i) * extent} of the buffer, and each of its entries is at its
 * displacement from there. A {@code ByteBuffer} (or a {@code byte[]}, in the machine's byte order,
 * as Open MPI takes it) holds entries of any kind; an array or a typed NIO buffer holds entries of
 * its own kind (an {@code int[]} also {@code MPI.INT2} pairs), at displacements that are whole
 * elements of it.
 */
final class TypedBuffers {

    private TypedBuffers() {
    }

    /** Checks that {@code count} elements of {@code type} from element {@code offset} lie inside {@code buf}. */
    static void check(Object buf, int offset, int count, Datatype type) throws MPIException {
        if (count < 0) {
            throw new MPIException(MPI.ERR_COUNT, "count " + count + " is negative");
        }
        if (count == 0 && buf == null) {
            return;
        }
        if (buf == null) {
            throw new MPIException(MPI.ERR_BUFFER, "the buffer is null");
        }
        Memory m = memory(buf);
        Typemap map = type.map;
        for (Kind k : map.kindSet()) {
            if (!m.holds(k)) {
                throw new MPIException(MPI.ERR_TYPE, type + " has elements of MPI." + k + ": they do not fit a buffer of "
                        + describe(buf) + " (a ByteBuffer or byte[] holds any)");
            }
        }
        if (map.grain() % m.unit() != 0) {
            throw new MPIException(MPI.ERR_TYPE, type + " places elements at byte displacements that are not whole "
                    + m.unit() + "-byte elements of a buffer of " + describe(buf));
        }
        if (count == 0 || map.kinds.length == 0) {
            return;
        }
        long first = offset * map.extent();
        long last = (offset + (long) count - 1) * map.extent();
        long low = Math.min(first, last) + map.trueLb;
        long high = Math.max(first, last) + map.trueUb;
        if (low < 0 || high > m.bytes()) {
            throw new MPIException(MPI.ERR_BUFFER, count + " elements of " + type + (offset == 0 ? "" : " from element "
                    + offset) + " span bytes " + low + ".." + high + ", outside a buffer of " + describe(buf) + " ("
                    + m.bytes() + " bytes)");
        }
    }

    /** Packs {@code count} elements from element {@code offset} of {@code buf} into {@code dst} at byte {@code at}. */
    static void pack(Object buf, int offset, int count, Datatype type, ByteBuffer dst, int at) {
        if (count == 0) {
            return;
        }
        Memory m = memory(buf);
        Typemap map = type.map;
        int p = at;
        for (int i = 0; i < count; i++) {
            long base = (offset + (long) i) * map.extent();
            for (int e = 0; e < map.kinds.length; e++) {
                m.pack(map.kinds[e], base + map.displs[e], dst, p);
                p += map.kinds[e].size();
            }
        }
    }

    /** Unpacks the whole entries in {@code bytes} packed bytes from {@code src} at {@code at} into {@code buf}. */
    static void unpack(ByteBuffer src, int at, int bytes, Object buf, int offset, Datatype type) {
        Typemap map = type.map;
        if (bytes == 0 || map.packedSize == 0) {
            return;
        }
        Memory m = memory(buf);
        int p = at;
        int end = at + bytes;
        for (long i = offset; ; i++) {
            long base = i * map.extent();
            for (int e = 0; e < map.kinds.length; e++) {
                Kind k = map.kinds[e];
                if (p + k.size() > end) {
                    return;
                }
                m.unpack(k, src, p, base + map.displs[e]);
                p += k.size();
            }
        }
    }

    static String describe(Object buf) {
        if (buf instanceof Buffer b) {
            return b.getClass().getSimpleName().replace("Heap", "").replace("Direct", "").replaceAll("[RUS]$", "")
                    + " of capacity " + b.capacity();
        }
        Class<?> c = buf.getClass();
        return c.isArray() ? c.getComponentType().getName() + "[" + java.lang.reflect.Array.getLength(buf) + "]"
                : c.getName();
    }

    /** A program's buffer addressed in bytes. */
    private interface Memory {
        long bytes();

        /** @return bytes of one element of the buffer: displacements are multiples of it */
        int unit();

        boolean holds(Kind k);

        void pack(Kind k, long address, ByteBuffer dst, int at);

        void unpack(Kind k, ByteBuffer src, int at, long address);
    }

    private static Memory memory(Object buf) {
        if (buf instanceof ByteBuffer b) {
            return new Bytes(b);
        }
        if (buf instanceof byte[] a) {
            return new Bytes(ByteBuffer.wrap(a).order(ByteOrder.nativeOrder()));
        }
        if (buf instanceof boolean[] a) {
            return new Booleans(a);
        }
        Buffer view = null;
        if (buf instanceof char[] a) {
            view = CharBuffer.wrap(a);
        } else if (buf instanceof short[] a) {
            view = ShortBuffer.wrap(a);
        } else if (buf instanceof int[] a) {
            view = IntBuffer.wrap(a);
        } else if (buf instanceof long[] a) {
            view = LongBuffer.wrap(a);
        } else if (buf instanceof float[] a) {
            view = FloatBuffer.wrap(a);
        } else if (buf instanceof double[] a) {
            view = DoubleBuffer.wrap(a);
        } else if (buf instanceof Buffer b) {
            view = b;
        }
        return view == null ? new Nothing() : new Elements(view);
    }

    /** Any entry in the buffer's byte order, pairs in the C layout. */
    private record Bytes(ByteBuffer b) implements Memory {
        @Override
        public long bytes() {
            return b.capacity();
        }

        @Override
        public int unit() {
            return 1;
        }

        @Override
        public boolean holds(Kind k) {
            return true;
        }

        @Override
        public void pack(Kind k, long address, ByteBuffer dst, int at) {
            Buffers.packOne(k, b, (int) address, dst, at);
        }

        @Override
        public void unpack(Kind k, ByteBuffer src, int at, long address) {
            Buffers.unpackOne(k, src, at, b, (int) address);
        }
    }

    private record Booleans(boolean[] a) implements Memory {
        @Override
        public long bytes() {
            return a.length;
        }

        @Override
        public int unit() {
            return 1;
        }

        @Override
        public boolean holds(Kind k) {
            return k == Kind.BOOLEAN;
        }

        @Override
        public void pack(Kind k, long address, ByteBuffer dst, int at) {
            dst.put(at, (byte) (a[(int) address] ? 1 : 0));
        }

        @Override
        public void unpack(Kind k, ByteBuffer src, int at, long address) {
            a[(int) address] = src.get(at) != 0;
        }
    }

    /** A buffer of a type no datatype names. */
    private static final class Nothing implements Memory {
        @Override
        public long bytes() {
            return 0;
        }

        @Override
        public int unit() {
            return 1;
        }

        @Override
        public boolean holds(Kind k) {
            return false;
        }

        @Override
        public void pack(Kind k, long address, ByteBuffer dst, int at) {
            throw new IllegalStateException("no buffer");
        }

        @Override
        public void unpack(Kind k, ByteBuffer src, int at, long address) {
            throw new IllegalStateException("no buffer");
        }
    }

    /** An array (wrapped) or a typed NIO buffer: entries of its own kind, at whole elements. */
    private static final class Elements implements Memory {
        private final Buffer view;
        private final Kind own;
        private final int unit;

        Elements(Buffer view) {
            this.view = view;
            this.own = view instanceof CharBuffer ? Kind.CHAR : view instanceof ShortBuffer ? Kind.SHORT
                    : view instanceof IntBuffer ? Kind.INT : view instanceof LongBuffer ? Kind.LONG
                    : view instanceof FloatBuffer ? Kind.FLOAT : Kind.DOUBLE;
            this.unit = own.size();
        }

        @Override
        public long bytes() {
            return (long) view.capacity() * unit;
        }

        @Override
        public int unit() {
            return unit;
        }

        @Override
        public boolean holds(Kind k) {
            return k == own || (k == Kind.INT2 && own == Kind.INT);
        }

        @Override
        public void pack(Kind k, long address, ByteBuffer dst, int at) {
            int i = (int) (address / unit);
            if (view instanceof CharBuffer b) {
                dst.putChar(at, b.get(i));
            } else if (view instanceof ShortBuffer b) {
                dst.putShort(at, b.get(i));
            } else if (view instanceof IntBuffer b) {
                dst.putInt(at, b.get(i));
                if (k == Kind.INT2) {
                    dst.putInt(at + 4, b.get(i + 1));
                }
            } else if (view instanceof LongBuffer b) {
                dst.putLong(at, b.get(i));
            } else if (view instanceof FloatBuffer b) {
                dst.putFloat(at, b.get(i));
            } else {
                dst.putDouble(at, ((DoubleBuffer) view).get(i));
            }
        }

        @Override
        public void unpack(Kind k, ByteBuffer src, int at, long address) {
            int i = (int) (address / unit);
            if (view instanceof CharBuffer b) {
                b.put(i, src.getChar(at));
            } else if (view instanceof ShortBuffer b) {
                b.put(i, src.getShort(at));
            } else if (view instanceof IntBuffer b) {
                b.put(i, src.getInt(at));
                if (k == Kind.INT2) {
                    b.put(i + 1, src.getInt(at + 4));
                }
            } else if (view instanceof LongBuffer b) {
                b.put(i, src.getLong(at));
            } else if (view instanceof FloatBuffer b) {
                b.put(i, src.getFloat(at));
            } else {
                ((DoubleBuffer) view).put(i, src.getDouble(at));
            }
        }
    }
}
