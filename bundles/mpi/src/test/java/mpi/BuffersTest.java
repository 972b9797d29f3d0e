package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Packing and unpacking against the packed form written element by element here: every type,
 * from and into arrays, heap and direct typed buffers and byte buffers of either byte order, with
 * an offset, and back.
 */
class BuffersTest {

    private static final int N = 37;
    private static final int OFFSET = 5;

    /** value of element i of a test buffer (small enough for every type) */
    private static long v(int i) {
        return (i * 7919L) % 120 - 60;
    }

    /** The packed form of elements OFFSET .. OFFSET+count-1: little-endian, element after element. */
    private static byte[] expected(Datatype t, int count) {
        ByteBuffer b = ByteBuffer.allocate(count * t.kind.size()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            long x = v(OFFSET + i);
            switch (t.kind) {
                case BYTE -> b.put((byte) x);
                case CHAR -> b.putChar((char) (x + 100));
                case SHORT -> b.putShort((short) x);
                case INT -> b.putInt((int) x);
                case LONG -> b.putLong(x << 33);
                case FLOAT -> b.putFloat(x / 4f);
                case DOUBLE -> b.putDouble(x / 8d);
                case INT2 -> b.putInt((int) x).putInt((int) -x);
                default -> throw new IllegalArgumentException(t.toString());
            }
        }
        return b.array();
    }

