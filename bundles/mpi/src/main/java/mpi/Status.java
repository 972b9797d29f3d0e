package mpi;

import org.mpiproxy.mpi.internal.engine.Kind;

/** What a completed receive (or a probe) found: source, tag, size, error, cancellation. */
public final class Status {

    private final int source;
    private final int tag;
    private final int error;
    private final boolean cancelled;
    private final int bytes;
    private final Kind kind;
    int index = MPI.UNDEFINED;

    Status(int source, int tag, int error, boolean cancelled, int bytes, Kind kind) {
        this.source = source;
        this.tag = tag;
        this.error = error;
        this.cancelled = cancelled;
        this.bytes = bytes;
        this.kind = kind;
    }

    /**
     * @param datatype the type received
     * @return elements of {@code datatype} in the message, {@code MPI.UNDEFINED} when its bytes are
     *         not a whole number of them
     * @throws MPIException {@code MPI.ERR_TYPE} for a freed type
     */
    public int getCount(Datatype datatype) throws MPIException {
        int size = known(datatype).packedSize;
        if (size == 0) {
            return bytes == 0 ? 0 : MPI.UNDEFINED;
        }
        return bytes % size == 0 ? bytes / size : MPI.UNDEFINED;
    }

    /**
     * @param datatype the type received
     * @return the basic elements in the message ({@code MPI_GET_ELEMENTS}): a predefined type's
     *         elements, a derived type's entries (those of a last, partial element too);
     *         {@code MPI.UNDEFINED} when the message ends inside one
     * @throws MPIException {@code MPI.ERR_TYPE} for a freed type
     */
    public int getElements(Datatype datatype) throws MPIException {
        Datatype type = known(datatype);
        return type.derived() ? type.map.elements(bytes) : getCount(type);
    }

    private static Datatype known(Datatype datatype) throws MPIException {
        if (datatype == null || datatype.isNull()) {
            throw MPI.raise(new MPIException(MPI.ERR_TYPE, "Status: the datatype is "
                    + (datatype == null ? "null" : "freed (" + datatype + ")")));
        }
        return datatype;
    }

    /** @return whether the operation was cancelled */
    public boolean isCancelled() throws MPIException {
        return cancelled;
    }

    /** @return the sender's rank in the communicator ({@code MPI.PROC_NULL} for a receive from it) */
    public int getSource() {
        return source;
    }

    /** @return the message's tag */
    public int getTag() {
        return tag;
    }

    /** @return the error class, {@code MPI.SUCCESS} when none */
    public int getError() {
        return error;
    }

    /** @return the index of the request in the array a {@code waitAny} or {@code testAny} was given */
    public int getIndex() {
        return index;
    }

    /** @return the element kind the sender sent (for messages) */
    Kind kind() {
        return kind;
    }

    @Override
    public String toString() {
        return "Status[source=" + source + ", tag=" + tag + ", bytes=" + bytes + (error != 0 ? ", error=" + error : "")
                + (cancelled ? ", cancelled" : "") + "]";
    }
}
