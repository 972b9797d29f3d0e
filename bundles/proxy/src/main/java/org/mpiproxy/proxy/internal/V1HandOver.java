package org.mpiproxy.proxy.internal;

import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A v1 job as plain values, and back: what one revision of the proxy hands the next
 * ({@link HandOver}). Only JDK types and {@code org.mpiproxy.api} handles (the rank's channel and
 * process), since the two revisions share no class of this bundle. Timers are not handed over:
 * the taker arms them again (a TERMINATE's wait starts again).
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
        m.put("rankId", r.rankId);
        m.put("coreId", r.coreId);
        m.put("worldSize", r.worldSize);
        m.put("program", r.program);
        m.put("channel", r.channel);
        m.put("process", r.process);
        m.put("pid", r.process != null ? r.process.pid() : -1L);
        m.put("phase", r.phase.name());
        m.put("exitStatus", r.exitStatus);
        m.put("terminateRequested", r.terminateRequested);
        m.put("stopRequested", r.stopRequested);
        m.put("stopped", r.stopped);
        m.put("execResult", r.execResult);
        m.put("execReason", r.execReason);
        m.put("bytesIn", r.bytesIn);
        m.put("bytesOut", r.bytesOut);
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
    static Job restore(Map<String, Object> m) {
        try {
            Job job = new Job((Long) get(m, "jobId"), (InetSocketAddress) get(m, "owner"), (Instant) get(m, "started"),
                    (Path) get(m, "logDirectory"));
            job.abortOnFailure = (Boolean) get(m, "abortOnFailure");
            job.stopReason = (String) m.get("stopReason");
            job.lastHeardNanos = (Long) get(m, "lastHeardNanos");
            for (Object info : (List<?>) get(m, "finished")) {
                job.finished().add((RankInfo) info);
            }
            for (Object o : (List<?>) get(m, "ranks")) {
                job.put(restore(job, asMap(o)));
            }
            return job;
        } catch (ClassCastException e) {
            throw new IllegalArgumentException("a handed-over v1 job has a value of another type: " + e.getMessage(), e);
        }
    }

    private static Rank restore(Job job, Map<String, Object> m) {
        Rank r = new Rank(job, (Integer) get(m, "rankId"), (Integer) get(m, "coreId"), (Integer) get(m, "worldSize"),
                (String) get(m, "program"), (RankChannel) m.get("channel"));
        r.process = (RankProcess) m.get("process");
        r.phase = Rank.Phase.valueOf((String) get(m, "phase"));
        r.exitStatus = (Integer) get(m, "exitStatus");
        r.terminateRequested = (Boolean) get(m, "terminateRequested");
        r.stopRequested = (Boolean) get(m, "stopRequested");
        r.stopped = (Boolean) get(m, "stopped");
        r.execResult = (Integer) get(m, "execResult");
        r.execReason = (String) m.get("execReason");
        r.bytesIn = (Long) get(m, "bytesIn");
        r.bytesOut = (Long) get(m, "bytesOut");
        r.dropped = (Long) get(m, "dropped");
        r.held.restore((byte[]) get(m, "held"));
        r.recvs.restore((long[]) get(m, "recvs"));
        if (r.phase == Rank.Phase.STARTING || (r.process == null && !r.isDone())) {
            r.phase = Rank.Phase.FAILED;
            r.execResult = MpiErrors.ERR_IO;
            r.execReason = "the proxy was updated while the rank started";
        }
        return r;
    }

    /**
     * Stops the ranks of a job that cannot be restored, through their own handles: {@code stop}
     * of the {@code RankProcess} interface they implement, found by name, since it may be another
     * revision's (nothing is killed by a bare pid, which may have been reused).
     *
     * @return the pids of the ranks asked to stop
     */
    static List<Long> stopAll(Map<String, Object> m, Duration grace) {
        List<Long> stopped = new ArrayList<>();
        Object ranks = m.get("ranks");
        for (Object o : ranks instanceof List ? (List<?>) ranks : List.of()) {
            Object process = o instanceof Map ? ((Map<?, ?>) o).get("process") : null;
            if (process == null) {
                continue;
            }
            try {
                Method stop = stopMethod(process.getClass());
                if (stop != null) {
                    stop.invoke(process, grace);
                    stopped.add((Long) ((Map<?, ?>) o).get("pid"));
                }
            } catch (ReflectiveOperationException | RuntimeException e) {
                // nothing more can be done from here; the lifeline and the ledger's sweep remain
            }
        }
        return stopped;
    }

    private static Method stopMethod(Class<?> type) throws NoSuchMethodException {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                if (i.getName().equals(RankProcess.class.getName())) {
                    return i.getMethod("stop", Duration.class);
                }
            }
        }
        return null;
    }

    /** @return the job id of an exported job, or -1 */
    static long jobId(Map<String, Object> m) {
        return m.get("jobId") instanceof Long ? (Long) m.get("jobId") : -1;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map)) {
            throw new IllegalArgumentException("a handed-over value is not a map: " + o);
        }
        return (Map<String, Object>) o;
    }

    private static Object get(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null) {
            throw new IllegalArgumentException("a handed-over v1 job has no " + key);
        }
        return v;
    }
}
