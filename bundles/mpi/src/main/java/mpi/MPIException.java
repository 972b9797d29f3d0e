package mpi;

import org.mpiproxy.mpi.internal.engine.CommFailure;

/**
 * A failed MPI call, thrown under {@link MPI#ERRORS_RETURN}: its error class
 * ({@code MPI.ERR_TRUNCATE} and the others) and a one-line message naming the ranks and the call.
 */
public final class MPIException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int errorClass;

    /** @param message what failed */
    public MPIException(String message) {
        super(message);
        this.errorClass = MPI.ERR_OTHER;
    }

    /** @param cause what failed */
    public MPIException(Throwable cause) {
        super(cause.getMessage(), cause);
        this.errorClass = cause instanceof CommFailure f ? ErrorClasses.of(f.errorClass())
                : cause instanceof org.mpiproxy.mpi.MpiException m ? ErrorClasses.of(m.errorCode()) : MPI.ERR_OTHER;
    }

    MPIException(int errorClass, String message) {
        super(message);
        this.errorClass = errorClass;
    }

    /** @return the error code (here the same as the class: {@link MPI#getErrorString} describes it) */
    public int getErrorCode() {
        return errorClass;
    }

    /** @return the MPI error class */
    public int getErrorClass() {
        return errorClass;
    }
}
