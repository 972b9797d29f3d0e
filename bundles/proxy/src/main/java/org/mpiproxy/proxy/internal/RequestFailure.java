package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.RingFaultException;
import org.mpiproxy.protocol.MpiErrors;

/**
 * What both protocols make of a request whose handling threw: the result and the one-line reason
 * its reply carries, and whether a rank's ring failed (then the rank's job is failed as well).
 */
final class RequestFailure {

    /** The result of a request whose handling failed on the node. */
    static final int RESULT = MpiErrors.ERR_IO;

    private RequestFailure() {
    }

    /**
     * @param failure what the handling threw
     * @return whether it is a fault of a ring's shared memory: a {@link RingFaultException}, or the
     *         JVM's {@link InternalError} of a mapped page that a ring not wrapped by its channel let through
     */
    static boolean isRingFault(Throwable failure) {
        return failure instanceof RingFaultException || failure instanceof InternalError;
    }

    /**
     * @param failure what the handling threw
     * @param jobText the request's job as the log names it
     * @param rankId  the request's rank
     * @return the reason a reply carries: the ring error's own line, or the failure in one line
     */
    static String reason(Throwable failure, String jobText, long rankId) {
        if (failure instanceof RingFaultException) {
            return failure.getMessage();
        }
        String what = failure.getMessage() == null ? failure.getClass().getName()
                : failure.getClass().getSimpleName() + ": " + failure.getMessage().replace('\n', ' ');
        if (failure instanceof InternalError) {
            return "a fault in the shared memory of job " + jobText + " rank " + rankId + " (" + what + ")";
        }
        return "the node failed the request for job " + jobText + " rank " + rankId + " (" + what + ")";
    }
}
