package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.protocol.MpiErrors;

/**
 * What every rank is ({@link LiveRank}) as plain values, and back, whichever protocol its host
 * speaks: the part of a job's hand-over ({@link HandOver}) that {@link V1HandOver} and
 * {@link V2HandOver} share. Only JDK types and {@code org.mpiproxy.api} handles (the rank's
 * channel and process), since two revisions of the proxy share no class of this bundle; the
 * handles also in JDK types (the channel's path, the process's exit future, stop and liveness as
 * functions), for a taker whose api classes are another revision's ({@code bundle:refresh} in
 * between).
 */
final class RankHandOver {

    private RankHandOver() {
    }

    /** Puts what every rank is into {@code m}. */
    static void export(LiveRank r, Map<String, Object> m) {
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
    }

    /**
     * Sets what every rank is from {@code m} on a rank made over the handed-over channel. A rank
     * that was still starting (its launch did not finish before the hand-over) comes back failed,
     * so that its host's repeated EXEC learns it.
     *
     * @throws ClassCastException when a value is of another type
     */
    static void restore(LiveRank r, Map<String, Object> m) {
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
        if (r.phase == Rank.Phase.STARTING || (r.process == null && !r.isDone())) {
            r.phase = Rank.Phase.FAILED;
            r.execResult = MpiErrors.ERR_IO;
            r.execReason = "the proxy was updated while the rank started";
        }
    }

    /**
     * @return the handed-over channel mapped again through the channel manager in force: the
     *         handed-over object may be of a bundle revision that a refresh has since replaced,
     *         whose code can no longer load what it needs; the rings themselves are shared memory
     *         and stay as they are
     */
    static RankChannel channel(Object handedOver, long jobId, int rankId, ChannelManager channels) {
        if (handedOver == null) {
            return null;
        }
        try {
            return channels.reopen(jobId, rankId);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("cannot map the channel of rank " + rankId + " again: " + e.getMessage(), e);
        }
    }

    /**
     * @return the handed-over process, driven through its JDK-typed parts when it is of another api
     *         revision; either way guarded: a process of a refreshed process bundle may fail to load
     *         a class it needs, and is then stopped through the JDK ({@link #stopByPid})
     */
    @SuppressWarnings("unchecked")
    private static RankProcess process(Map<String, Object> m) {
        Object p = m.get("process");
        if (p == null) {
            return null;
        }
        long pid = (Long) get(m, "pid");
        int coreId = (Integer) get(m, "coreId");
        CompletableFuture<Integer> exit;
        Consumer<Duration> stop;
        BooleanSupplier alive;
        if (p instanceof RankProcess) {
            RankProcess same = (RankProcess) p;
            exit = same.onExit();
            stop = same::stop;
            alive = same::isAlive;
        } else {
            exit = (CompletableFuture<Integer>) get(m, "exit");
            stop = (Consumer<Duration>) get(m, "stop");
            alive = (BooleanSupplier) get(m, "alive");
        }
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
                try {
                    return alive.getAsBoolean();
                } catch (LinkageError e) {
                    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
                }
            }

            @Override
            public CompletableFuture<Integer> onExit() {
                return exit;
            }

            @Override
            public void stop(Duration grace) {
                try {
                    stop.accept(grace);
                } catch (LinkageError e) {
                    stopByPid(pid, grace);
                }
            }
        };
    }

    /**
     * Stops a process and its descendants through the JDK: SIGTERM now, SIGKILL after the grace.
     * For a handle whose own code cannot run any more (its bundle was refreshed away); its
     * process group is not signalled as a whole.
     */
    static void stopByPid(long pid, Duration grace) {
        ProcessHandle.of(pid).ifPresent(p -> {
            java.util.List<ProcessHandle> tree = p.descendants().toList();
            p.destroy();
            tree.forEach(ProcessHandle::destroy);
            CompletableFuture.delayedExecutor(Math.max(0, grace.toMillis()), java.util.concurrent.TimeUnit.MILLISECONDS)
                    .execute(() -> {
                        p.destroyForcibly();
                        tree.forEach(ProcessHandle::destroyForcibly);
                    });
        });
    }

    /**
     * Stops the ranks of a job that cannot be restored, through their own handles: the JDK-typed
     * stop, or {@code stop} of the {@code RankProcess} interface they implement, found by name,
     * since it may be another revision's (nothing is killed by a bare pid, which may have been
     * reused).
     *
     * @param m an exported job, of either protocol
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
            Object pid = ((Map<?, ?>) o).get("pid");
            try {
                if (stopper instanceof Consumer) {
                    ((Consumer<Duration>) stopper).accept(grace);
                    stopped.add((Long) pid);
                    continue;
                }
                Method stop = stopMethod(process.getClass());
                if (stop != null) {
                    stop.invoke(process, grace);
                    stopped.add((Long) pid);
                }
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                // the handle's own code cannot run (its bundle was refreshed away): through the JDK
                if (pid instanceof Long) {
                    stopByPid((Long) pid, grace);
                    stopped.add((Long) pid);
                }
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

    /** Stops the ranks of every job in a list of exported jobs (a hand-over nobody took). */
    static void stopJobs(Object jobs, Duration grace) {
        for (Object job : jobs instanceof List ? (List<?>) jobs : List.of()) {
            if (job instanceof Map) {
                stopAll(asMap(job), grace);
            }
        }
    }

    /** @return the ids of the exported jobs in {@code jobs}, a list */
    static Set<Long> jobIds(Object jobs) {
        Set<Long> ids = new HashSet<>();
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

    /** @throws IllegalArgumentException when {@code key} has no value */
    static Object get(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null) {
            throw new IllegalArgumentException("a handed-over job has no " + key);
        }
        return v;
    }
}
