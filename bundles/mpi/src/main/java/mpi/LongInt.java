package mpi;

/**
 * Reads and writes the elements of {@code MPI.LONG_INT} (a long value and an int index, the C struct
 * {@code struct { long value; int index; }}) in a {@code ByteBuffer}: {@code MPI.longInt.getData(buffer, i)}, then
 * {@code getValue}/{@code getIndex}/{@code putValue}/{@code putIndex}. The buffer is what
 * {@code MINLOC}/{@code MAXLOC} reductions on {@code MPI.LONG_INT} take.
 */
public final class LongInt extends Struct {

    private final int indexOffset;

    LongInt() {
        addLong();
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
        public long getValue() {
            return getLong(0);
        }

        /** @return the index */
        public int getIndex() {
            return getInt(indexOffset);
        }

        /** @param v the value */
        public void putValue(long v) {
            putLong(0, v);
        }

        /** @param v the index */
        public void putIndex(int v) {
            putInt(indexOffset, v);
        }
    }
}
