package org.mpiproxy.api;

import java.nio.file.Path;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The two shared-memory rings between the proxy and one rank of one job.
 * <p>
 * Thread-safety: the rings follow {@link MessageRing}'s single-producer/single-consumer rules;
 * {@link #close()} must not race with ring operations.
 */
@ProviderType
public interface RankChannel extends AutoCloseable {

    /** @return the job this channel belongs to */
    long jobId();

    /** @return the rank id */
    int rankId();

    /** @return the channel file; this path is what the rank receives as its channel location */
    Path path();

    /** @return the host-to-rank ring: the proxy produces, the rank consumes */
    MessageRing toRank();

    /** @return the rank-to-host ring: the rank produces, the proxy consumes */
    MessageRing fromRank();

    /** Unmaps the channel; the file stays until its job is released. */
    @Override
    void close();
}