    /** Every form a program may hold {@code N} elements of {@code t} in, filled with v(i). */
    private static List<Object> forms(Datatype t) {
        List<Object> forms = new ArrayList<>();
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            for (boolean direct : new boolean[] {false, true}) {
                int bytes = N * t.extentBytes;
                ByteBuffer raw = (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes)).order(order);
                forms.add(fill(t, raw, true));
                if (t.kind != org.mpiproxy.mpi.internal.engine.Kind.BYTE && t.kind != org.mpiproxy.mpi.internal.engine.Kind.INT2) {
                    ByteBuffer backing = (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes)).order(order);
                    forms.add(fill(t, backing, false));
                }
            }
        }
        forms.add(array(t));
        return forms;
    }

    private static Object array(Datatype t) {
        return switch (t.kind) {
            case BYTE -> new byte[N];
            case CHAR -> new char[N];
            case SHORT -> new short[N];
            case INT -> new int[N];
            case LONG -> new long[N];
            case FLOAT -> new float[N];
            case DOUBLE -> new double[N];
            case INT2 -> new int[2 * N];
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** @return the buffer as a byte buffer ({@code asBytes}) or as its typed view, holding v(i) */
    private static Object fill(Datatype t, ByteBuffer b, boolean asBytes) {
        for (int i = 0; i < N; i++) {
            long x = v(i);
            int at = i * t.extentBytes;
            switch (t.kind) {
                case BYTE -> b.put(at, (byte) x);
                case CHAR -> b.putChar(at, (char) (x + 100));
                case SHORT -> b.putShort(at, (short) x);
                case INT -> b.putInt(at, (int) x);
                case LONG -> b.putLong(at, x << 33);
                case FLOAT -> b.putFloat(at, x / 4f);
                case DOUBLE -> b.putDouble(at, x / 8d);
                case INT2 -> b.putInt(at, (int) x).putInt(at + 4, (int) -x);
                default -> throw new IllegalArgumentException(t.toString());
            }
        }
        if (asBytes) {
            return b.position(3); // buffers are addressed from index 0 whatever their position
        }
        java.nio.Buffer view = switch (t.kind) {
            case CHAR -> b.asCharBuffer();
            case SHORT -> b.asShortBuffer();
            case INT -> b.asIntBuffer();
            case LONG -> b.asLongBuffer();
            case FLOAT -> b.asFloatBuffer();
            case DOUBLE -> b.asDoubleBuffer();
            default -> throw new IllegalArgumentException(t.toString());
        };
        return view.position(2);
    }

    private static Object filledArray(Datatype t) {
        Object a = array(t);
        for (int i = 0; i < N; i++) {
            long x = v(i);
            switch (t.kind) {
                case BYTE -> ((byte[]) a)[i] = (byte) x;
                case CHAR -> ((char[]) a)[i] = (char) (x + 100);
                case SHORT -> ((short[]) a)[i] = (short) x;
                case INT -> ((int[]) a)[i] = (int) x;
                case LONG -> ((long[]) a)[i] = x << 33;
                case FLOAT -> ((float[]) a)[i] = x / 4f;
                case DOUBLE -> ((double[]) a)[i] = x / 8d;
                case INT2 -> {
                    ((int[]) a)[2 * i] = (int) x;
                    ((int[]) a)[2 * i + 1] = (int) -x;
                }
                default -> throw new IllegalArgumentException(t.toString());
            }
        }
        return a;
    }

    @Test
    void shouldPackAndUnpackEveryTypeFromEveryFormAsTheElementsWouldBeWritten() {
        Datatype[] types = {MPI.BYTE, MPI.CHAR, MPI.SHORT, MPI.INT, MPI.LONG, MPI.FLOAT, MPI.DOUBLE, MPI.INT2};
        int count = N - OFFSET - 2;
        for (Datatype t : types) {
            byte[] want = expected(t, count);
            List<Object> sources = forms(t);
            sources.set(sources.size() - 1, filledArray(t));
            for (Object source : sources) {
                String what = t + " from " + source.getClass().getSimpleName() + (source instanceof ByteBuffer b ? " " + b.order() : "");
                // packed at byte 3 of a larger message, as after an envelope
                ByteBuffer message = ByteBuffer.allocate(3 + want.length + 4).order(ByteOrder.LITTLE_ENDIAN);
                Buffers.pack(source, OFFSET, count, t, message, 3);
                byte[] got = new byte[want.length];
                message.get(3, got);
                assertArrayEquals(want, got, what);
                assertEquals(0, message.position(), what + ": the message's position moved");

                for (Object target : forms(t)) {
                    Buffers.unpack(message, 3, want.length, target, OFFSET, t);
                    ByteBuffer back = ByteBuffer.allocate(want.length + 2).order(ByteOrder.LITTLE_ENDIAN);
                    Buffers.pack(target, OFFSET, count, t, back, 2);
                    byte[] again = new byte[want.length];
                    back.get(2, again);
                    assertArrayEquals(want, again, what + " into " + target.getClass().getSimpleName()
                            + (target instanceof ByteBuffer b ? " " + b.order() : ""));
                }
            }
        }
    }

    @Test
    void shouldLeaveThePairTypesGapsAndTheOtherElementsAlone() {
        // MPI.DOUBLE_INT: 12 packed bytes, 16 in a byte buffer (extent): element loops, not a copy
        ByteBuffer b = ByteBuffer.allocate(4 * 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 4; i++) {
            b.putDouble(16 * i, i + 0.5).putInt(16 * i + 8, 10 * i).putInt(16 * i + 12, -1);
        }
        ByteBuffer message = ByteBuffer.allocate(2 * 12).order(ByteOrder.LITTLE_ENDIAN);
        Buffers.pack(b, 1, 2, MPI.DOUBLE_INT, message, 0);
        assertEquals(1.5, message.getDouble(0));
        assertEquals(10, message.getInt(8));
        assertEquals(2.5, message.getDouble(12));
        assertEquals(20, message.getInt(20));

        ByteBuffer into = ByteBuffer.allocate(4 * 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 16; i++) {
            into.putInt(4 * i, -7);
        }
        Buffers.unpack(message, 0, 24, into, 2, MPI.DOUBLE_INT);
        assertEquals(-7, into.getInt(16 + 12), "element 1 untouched");
        assertEquals(1.5, into.getDouble(32));
        assertEquals(10, into.getInt(40));
        assertEquals(-7, into.getInt(44), "the gap of element 2 untouched");
        assertEquals(2.5, into.getDouble(48));

        int[] ints = new int[8];
        java.util.Arrays.fill(ints, -1);
        ByteBuffer two = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 4).putInt(4, 5);
        Buffers.unpack(two, 0, 8, ints, 1, MPI.INT);
        assertArrayEquals(new int[] {-1, 4, 5, -1, -1, -1, -1, -1}, ints);
        IntBuffer view = IntBuffer.allocate(8);
        Buffers.unpack(two, 0, 8, view, 6, MPI.INT);
        assertArrayEquals(new int[] {0, 0, 0, 0, 0, 0, 4, 5}, view.array());
        assertEquals(0, view.position());
    }
}
