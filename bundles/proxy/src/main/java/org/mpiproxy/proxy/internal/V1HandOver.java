package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankInfo;

/**
 * A v1 job as plain values, and back: what one revision of the proxy hands the next
 * ({@link HandOver}); what every rank is goes through {@link RankHandOver}, v1's own flow state
 * (held SENDs, queued RECVs) is added here. Timers are not handed over: the taker arms them again
 * (a TERMINATE's wait starts again).
 */
final class V1HandOver {

    private V1HandOver() {
    }

    /** @return the job and its ranks as plain values */
    static Map<String, Object> export(Job job) {
        Map<String, Object> m = new HashMap<>();
        m.put("jobId", job.jobId);
        m.put("owner", job.owner);
        m.put("started", job.started);
        m.put("logDirectory", job.logDirectory);
        m.put("abortOnFailure", job.abortOnFailure);
        m.put("stopReason", job.stopReason);
        m.put("lastHeardNanos", job.lastHeardNanos);
        m.put("finished", new ArrayList<Object>(job.finished()));
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (Rank rank : job.ranks()) {
            ranks.add(export(rank));
        }
        m.put("ranks", ranks);
        return m;
    }

    private static Map<String, Object> export(Rank r) {
        Map<String, Object> m = new HashMap<>();
        RankHandOver.export(r, m);
        m.put("dropped", r.dropped);
        m.put("held", r.held.export());
        m.put("recvs", r.recvs.export());
        return m;
    }

    /**
     * Rebuilds a job. A rank that was still starting (its launch did not finish before the hand-over)
     * comes back failed, so that its host's repeated EXEC learns it.
     *
     * @param m what {@link #export(Job)} gave, possibly from another revision of this class
     * @return the job with its ranks, timers not armed
     * @throws IllegalArgumentException when a value is missing or of another type (an api bundle
     *                                  refreshed in between makes the handles foreign)
     */
    static Job restore(Map<String, Object> m, ChannelManager channels) {
        try {
            Job job = new Job((Long) get(m, "jobId"), (InetSocketAddress) get(m, "owner"), (Instant) get(m, "started"),
                    (Path) get(m, "logDirectory"));
            job.abortOnFailure = (Boolean) get(m, "abortOnFailure");
            job.stopReason = (String) m.get("stopReason");
            job.lastHeardNanos = (Long) get(m, "lastHeardNanos");
            for (Object info : (List<?>) get(m, "finished")) {
                if (info instanceof RankInfo) {
                    job.finished().add((RankInfo) info);
                }
            }
            for (Object o : (List<?>) get(m, "ranks")) {
                job.put(restore(job, RankHandOver.asMap(o), channels));
            }
            return job;
        } catch (ClassCastException e) {
            throw new IllegalArgumentException("a handed-over v1 job has a value of another type: " + e.getMessage(), e);
        }
    }

    private static Rank restore(Job job, Map<String, Object> m, ChannelManager channels) {
        int rankId = (Integer) get(m, "rankId");
        Rank r = new Rank(job, rankId, (Integer) get(m, "coreId"), (Integer) get(m, "worldSize"),
                (String) get(m, "program"), RankHandOver.channel(m.get("channel"), job.jobId, rankId, channels));
        RankHandOver.restore(r, m);
        r.dropped = (Long) get(m, "dropped");
        r.held.restore((byte[]) get(m, "held"));
        r.recvs.restore((long[]) get(m, "recvs"));
        return r;
    }

    private static Object get(Map<String, Object> m, String key) {
        return RankHandOver.get(m, key);
    }
}
