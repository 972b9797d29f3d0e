package org.mpiproxy.api;

/**
 * A rank could not be started. The message is meant for the host and the operator.
 */
public class LaunchException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int mpiError;

    /**
     * @param mpiError the MPI error code to report to the host (for example MPI_ERR_SPAWN = 54)
     * @param message  what went wrong, naming the program or core
     */
    public LaunchException(int mpiError, String message) {
        super(message);
        this.mpiError = mpiError;
    }

    /**
     * @param mpiError the MPI error code to report to the host
     * @param message  what went wrong
     * @param cause    the underlying failure
     */
    public LaunchException(int mpiError, String message, Throwable cause) {
        super(message, cause);
        this.mpiError = mpiError;
    }

    /** @return the MPI error code to report to the host */
    public int mpiError() {
        return mpiError;
    }
}
