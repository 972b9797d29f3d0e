package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankInfo;

/**
 * A v2 job as plain values, and back: what one revision of the proxy hands the next
 * ({@link HandOver}); what every rank is goes through {@link RankHandOver}. Most of a v2 rank's
 * flow state is in its rings already and is not handed over: the next SEND sequence is the
 * host-to-rank ring's producer mark, and the rank-to-host stream starts again at the fragment
 * the other ring's consumer mark names (fragments sent but not acknowledged are peeked, not
 * released, so the taker cuts and sends them again; the host drops what it has). SEND fragments
 * held past a hole are not handed over either: they were not acknowledged, so the host sends them
 * again. Timers are not handed over: the taker arms them again.
 */
final class V2HandOver {

    private V2HandOver() {
    }

    /** @return the job and its ranks as plain values */
    static Map<String, Object> export(V2Job job) {
        Map<String, Object> m = new HashMap<>();
        m.put("jobId", job.jobId);
        m.put("owner", job.owner);
        m.put("outputPort", job.outputTo.getPort());
        m.put("keyId", job.keyId);
        if (job.user != null) {
            m.put("user", new long[] {job.user.uid(), job.user.gid()});
        }
        m.put("started", job.started);
        m.put("logDirectory", job.logDirectory);
        m.put("emptySince", job.emptySince);
        List<Object[]> finished = new ArrayList<>();
        for (Map.Entry<Integer, V2Job.Finished> e : job.finished.entrySet()) {
            V2Job.Finished f = e.getValue();
            finished.add(new Object[] {new long[] {e.getKey(), f.result(), f.exitStatus(), f.core()}, f.info()});
        }
        m.put("finished", finished);
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (V2Rank rank : job.ranks()) {
            ranks.add(export(rank));
        }
        m.put("ranks", ranks);
        return m;
    }

    private static Map<String, Object> export(V2Rank r) {
        Map<String, Object> m = new HashMap<>();
        RankHandOver.export(r, m);
        m.put("pullEnd", r.pullEnd);
        m.put("truncateSent", r.truncateSent);
        m.put("sendStalled", r.sendStalled);
        m.put("messageBytesIn", r.messageBytesIn);
        m.put("holdingOff", r.holdingOff);
        return m;
    }

    /**
     * Rebuilds a job.
     *
     * @param m            what {@link #export(V2Job)} gave, possibly from another revision of this class
     * @param channels     maps a channel of another api revision again
     * @param datagramSize the v2 datagram size in force (sizes the ranks' retained fragments)
     * @return the job with its ranks, timers not armed
     * @throws IllegalArgumentException when a value is missing or of another type
     */
    static V2Job restore(Map<String, Object> m, ChannelManager channels, int datagramSize) {
        try {
            InetSocketAddress owner = (InetSocketAddress) get(m, "owner");
            // a job created under a cluster key has no user (nor had one in revisions before job keys)
            long[] user = (long[]) m.get("user");
            V2Job job = new V2Job((Long) get(m, "jobId"), owner, (Integer) get(m, "outputPort"),
                    (Integer) get(m, "keyId"), (Instant) get(m, "started"), (Path) get(m, "logDirectory"),
                    user == null ? null : new RankIdentity(user[0], user[1]));
            job.emptySince = (Long) get(m, "emptySince");
            for (Object o : (List<?>) get(m, "finished")) {
                Object[] pair = (Object[]) o;
                long[] f = (long[]) pair[0];
                RankInfo info = pair[1] instanceof RankInfo ? (RankInfo) pair[1]
                        : new RankInfo((int) f[0], (int) f[3], "?", -1, RankInfo.State.EXITED, (int) f[2], 0, 0, 0, 0);
                job.finished.put((int) f[0], new V2Job.Finished((int) f[1], f[2], (int) f[3], info));
            }
            for (Object o : (List<?>) get(m, "ranks")) {
                job.put(restore(job, RankHandOver.asMap(o), channels, datagramSize));
            }
            if (!job.isEmpty()) {
                job.emptySince = 0;
            }
            return job;
        } catch (ClassCastException | ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("a handed-over v2 job has a value of another type: " + e.getMessage(), e);
        }
    }

    private static V2Rank restore(V2Job job, Map<String, Object> m, ChannelManager channels, int datagramSize) {
        int rankId = (Integer) get(m, "rankId");
        V2Rank r = new V2Rank(job, rankId, (Integer) get(m, "coreId"), (Integer) get(m, "worldSize"),
                (String) get(m, "program"), RankHandOver.channel(m.get("channel"), job.jobId, rankId, channels),
                datagramSize);
        RankHandOver.restore(r, m);
        if (r.fromRank != null) {
            // the handed-over ring's read-ahead cursor is where the previous revision peeked: the
            // fragments not acknowledged are cut again from the released head
            r.fromRank.rewindPeek();
        }
        r.pullEnd = Math.max(r.next, (Long) get(m, "pullEnd"));
        r.truncateSent = (Boolean) get(m, "truncateSent");
        r.sendStalled = (Boolean) get(m, "sendStalled");
        r.messageBytesIn = (Long) get(m, "messageBytesIn");
        r.holdingOff = (Boolean) get(m, "holdingOff");
        return r;
    }

    private static Object get(Map<String, Object> m, String key) {
        return RankHandOver.get(m, key);
    }
}
