package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.protocol.MpiErrors;

/**
 * A v1 job as plain values, and back: what one revision of the proxy hands the next
 * ({@link HandOver}). Only JDK types and {@code org.mpiproxy.api} handles (the rank's channel and
 * process), since the two revisions share no class of this bundle; the handles also in JDK
 * types (the channel's path, the process's exit future, stop and liveness as functions), for a
 * taker whose api classes are another revision's ({@code bundle:refresh} in between). Timers are not handed over:
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
        if (r.channel != null) {
            m.put("channelPath", r.channel.path());
        }
        RankProcess p = r.process;
        m.put("process", p);
        m.put("pid", p != null ? p.pid() : -1L);
        if (p != null) {
            // the same process in JDK types, for a taker whose api classes are another revision's
            m.put("exit", p.onExit());
            m.put("stop", (Consumer<Duration>) p::stop);
            m.put("alive", (BooleanSupplier) p::isAlive);
        }
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
                job.put(restore(job, asMap(o), channels));
            }
            return job;
        } catch (ClassCastException e) {
            throw new IllegalArgumentException("a handed-over v1 job has a value of another type: " + e.getMessage(), e);
        }
    }

    private static Rank restore(Job job, Map<String, Object> m, ChannelManager channels) {
        int rankId = (Integer) get(m, "rankId");
        Rank r = new Rank(job, rankId, (Integer) get(m, "coreId"), (Integer) get(m, "worldSize"),
                (String) get(m, "program"), channel(m.get("channel"), job.jobId, rankId, channels));
        r.process = process(m);
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
     * @return the handed-over channel; one of another api revision (a refresh came in between) is
     *         mapped again by its path through the channel manager in force
     */
    private static RankChannel channel(Object handedOver, long jobId, int rankId, ChannelManager channels) {
        if (handedOver == null || handedOver instanceof RankChannel) {
            return (RankChannel) handedOver;
        }
        try {
            return channels.open(jobId, rankId);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("cannot map the channel of rank " + rankId + " again: " + e.getMessage(), e);
        }
    }

    /** @return the handed-over process; one of another api revision is driven through its JDK-typed parts */
    @SuppressWarnings("unchecked")
    private static RankProcess process(Map<String, Object> m) {
        Object p = m.get("process");
        if (p == null || p instanceof RankProcess) {
            return (RankProcess) p;
        }
        long pid = (Long) get(m, "pid");
        int coreId = (Integer) get(m, "coreId");
        CompletableFuture<Integer> exit = (CompletableFuture<Integer>) get(m, "exit");
        Consumer<Duration> stop = (Consumer<Duration>) get(m, "stop");
        BooleanSupplier alive = (BooleanSupplier) get(m, "alive");
        return new RankProcess() {
            @Override
            public long pid() {
                return pid;
            }

            @Override
            public int coreId() {
                return coreId;
            }

            @Override
            public boolean isAlive() {
                return alive.getAsBoolean();
            }

            @Override
            public CompletableFuture<Integer> onExit() {
                return exit;
            }

            @Override
            public void stop(Duration grace) {
                stop.accept(grace);
            }
        };
    }

    /**
     * Stops the ranks of a job that cannot be restored, through their own handles: {@code stop}
     * of the {@code RankProcess} interface they implement, found by name, since it may be another
     * revision's (nothing is killed by a bare pid, which may have been reused).
     *
     * @return the pids of the ranks asked to stop
     */
    @SuppressWarnings("unchecked")
    static List<Long> stopAll(Map<String, Object> m, Duration grace) {
        List<Long> stopped = new ArrayList<>();
        Object ranks = m.get("ranks");
        for (Object o : ranks instanceof List ? (List<?>) ranks : List.of()) {
            Object process = o instanceof Map ? ((Map<?, ?>) o).get("process") : null;
            if (process == null) {
                continue;
            }
            Object stopper = ((Map<?, ?>) o).get("stop");
            if (stopper instanceof Consumer) {
                ((Consumer<Duration>) stopper).accept(grace);
                stopped.add((Long) ((Map<?, ?>) o).get("pid"));
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

    /** @return the ids of the jobs in a hand-over ({@link V1Dispatcher#handOver()}'s state) */
    static java.util.Set<Long> jobIds(Map<String, Object> state) {
        java.util.Set<Long> ids = new java.util.HashSet<>();
        Object jobs = state.get("jobs");
        for (Object job : jobs instanceof List ? (List<?>) jobs : List.of()) {
            if (job instanceof Map && ((Map<?, ?>) job).get("jobId") instanceof Long) {
                ids.add((Long) ((Map<?, ?>) job).get("jobId"));
            }
        }
        return ids;
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
