package org.mpiproxy.proxy.internal;

import java.io.IOException;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Unmaps and deletes a rank's channel, or a job's directory, logging what fails; shared by both protocols. */
final class ChannelCleanup {

    private static final Logger LOG = LoggerFactory.getLogger(ChannelCleanup.class);

    private ChannelCleanup() {
    }

    /**
     * @param channels the channel manager
     * @param channel  the rank's mapped channel
     * @param jobId    its job
     * @param rankId   its rank
     */
    static void close(ChannelManager channels, RankChannel channel, long jobId, int rankId) {
        try {
            channel.close();
        } catch (RuntimeException e) {
            LOG.warn("closing the channel of job {} rank {} failed", Job.hex(jobId), rankId, e);
        }
        try {
            channels.remove(jobId, rankId);
        } catch (IOException | RuntimeException e) {
            LOG.warn("removing the channel of job {} rank {} failed: {}", Job.hex(jobId), rankId, e.toString());
        }
    }

    /**
     * @param channels the channel manager
     * @param jobId    the job whose directory goes
     */
    static void release(ChannelManager channels, long jobId) {
        try {
            channels.release(jobId);
        } catch (IOException | RuntimeException e) {
            LOG.warn("releasing the directory of job {} failed: {}", Job.hex(jobId), e.toString());
        }
    }
}
