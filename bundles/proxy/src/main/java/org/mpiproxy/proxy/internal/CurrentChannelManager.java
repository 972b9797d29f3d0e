package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankChannel;

/**
 * The channel manager as the dispatcher sees it: whichever manager service is bound now, so
 * that the channel bundle can be updated or reconfigured without restarting the proxy. Channels
 * already open stay with the proxy (they are mapped files); a job's files are removed by the
 * manager that created them when the base directory has changed since. Thread-safe.
 */
final class CurrentChannelManager implements ChannelManager {

    private final Supplier<ChannelManager> current;
    private final Map<Long, ChannelManager> openedBy = new ConcurrentHashMap<>();

    CurrentChannelManager(Supplier<ChannelManager> current) {
        this.current = current;
    }

    private ChannelManager now() throws IOException {
        ChannelManager m = current.get();
        if (m == null) {
            throw new IOException("no channel manager is running");
        }
        return m;
    }

    private ChannelManager forJob(long jobId) throws IOException {
        ChannelManager opened = openedBy.get(jobId);
        ChannelManager m = current.get();
        if (opened == null) {
            return now();
        }
        if (m == null || !m.baseDirectory().equals(opened.baseDirectory())) {
            return opened;
        }
        return m;
    }

    @Override
    public RankChannel open(long jobId, int rankId) throws IOException {
        return map(jobId, rankId, false);
    }

    @Override
    public RankChannel reopen(long jobId, int rankId) throws IOException {
        return map(jobId, rankId, true);
    }

    private RankChannel map(long jobId, int rankId, boolean again) throws IOException {
        ChannelManager m = forJob(jobId);
        RankChannel channel = again ? m.reopen(jobId, rankId) : m.open(jobId, rankId);
        openedBy.putIfAbsent(jobId, m);
        return channel;
    }

    @Override
    public void remove(long jobId, int rankId) throws IOException {
        forJob(jobId).remove(jobId, rankId);
    }

    @Override
    public void release(long jobId) throws IOException {
        try {
            forJob(jobId).release(jobId);
        } finally {
            openedBy.remove(jobId);
        }
    }

    @Override
    public Path jobDirectory(long jobId) {
        try {
            return forJob(jobId).jobDirectory(jobId);
        } catch (IOException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    @Override
    public Path baseDirectory() {
        ChannelManager m = current.get();
        if (m == null) {
            throw new IllegalStateException("no channel manager is running");
        }
        return m.baseDirectory();
    }
}
