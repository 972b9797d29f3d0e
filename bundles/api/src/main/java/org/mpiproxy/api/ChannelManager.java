package org.mpiproxy.api;

import java.io.IOException;
import java.nio.file.Path;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Creates and removes the shared-memory channels of jobs. Each job has its own directory
 * below {@link #baseDirectory()}; each rank one channel file in it.
 * <p>
 * Thread-safe.
 */
@ProviderType
public interface ChannelManager {

    /**
     * Creates (or re-opens, when it already exists) the channel of one rank.
     *
     * @param jobId  the job
     * @param rankId the rank, &gt;= 1
     * @return the mapped channel; the caller closes it
     * @throws IOException when the directory or file cannot be created or mapped
     */
    RankChannel open(long jobId, int rankId) throws IOException;

    /**
     * Maps the channel of a rank of a running job again, its rings as they are: a new revision
     * of the proxy takes over a job whose channels another revision (of the proxy, or of this
     * manager) created. The job's directory becomes this manager's own, removed by
     * {@link #release}. The default re-opens through {@link #open}.
     *
     * @param jobId  the job
     * @param rankId the rank, &gt;= 1
     * @return the mapped channel; the caller closes it
     * @throws IOException when the job directory or the channel file is missing or not the rank's
     */
    default RankChannel reopen(long jobId, int rankId) throws IOException {
        return open(jobId, rankId);
    }

    /**
     * Removes one rank's channel file.
     *
     * @param jobId  the job
     * @param rankId the rank
     * @throws IOException when the file exists but cannot be removed
     */
    void remove(long jobId, int rankId) throws IOException;

    /**
     * Removes a job's directory and every file in it. Channels of the job must be closed first.
     *
     * @param jobId the job
     * @throws IOException when the directory exists but cannot be removed
     */
    void release(long jobId) throws IOException;

    /**
     * @param jobId the job
     * @return the job's directory (it may not exist yet)
     */
    Path jobDirectory(long jobId);

    /** @return the directory holding every job directory */
    Path baseDirectory();
}
