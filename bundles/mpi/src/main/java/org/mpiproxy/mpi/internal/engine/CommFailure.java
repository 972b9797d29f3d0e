package org.mpiproxy.mpi.internal.engine;

/**
 * A failed call of the engine: the MPI error class ({@code org.mpiproxy.protocol.MpiErrors}) and
 * a one-line message naming the ranks, the communicator and the call.
 */
public final class CommFailure extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int errorClass;

    /**
     * @param errorClass the MPI error class
     * @param message    what failed, one line
     */
    public CommFailure(int errorClass, String message) {
        super(message);
        this.errorClass = errorClass;
    }

    /** @return the MPI error class */
    public int errorClass() {
        return errorClass;
    }
}
