package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.RankChannel;

/** Channels over heap rings; records what was opened, removed and released. */
final class FakeChannelManager implements ChannelManager {

    static final class FakeChannel implements RankChannel {
        final long jobId;
        final int rankId;
        final Path path;
        final HeapMessageRing toRank;
        final HeapMessageRing fromRank;
        boolean closed;

        FakeChannel(long jobId, int rankId, Path path, int capacity) {
            this.jobId = jobId;
            this.rankId = rankId;
            this.path = path;
            this.toRank = new HeapMessageRing(capacity);
            this.fromRank = new HeapMessageRing(capacity);
        }

        /** The same file mapped again: a new channel over the same rings. */
        FakeChannel(FakeChannel mapped) {
            this.jobId = mapped.jobId;
            this.rankId = mapped.rankId;
            this.path = mapped.path;
            this.toRank = mapped.toRank;
            this.fromRank = mapped.fromRank;
        }

        @Override
        public long jobId() {
            return jobId;
        }

        @Override
        public int rankId() {
            return rankId;
        }

        @Override
        public Path path() {
            return path;
        }

        @Override
        public MessageRing toRank() {
            return toRank;
        }

        @Override
        public MessageRing fromRank() {
            return fromRank;
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    private final Path base = Path.of("channels");
    final Map<String, FakeChannel> open = new LinkedHashMap<>();
    final List<String> removed = new ArrayList<>();
    final List<Long> released = new CopyOnWriteArrayList<>();
    int ringCapacity = 65536;
    IOException failOpen;

    static String key(long jobId, int rankId) {
        return Job.hex(jobId) + "/" + rankId;
    }

    FakeChannel channel(long jobId, int rankId) {
        return open.get(key(jobId, rankId));
    }

    @Override
    public RankChannel open(long jobId, int rankId) throws IOException {
        if (failOpen != null) {
            throw failOpen;
        }
        FakeChannel c = new FakeChannel(jobId, rankId, jobDirectory(jobId).resolve("rank-" + rankId + ".chan"),
                ringCapacity);
        open.put(key(jobId, rankId), c);
        return c;
    }

    /** The same file mapped again: a new channel over the rings of the one open, or a new channel. */
    @Override
    public RankChannel reopen(long jobId, int rankId) throws IOException {
        FakeChannel c = open.get(key(jobId, rankId));
        if (c == null) {
            return open(jobId, rankId);
        }
        FakeChannel again = new FakeChannel(c);
        open.put(key(jobId, rankId), again);
        return again;
    }

    @Override
    public void remove(long jobId, int rankId) {
        removed.add(key(jobId, rankId));
    }

    @Override
    public void release(long jobId) {
        released.add(jobId);
    }

    @Override
    public Path jobDirectory(long jobId) {
        return base.resolve("job-" + Job.hex(jobId));
    }

    @Override
    public Path baseDirectory() {
        return base;
    }
}
