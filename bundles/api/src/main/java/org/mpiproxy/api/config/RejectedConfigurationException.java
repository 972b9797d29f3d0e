package org.mpiproxy.api.config;

/**
 * Thrown by a component's activation when its configuration is bad and it has no good one to
 * fall back on: the component does not start. The message is the line already logged; the
 * exception carries no stack trace, which would say nothing more.
 */
public final class RejectedConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong, {@code key=value is not ...}
     */
    public RejectedConfigurationException(String message) {
        super(message, null, false, false);
    }
}
