package org.mpiproxy.api;

import java.nio.file.Path;

/**
 * A ring of a rank's channel could not be read or written: its shared memory failed under the
 * access. On a memory-mapped file this is the JVM's {@link InternalError} for a page the file
 * system could not give (a full channel base) or a file cut shorter under its mapping; the
 * channel's implementation raises this instead, naming the file, the job and the rank.
 * <p>
 * The ring's state is unknown afterwards: its job cannot go on, so the proxy fails the request
 * that met it and stops the job's ranks; other jobs are not affected.
 */
public final class RingFaultException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long jobId;
    private final int rankId;
    private final transient Path path;

    /**
     * @param message one line: what failed and why, naming the file, the job and the rank
     * @param jobId   the channel's job
     * @param rankId  the channel's rank
     * @param path    the channel file
     * @param cause   the fault, usually an {@link InternalError}
     */
    public RingFaultException(String message, long jobId, int rankId, Path path, Throwable cause) {
        super(message, cause);
        this.jobId = jobId;
        this.rankId = rankId;
        this.path = path;
    }

    /** @return the job of the channel whose ring failed */
    public long jobId() {
        return jobId;
    }

    /** @return the rank of the channel whose ring failed */
    public int rankId() {
        return rankId;
    }

    /** @return the channel file */
    public Path path() {
        return path;
    }
}
