package org.mpiproxy.api;

/**
 * A rank could not be started. The message is meant for the host and the operator; which error
 * a host is answered with is the protocol's business, not the launcher's.
 */
public class LaunchException extends Exception {

    private static final long serialVersionUID = 2L;

    /**
     * @param message what went wrong, naming the program or core
     */
    public LaunchException(String message) {
        super(message);
    }

    /**
     * @param message what went wrong
     * @param cause   the underlying failure
     */
    public LaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
