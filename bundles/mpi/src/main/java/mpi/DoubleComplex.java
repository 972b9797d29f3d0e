package mpi;

import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;

/**
 * One element of {@code MPI.DOUBLE_COMPLEX}, a (real, imaginary) pair of doubles, in a double array or buffer:
 * element {@code index} is at {@code 2 * index}. Reads and writes the buffer itself.
 */
public final class DoubleComplex {

    private final int offset;
    private final DoubleBuffer buffer;

    private DoubleComplex(DoubleBuffer buffer, int index) {
        this.buffer = buffer;
        this.offset = 2 * index;
    }

    /** @return element 0 of {@code buffer} */
    public static DoubleComplex get(DoubleBuffer buffer) {
        return new DoubleComplex(buffer, 0);
    }

    /** @return element {@code index} of {@code buffer} */
    public static DoubleComplex get(DoubleBuffer buffer, int index) {
        return new DoubleComplex(buffer, index);
    }

    /** @return element 0 of {@code array} */
    public static DoubleComplex get(double[] array) {
        return new DoubleComplex(DoubleBuffer.wrap(array), 0);
    }

    /** @return element {@code index} of {@code array} */
    public static DoubleComplex get(double[] array, int index) {
        return new DoubleComplex(DoubleBuffer.wrap(array), index);
    }

    /** @return element 0 of {@code buffer}, read in its byte order */
    public static DoubleComplex get(ByteBuffer buffer) {
        return new DoubleComplex(buffer.asDoubleBuffer(), 0);
    }

    /** @return element {@code index} of {@code buffer}, read in its byte order */
    public static DoubleComplex get(ByteBuffer buffer, int index) {
        return new DoubleComplex(buffer.asDoubleBuffer(), index);
    }

    /** @return the real part */
    public double getReal() {
        return buffer.get(offset);
    }

    /** @return the imaginary part */
    public double getImag() {
        return buffer.get(offset + 1);
    }

    /** @param real the real part */
    public void putReal(double real) {
        buffer.put(offset, real);
    }

    /** @param imag the imaginary part */
    public void putImag(double imag) {
        buffer.put(offset + 1, imag);
    }

    /** @return the buffer from this element on */
    public DoubleBuffer getBuffer() {
        return offset == 0 ? buffer : MPI.slice(buffer, offset);
    }
}
