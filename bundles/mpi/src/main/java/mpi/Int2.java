package mpi;

/**
 * Reads and writes the elements of {@code MPI.INT2} (a int value and an int index, the C struct
 * {@code struct { int value; int index; }}) in a {@code ByteBuffer}: {@code MPI.int2.getData(buffer, i)}, then
 * {@code getValue}/{@code getIndex}/{@code putValue}/{@code putIndex}. The buffer is what
 * {@code MINLOC}/{@code MAXLOC} reductions on {@code MPI.INT2} take.
 */
public final class Int2 extends Struct {

    private final int indexOffset;

    Int2() {
        addInt();
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
        public int getValue() {
            return getInt(0);
        }

        /** @return the index */
        public int getIndex() {
            return getInt(indexOffset);
        }

        /** @param v the value */
        public void putValue(int v) {
            putInt(0, v);
        }

        /** @param v the index */
        public void putIndex(int v) {
            putInt(indexOffset, v);
        }
    }
}
