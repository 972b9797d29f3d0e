package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.process.AdoptedRankProcess;
import org.mpiproxy.process.KeeperFiles;
import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.ProcessGroup;
import org.mpiproxy.process.RankFifos;
import org.mpiproxy.process.RankOutput;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jobs that outlive the JVM: a restart of the node ({@code bin/stop} and {@code bin/start}, an
 * upgrade of the distribution) keeps them, on a node run under the node keeper
 * ({@link KeeperFiles}) with {@code restart.survive.seconds} above 0.
 * <p>
 * At an orderly shutdown {@link #leave} does what a hand-over to the next revision does
 * ({@link ProtocolFront#handOver()}), but into a file, {@value #FILE} in the state directory, and
 * leaves the ranks running: the keeper becomes their parent when the JVM ends. Before that, the
 * ranks' output readers are detached ({@link RankOutput#detachAll}: what they had not read stays
 * in the ranks' FIFOs, the lines they had begun go into the file), a holder process keeps the
 * FIFOs open so that the output of a rank that ends during the restart is kept, and every rank's
 * exit that this JVM still sees is written where the keeper writes those it sees
 * ({@code exit-<pid>-<start time>}).
 * <p>
 * When the file cannot be written (the state directory full or unusable), the ranks are stopped
 * after all, as the log says, and the stop waits for them: their SIGKILL after the grace comes from
 * this JVM ({@link RankStops}). So does a shutdown that keeps nothing, such as one whose keeper no
 * longer runs (killed: nothing would take the ranks when the JVM ends).
 * <p>
 * The next proxy's {@link #take} reads the file (and removes it), turns every rank back into a
 * process handle ({@link AdoptedRankProcess}: its exit from {@code /proc} and the keeper's record,
 * its output read on from its FIFOs), names itself the owner of the old keepers' orphans (the
 * ranks' lifelines follow it) and stops the holder. From there the jobs go the way handed-over
 * jobs go. What does not outlive the JVM: the PMI server (MPICH ranks that still need it after the
 * restart fail), v2's replay caches (they start empty) and replies not yet sent (hosts repeat
 * their requests). Times measured with {@code System.nanoTime} restart at the new JVM's start. A
 * file that cannot be read ({@link RestartStateFile}: too large, damaged, of another version) is
 * set aside, the ranks its jobs left running are found by the {@link RankLedger} and stopped, and
 * the node starts without them.
 */
final class NodeRestart {

    /** The state file's name in the state directory. */
    static final String FILE = "restart.state";
    /** Marks a rank whose process is to be adopted. */
    private static final String ADOPT = "adopt";
    /** Keys of {@code System.nanoTime} values, 0 meaning none. */
    private static final Set<String> NANOS = Set.of("lastHeardNanos", "stallNanos", "emptySince");

    private static final Logger LOG = LoggerFactory.getLogger(NodeRestart.class);

    private NodeRestart() {
    }

    /**
     * What a starting proxy takes over: a previous revision's hand-over in this JVM
     * ({@link HandOver}), else the jobs a previous start of the node left.
     *
     * @return the state, or {@code null} when there is none
     */
    static Map<String, Object> takeAny(ProxyConfig config, RankOutputListener output) {
        Map<String, Object> state = HandOver.take();
        return state != null ? state : take(ProxyConfigs.stateDirectory(config), output);
    }

    /**
     * What a stopping proxy does with its jobs: when Karaf stops, they are kept for the next start
     * when {@link #keepsJobs} and stopped otherwise, the stop waiting for the ranks' exits (the JVM
     * ends next); else (an update, a restart of the component) they are handed over to the next
     * revision unless {@code handover.seconds} is 0.
     */
    static void stop(ProtocolFront front, ProxyConfig config, boolean karafStops) {
        if (karafStops && keepsJobs(config)) {
            leave(front::handOver, config, ProxyConfigs.stateDirectory(config));
        } else if (karafStops) {
            Path keeper = KeeperFiles.own();
            if (keeper != null && config.restart_survive_seconds() > 0) {
                LOG.error("the node keeper (pid {}) no longer runs, so no job can outlive this JVM; stopping every"
                        + " rank", KeeperFiles.keeperPid(keeper));
            }
            RankStops.closeAndWait(front, Duration.ofSeconds(config.stop_grace_seconds()));
        } else if (config.handover_seconds() == 0) {
            front.close();
        } else {
            HandOver.leave(front.handOver(), Duration.ofSeconds(config.handover_seconds()),
                    Duration.ofSeconds(config.stop_grace_seconds()));
        }
    }

    /**
     * @return whether an orderly shutdown keeps the jobs: under a keeper that still runs (one killed
     *         could not take the ranks), with a window above 0
     */
    static boolean keepsJobs(ProxyConfig config) {
        Path keeper = KeeperFiles.own();
        return keeper != null && config.restart_survive_seconds() > 0
                && KeeperPolicy.runsUnder(KeeperFiles.keeperPid(keeper), ProcessHandle.current());
    }

    /**
     * Saves the running jobs for the next proxy and leaves their ranks running. When they cannot be
     * saved, the ranks are stopped as a shutdown would.
     *
     * @param handOver the protocols' hand-over ({@link ProtocolFront#handOver()})
     * @param config   the configuration in force
     * @param stateDir the state directory
     */
    static void leave(Supplier<Map<String, Object>> handOver, ProxyConfig config, Path stateDir) {
        Duration grace = Duration.ofSeconds(config.stop_grace_seconds());
        long holder = -1;
        List<Path> fifos = RankOutput.fifos();
        if (!fifos.isEmpty()) {
            try {
                holder = RankFifos.hold(fifos, config.restart_survive_seconds() + config.stop_grace_seconds() + 60L);
            } catch (IOException e) {
                LOG.warn("cannot keep the ranks' output pipes open over the restart ({}): the output of a rank that"
                        + " ends meanwhile is lost", e.toString());
            }
        }
        Map<String, byte[]> begun = RankOutput.detachAll(Duration.ofSeconds(5));
        Map<String, Object> state = handOver.get();
        // the ranks' handles, before prepare() turns them into what the file keeps
        List<Map<String, Object>> handles = new ArrayList<>();
        for (Map<String, Object> rank : ranks(state)) {
            if (rank.get("process") != null) {
                handles.add(new HashMap<>(rank));
            }
        }
        Path keeper = KeeperFiles.own();
        int ranks = prepare(state, keeper);
        state.put("begun", new HashMap<>(begun));
        state.put("holder", holder > 0 ? new long[] {holder, startTime(holder)} : null);
        state.put("savedNanos", System.nanoTime());
        try {
            StateCodec codec = write(state, stateDir);
            LOG.info("Karaf stops: {} job(s) with {} rank(s) left running for the next start (restart.survive.seconds"
                    + " = {}); not kept: {}", HandOver.jobIds(state).size(), ranks, config.restart_survive_seconds(),
                    codec.dropped().isEmpty() ? "nothing" : codec.dropped());
        } catch (IOException | RuntimeException e) {
            LOG.error("cannot save the running jobs for the next start in {} ({}); stopping their {} rank(s)",
                    stateDir, RestartStateFile.cause(e), handles.size());
            stopAfterAll(handles, holder, keeper, grace);
        }
    }

    /**
     * Stops ranks that were to outlive the JVM and waits for them ({@link RankStops}); the keeper
     * is told to keep nothing (which may fail too, on a full file system).
     */
    private static void stopAfterAll(List<Map<String, Object>> handles, long holder, Path keeper, Duration grace) {
        if (keeper != null) {
            try {
                KeeperFiles.writePolicy(keeper, 0, grace.toSeconds());
            } catch (IOException e) {
                LOG.debug("cannot tell the node keeper to keep nothing: {}", e.toString());
            }
        }
        if (holder > 0) {
            stopHolder(holder, startTime(holder));
        }
        RankStops.stopAndWait(handles, grace);
    }

    /**
     * Writes a prepared state ({@link #prepare}) to {@value #FILE} in the state directory, atomically.
     *
     * @return the codec, which names what it left out
     */
    static StateCodec write(Map<String, Object> state, Path stateDir) throws IOException {
        return RestartStateFile.write(state, stateDir, FILE);
    }

    /**
     * Marks every rank for adoption with its start time, and has this JVM record the exits it still
     * sees where the keeper records those it sees.
     *
     * @return how many ranks run
     */
    static int prepare(Map<String, Object> state, Path keeper) {
        int running = 0;
        for (Map<String, Object> rank : ranks(state)) {
            Object process = rank.get("process");
            if (process == null) {
                continue;
            }
            long pid = (Long) rank.get("pid");
            @SuppressWarnings("unchecked")
            CompletableFuture<Integer> exit = (CompletableFuture<Integer>) rank.get("exit");
            if (exit != null && exit.isDone() && !exit.isCompletedExceptionally()) {
                rank.put("exited", exit.join());
            } else {
                long start = startTime(pid);
                rank.put("startTime", start);
                running++;
                if (exit != null && keeper != null && start >= 0) {
                    exit.thenAccept(status -> {
                        try {
                            KeeperFiles.writeExit(keeper, pid, start, status);
                        } catch (IOException e) {
                            // the keeper may still see it
                        }
                    });
                }
            }
            rank.put("process", ADOPT);
            rank.remove("exit");
            rank.remove("stop");
            rank.remove("alive");
            if (rank.get("channel") != null) {
                rank.put("channel", ADOPT);
            }
        }
        return running;
    }

    /**
     * Takes the jobs a previous JVM of the node left, once: the file is removed.
     *
     * @param stateDir the state directory
     * @param output   receives the adopted ranks' output
     * @return the state as a hand-over gives it, or {@code null} when there is none (or it is unreadable:
     *         then it is set aside and the ranks the ledger names are stopped)
     */
    static Map<String, Object> take(Path stateDir, RankOutputListener output) {
        return take(stateDir, output, RestartStateFile.maxBytes());
    }

    /** As {@link #take(Path, RankOutputListener)}, reading no file larger than {@code maxBytes}. */
    static Map<String, Object> take(Path stateDir, RankOutputListener output, long maxBytes) {
        Path file = stateDir.resolve(FILE);
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        Map<String, Object> state;
        try {
            state = RestartStateFile.read(file, maxBytes);
        } catch (IOException | RuntimeException e) {
            setAside(file, stateDir, e);
            return null;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("cannot remove {}: {}", file, e.toString());
        }
        long shift = System.nanoTime() - (state.get("savedNanos") instanceof Long l ? l : System.nanoTime());
        shiftNanos(state, shift);
        Path keeper = KeeperFiles.own();
        Path keepers = keeper != null ? keeper.getParent() : stateDir;
        @SuppressWarnings("unchecked")
        Map<String, byte[]> begun = state.get("begun") instanceof Map<?, ?> m ? (Map<String, byte[]>) m : Map.of();
        int adopted = adopt(state, keepers, output, begun);
        claimOrphans(keepers, keeper);
        if (state.get("holder") instanceof long[] holder && holder.length == 2) {
            stopHolder(holder[0], holder[1]);
        }
        LOG.info("took over {} job(s) with {} running rank(s) from the previous start", HandOver.jobIds(state).size(),
                adopted);
        return state;
    }

    /**
     * A state file that cannot be read: renamed aside (removed when even that fails), and the ranks
     * its jobs left running, as the ledger records them, stopped; one line says it all.
     */
    private static void setAside(Path file, Path stateDir, Exception cause) {
        String done;
        try {
            done = "set aside as " + RestartStateFile.setAside(file, Instant.now()).getFileName();
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(file);
                done = "removed, since it cannot be set aside (" + RestartStateFile.cause(e) + ")";
            } catch (IOException again) {
                done = "left in place, since it can be neither set aside nor removed ("
                        + RestartStateFile.cause(again) + ")";
            }
        }
        int stopped = new RankLedger(stateDir).stopRecorded();
        LOG.error("cannot read the jobs the previous start left in {} ({}): {}; the {} rank process group(s) the"
                + " ledger records as running are stopped and the node starts without those jobs", file,
                RestartStateFile.cause(cause), done, stopped);
    }

    private static int adopt(Map<String, Object> state, Path keepers, RankOutputListener output,
                             Map<String, byte[]> begun) {
        int running = 0;
        for (Map<String, Object> job : jobs(state)) {
            long jobId = RankHandOver.jobId(job);
            Path logDirectory = job.get("logDirectory") instanceof Path p ? p : null;
            for (Map<String, Object> rank : ranks(job)) {
                if (!ADOPT.equals(rank.get("process"))) {
                    continue;
                }
                long pid = (Long) rank.get("pid");
                int coreId = (Integer) rank.get("coreId");
                if (rank.get("exited") instanceof Integer status) {
                    ended(rank, status);
                } else if (rank.get("startTime") instanceof Long start && start >= 0 && logDirectory != null) {
                    Path fifos = RankFifos.directory(logDirectory,
                            rank.get("channelPath") instanceof Path c ? c.toString() : null);
                    AdoptedRankProcess process = AdoptedRankProcess.adopt(pid, start, coreId, keepers, logDirectory,
                            fifos, jobId, (Integer) rank.get("rankId"), output, begun);
                    process.onExit().thenRun(() -> {
                        if (!process.statusKnown()) {
                            LOG.warn("job {} rank {} (pid {}) ended while no proxy ran and no node keeper recorded how;"
                                    + " reported with status {}", Job.hex(jobId), rank.get("rankId"), pid,
                                    AdoptedRankProcess.UNKNOWN_STATUS);
                        }
                    });
                    rank.put("process", process);
                    running++;
                } else {
                    LOG.warn("job {} rank {}: its process could not be identified at the shutdown; reported as ended",
                            Job.hex(jobId), rank.get("rankId"));
                    ended(rank, AdoptedRankProcess.UNKNOWN_STATUS);
                }
            }
        }
        return running;
    }

    /** Makes this JVM the one that answers for the orphans of every other keeper still running. */
    private static void claimOrphans(Path keepers, Path own) {
        long self = ProcessHandle.current().pid();
        long start = startTime(self);
        for (Path keeper : KeeperFiles.keepers(keepers)) {
            long pid = KeeperFiles.keeperPid(keeper);
            if (keeper.equals(own) || pid <= 0 || !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                continue;
            }
            try {
                KeeperFiles.writeOwner(keeper, self, start);
            } catch (IOException e) {
                LOG.warn("cannot tell the node keeper {} that this proxy took its ranks over: {}", pid, e.toString());
            }
        }
    }

    private static void stopHolder(long pid, long start) {
        try {
            if (pid > 1 && ProcStat.isRunning(pid, start)) {
                ProcessGroup.signal(pid, ProcessGroup.Signal.TERM);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("stopping the output holder {}", pid, e);
        }
    }

    /**
     * Makes a rank that ended before the shutdown a process of JDK-typed parts (the way
     * {@link RankHandOver} takes a handle of another revision): its exit done with its status.
     */
    private static void ended(Map<String, Object> rank, int status) {
        rank.put("exit", CompletableFuture.completedFuture(status));
        rank.put("stop", (java.util.function.Consumer<Duration>) grace -> { });
        rank.put("alive", (java.util.function.BooleanSupplier) () -> false);
    }

    @SuppressWarnings("unchecked")
    private static void shiftNanos(Object value, long shift) {
        if (value instanceof Map<?, ?> map) {
            for (Map.Entry<Object, Object> e : ((Map<Object, Object>) map).entrySet()) {
                if (NANOS.contains(e.getKey()) && e.getValue() instanceof Long l && l != 0) {
                    e.setValue(l + shift);
                } else {
                    shiftNanos(e.getValue(), shift);
                }
            }
        } else if (value instanceof List<?> list) {
            list.forEach(o -> shiftNanos(o, shift));
        }
    }

    private static List<Map<String, Object>> jobs(Map<String, Object> state) {
        List<Map<String, Object>> jobs = new ArrayList<>();
        for (Object o : state.get("jobs") instanceof List<?> l ? l : List.of()) {
            jobs.add(RankHandOver.asMap(o));
        }
        if (state.get("v2") instanceof Map<?, ?> v2) {
            for (Object o : v2.get("jobs") instanceof List<?> l ? l : List.of()) {
                jobs.add(RankHandOver.asMap(o));
            }
        }
        return jobs;
    }

    private static List<Map<String, Object>> ranks(Map<String, Object> stateOrJob) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        List<Map<String, Object>> jobs = stateOrJob.containsKey("ranks") ? List.of(stateOrJob) : jobs(stateOrJob);
        for (Map<String, Object> job : jobs) {
            for (Object o : job.get("ranks") instanceof List<?> l ? l : List.of()) {
                ranks.add(RankHandOver.asMap(o));
            }
        }
        return ranks;
    }

    private static long startTime(long pid) {
        try {
            Optional<ProcStat> stat = ProcStat.read(pid);
            return stat.map(ProcStat::startTime).orElse(-1L);
        } catch (IOException e) {
            return -1;
        }
    }
}
