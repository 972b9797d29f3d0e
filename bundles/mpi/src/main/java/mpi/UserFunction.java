package mpi;

import java.nio.ByteBuffer;

import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * The function of a program's own reduction operation ({@code MPI_User_function}; {@link Op}):
 * it computes {@code inOut[i] = in[i] op inOut[i]} for {@code count} elements of the datatype,
 * {@code in} holding the earlier ranks' operand. Override one of the two {@code call} methods:
 * the reductions call the buffer form (the array form for {@code MPI.BOOLEAN}), whose default
 * copies the elements into arrays of the datatype's element type ({@code int[]} for
 * {@code MPI.INT} and types made of it, {@code byte[]} for the pair types and structs of mixed
 * types), calls the array form and copies the results back.
 */
public abstract class UserFunction {

    /**
     * Combines arrays of elements: {@code inOutVec[i] = inVec[i] op inOutVec[i]}.
     *
     * @param inVec    the earlier ranks' elements
     * @param inOutVec the later ranks' elements, then the results
     * @param count    elements of {@code datatype}
     * @throws MPIException unless overridden ({@code MPI.ERR_UNSUPPORTED_OPERATION})
     */
    public void call(Object inVec, Object inOutVec, int count, Datatype datatype) throws MPIException {
        throw new MPIException(MPI.ERR_UNSUPPORTED_OPERATION, getClass().getName() + " overrides neither"
                + " call(Object, Object, int, Datatype) nor call(ByteBuffer, ByteBuffer, int, Datatype)");
    }

    /**
     * Combines elements laid out in buffers of the machine's byte order, as the datatype lays
     * them out: {@code inOut[i] = in[i] op inOut[i]}.
     *
     * @param in       the earlier ranks' elements
     * @param inOut    the later ranks' elements, then the results
     * @param count    elements of {@code datatype}
     */
    public void call(ByteBuffer in, ByteBuffer inOut, int count, Datatype datatype) throws MPIException {
        Object results = elements(inOut, datatype.kind);
        call(elements(in, datatype.kind), results, count, datatype);
        write(results, inOut);
    }

    /** @return the buffer's elements, from index 0, as an array of {@code kind}'s element type */
    private static Object elements(ByteBuffer buf, Kind kind) {
        int bytes = buf.capacity();
        switch (kind) {
            case CHAR -> {
                char[] a = new char[bytes / 2];
                buf.asCharBuffer().get(0, a);
                return a;
            }
            case SHORT -> {
                short[] a = new short[bytes / 2];
                buf.asShortBuffer().get(0, a);
                return a;
            }
            case INT -> {
                int[] a = new int[bytes / 4];
                buf.asIntBuffer().get(0, a);
                return a;
            }
            case LONG -> {
                long[] a = new long[bytes / 8];
                buf.asLongBuffer().get(0, a);
                return a;
            }
            case FLOAT -> {
                float[] a = new float[bytes / 4];
                buf.asFloatBuffer().get(0, a);
                return a;
            }
            case DOUBLE -> {
                double[] a = new double[bytes / 8];
                buf.asDoubleBuffer().get(0, a);
                return a;
            }
            case BOOLEAN -> {
                boolean[] a = new boolean[bytes];
                for (int i = 0; i < bytes; i++) {
                    a[i] = buf.get(i) != 0;
                }
                return a;
            }
            default -> {
                byte[] a = new byte[bytes];
                buf.get(0, a);
                return a;
            }
        }
    }

    /** Writes an array of {@link #elements} back into the buffer. */
    private static void write(Object array, ByteBuffer buf) {
        if (array instanceof char[] a) {
            buf.asCharBuffer().put(0, a);
        } else if (array instanceof short[] a) {
            buf.asShortBuffer().put(0, a);
        } else if (array instanceof int[] a) {
            buf.asIntBuffer().put(0, a);
        } else if (array instanceof long[] a) {
            buf.asLongBuffer().put(0, a);
        } else if (array instanceof float[] a) {
            buf.asFloatBuffer().put(0, a);
        } else if (array instanceof double[] a) {
            buf.asDoubleBuffer().put(0, a);
        } else if (array instanceof boolean[] a) {
            for (int i = 0; i < a.length; i++) {
                buf.put(i, (byte) (a[i] ? 1 : 0));
            }
        } else {
            buf.put(0, (byte[]) array);
        }
    }
}
