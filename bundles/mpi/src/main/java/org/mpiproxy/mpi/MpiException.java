package org.mpiproxy.mpi;

import org.mpiproxy.protocol.MpiErrors;

/**
 * An MPI call failed. Carries the MPI error code (see the protocol bundle's {@code MpiErrors}),
 * as the C functions return it.
 */
public class MpiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int errorCode;

    /**
     * @param errorCode the MPI error code, not {@code MPI_SUCCESS}
     * @param message   what failed, readable by the user
     */
    public MpiException(int errorCode, String message) {
        super(MpiErrors.name(errorCode) + ": " + message);
        this.errorCode = errorCode;
    }

    /**
     * @param errorCode the MPI error code, not {@code MPI_SUCCESS}
     * @param message   what failed, readable by the user
     * @param cause     the underlying failure
     */
    public MpiException(int errorCode, String message, Throwable cause) {
        super(MpiErrors.name(errorCode) + ": " + message, cause);
        this.errorCode = errorCode;
    }

    /** @return the MPI error code, e.g. 35 for {@code MPI_ERR_IO} */
    public int errorCode() {
        return errorCode;
    }

    /** @return the MPI name of the error code, e.g. {@code MPI_ERR_IO} */
    public String errorName() {
        return MpiErrors.name(errorCode);
    }
}
