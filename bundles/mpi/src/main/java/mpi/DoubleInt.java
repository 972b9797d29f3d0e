package mpi;

/**
 * Reads and writes the elements of {@code MPI.DOUBLE_INT} (a double value and an int index, the C struct
 * {@code struct { double value; int index; }}) in a {@code ByteBuffer}: {@code MPI.doubleInt.getData(buffer, i)}, then
 * {@code getValue}/{@code getIndex}/{@code putValue}/{@code putIndex}. The buffer is what
 * {@code MINLOC}/{@code MAXLOC} reductions on {@code MPI.DOUBLE_INT} take.
 */
public final class DoubleInt extends Struct {

    private final int indexOffset;

    DoubleInt() {
        addDouble();
        setOffset(8);
        indexOffset = addInt();
    }

    @Override
    protected Data newData() {
        return new Data();
    }

    /** One element. */
    public final class Data extends Struct.Data {

        /** @return the value */
        public double getValue() {
            return getDouble(0);
        }

        /** @return the index */
        public int getIndex() {
            return getInt(indexOffset);
        }

        /** @param v the value */
        public void putValue(double v) {
            putDouble(0, v);
        }

        /** @param v the index */
        public void putIndex(int v) {
            putInt(indexOffset, v);
        }
    }
}
