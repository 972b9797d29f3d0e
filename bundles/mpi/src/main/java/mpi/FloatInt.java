package mpi;

/**
 * Reads and writes the elements of {@code MPI.FLOAT_INT} (a float value and an int index, the C struct
 * {@code struct { float value; int index; }}) in a {@code ByteBuffer}: {@code MPI.floatInt.getData(buffer, i)}, then
 * {@code getValue}/{@code getIndex}/{@code putValue}/{@code putIndex}. The buffer is what
 * {@code MINLOC}/{@code MAXLOC} reductions on {@code MPI.FLOAT_INT} take.
 */
public final class FloatInt extends Struct {

    private final int indexOffset;

    FloatInt() {
        addFloat();
        setOffset(4);
        indexOffset = addInt();
    }

    @Override
    protected Data newData() {
        return new Data();
    }

    /** One element. */
    public final class Data extends Struct.Data {

        /** @return the value */
        public float getValue() {
            return getFloat(0);
        }

        /** @return the index */
        public int getIndex() {
            return getInt(indexOffset);
        }

        /** @param v the value */
        public void putValue(float v) {
            putFloat(0, v);
        }

        /** @param v the index */
        public void putIndex(int v) {
            putInt(indexOffset, v);
        }
    }
}
