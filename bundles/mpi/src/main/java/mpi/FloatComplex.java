package mpi;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * One element of {@code MPI.FLOAT_COMPLEX}, a (real, imaginary) pair of floats, in a float array or buffer:
 * element {@code index} is at {@code 2 * index}. Reads and writes the buffer itself.
 */
public final class FloatComplex {

    private final int offset;
    private final FloatBuffer buffer;

    private FloatComplex(FloatBuffer buffer, int index) {
        this.buffer = buffer;
        this.offset = 2 * index;
    }

    /** @return element 0 of {@code buffer} */
    public static FloatComplex get(FloatBuffer buffer) {
        return new FloatComplex(buffer, 0);
    }

    /** @return element {@code index} of {@code buffer} */
    public static FloatComplex get(FloatBuffer buffer, int index) {
        return new FloatComplex(buffer, index);
    }

    /** @return element 0 of {@code array} */
    public static FloatComplex get(float[] array) {
        return new FloatComplex(FloatBuffer.wrap(array), 0);
    }

    /** @return element {@code index} of {@code array} */
    public static FloatComplex get(float[] array, int index) {
        return new FloatComplex(FloatBuffer.wrap(array), index);
    }

    /** @return element 0 of {@code buffer}, read in its byte order */
    public static FloatComplex get(ByteBuffer buffer) {
        return new FloatComplex(buffer.asFloatBuffer(), 0);
    }

    /** @return element {@code index} of {@code buffer}, read in its byte order */
    public static FloatComplex get(ByteBuffer buffer, int index) {
        return new FloatComplex(buffer.asFloatBuffer(), index);
    }

    /** @return the real part */
    public float getReal() {
        return buffer.get(offset);
    }

    /** @return the imaginary part */
    public float getImag() {
        return buffer.get(offset + 1);
    }

    /** @param real the real part */
    public void putReal(float real) {
        buffer.put(offset, real);
    }

    /** @param imag the imaginary part */
    public void putImag(float imag) {
        buffer.put(offset + 1, imag);
    }

    /** @return the buffer from this element on */
    public FloatBuffer getBuffer() {
        return offset == 0 ? buffer : MPI.slice(buffer, offset);
    }
}
