package mpi;

import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * The predefined datatypes: which Java elements a buffer holds ({@code MPI.INT}: {@code int[]}
 * or an {@code IntBuffer}; every type also in a {@code ByteBuffer}, in that buffer's byte
 * order). The pair types of {@code MINLOC}/{@code MAXLOC} are {@code int[]} pairs
 * ({@code MPI.INT2}) or, in a {@code ByteBuffer}, laid out as the C structs of MPI (value, then
 * the int index at the value's alignment: {@code MPI.DOUBLE_INT} takes 16 bytes). Derived
 * datatypes are not offered.
 */
public final class Datatype implements Freeable {

    final Kind kind;
    private String name;
    /** Bytes of one element in a {@code ByteBuffer}: the C struct's size for pairs. */
    final int extentBytes;
    /** Bytes of the base element of a Java array of this type (pairs of ints: an int). */
    private final int baseSize;

    Datatype(Kind kind, String name, int extentBytes, int baseSize) {
        this.kind = kind;
        this.name = name;
        this.extentBytes = extentBytes;
        this.baseSize = baseSize;
    }

    /** @return the lower bound, 0 for every predefined type */
    public int getLb() throws MPIException {
        return 0;
    }

    /** @return the extent in elements of the type's base (1 for the basic types, 2 for {@code INT2}) */
    public int getExtent() throws MPIException {
        return extentBytes / baseSize;
    }

    /** @return as {@link #getLb()} */
    public int getTrueLb() throws MPIException {
        return 0;
    }

    /** @return as {@link #getExtent()} */
    public int getTrueExtent() throws MPIException {
        return getExtent();
    }

    /** @return bytes of data in one element ({@code MPI_Type_size}) */
    public int getSize() throws MPIException {
        return kind.size();
    }

    /** Predefined types need no commit. */
    public void commit() throws MPIException {
    }

    /** Predefined types are never freed. */
    @Override
    public void free() throws MPIException {
    }

    /** @return {@code false}: every datatype here is a real one */
    public boolean isNull() {
        return false;
    }

    /** @return the type's name, {@code MPI_INT} and so on */
    public String getName() throws MPIException {
        return name;
    }

    /** Renames the type (for messages only). */
    public void setName(String name) throws MPIException {
        this.name = name;
    }

    @Override
    public String toString() {
        return name;
    }
}
