package mpi;

/**
 * Reads and writes the elements of {@code MPI.SHORT_INT} (a short value and an int index, the C struct
 * {@code struct { short value; int index; }}) in a {@code ByteBuffer}: {@code MPI.shortInt.getData(buffer, i)}, then
 * {@code getValue}/{@code getIndex}/{@code putValue}/{@code putIndex}. The buffer is what
 * {@code MINLOC}/{@code MAXLOC} reductions on {@code MPI.SHORT_INT} take.
 */
public final class ShortInt extends Struct {

    private final int indexOffset;

    ShortInt() {
        addShort();
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
        public short getValue() {
            return getShort(0);
        }

        /** @return the index */
        public int getIndex() {
            return getInt(indexOffset);
        }

        /** @param v the value */
        public void putValue(short v) {
            putShort(0, v);
        }

        /** @param v the index */
        public void putIndex(int v) {
            putInt(indexOffset, v);
        }
    }
}
