package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.slf4j.Logger;

/**
 * EXEC and TERMINATE of v1 (docs/protocol-v1.md) mapped onto the shared rank life
 * ({@link RankLifecycle}): jobs keyed by their host's address, the job's supervision
 * ({@link JobSupervisor}: abort on failure, job timeout, host silence), the answer to EXEC when
 * the rank started or failed, and to TERMINATE once the rank ended and its channel is gone.
 * Receive thread only (the dispatcher's lock), except where a method says otherwise.
 */
final class V1RankRequests {

    private final Logger log;
    private final ChannelManager channels;
    private final LauncherLookup launchers;
    private final Supplier<ProxySettings> settings;
    private final Executor launchExecutor;
    private final RelayQueue relay;
    private final RankLifecycle lifecycle;
    private final V1Replies answers;
    private final V1DataPath data;
    private final ProxyCounters<ProxyCounter> counters;
    private final RateLimitedLog<ProxyCounter> invalidLog;
    private final JobSupervisor supervisor;
    private final SecureRandom random = new SecureRandom();
    private final Steps steps = new Steps();
    private final Map<InetSocketAddress, Job> jobs;
    private final ArrayDeque<JobInfo> history = new ArrayDeque<>();

    /** The dispatcher's parts this class works with. */
    record Parts(Logger log, ChannelManager channels, LauncherLookup launchers, Supplier<ProxySettings> settings,
                 Executor launchExecutor, ScheduledExecutorService timer, RelayQueue relay, RankLifecycle lifecycle,
                 V1Replies answers, V1DataPath data, Map<InetSocketAddress, Job> jobs,
                 ProxyCounters<ProxyCounter> counters, RateLimitedLog<ProxyCounter> invalidLog, LongSupplier clock) {
    }

    V1RankRequests(Parts p) {
        this.log = p.log();
        this.channels = p.channels();
        this.launchers = p.launchers();
        this.settings = p.settings();
        this.launchExecutor = p.launchExecutor();
        this.relay = p.relay();
        this.lifecycle = p.lifecycle();
        this.answers = p.answers();
        this.counters = p.counters();
        this.invalidLog = p.invalidLog();
        this.data = p.data();
        this.jobs = p.jobs();
        this.supervisor = new JobSupervisor(p.timer(), relay::post, () -> settings.get().stopGrace(), this::reap,
                p.clock());
    }

    JobSupervisor supervisor() {
        return supervisor;
    }

    void onExec(V1HeaderFlyweight header, int length, InetSocketAddress source, DatagramTransport replies) {
        counters.increment(ProxyCounter.EXEC_REQUESTS);
        int rankId = header.rankId();
        int coreId = header.coreId();
        int worldSize = header.coreCount();
        if (worldSize < 2) {
            rejectExec(replies, source, rankId, coreId, worldSize, MpiErrors.ERR_ARG,
                    "world size " + worldSize + " is less than 2");
            return;
        }
        if (rankId < 1 || rankId >= worldSize) {
            rejectExec(replies, source, rankId, coreId, worldSize, MpiErrors.ERR_RANK,
                    "rank " + rankId + " is not in 1.." + (worldSize - 1));
            return;
        }
        ExecCommand command;
        try {
            command = ExecCommand.parse(header.buffer(), header.payloadOffset(), length - HEADER_LENGTH);
        } catch (IllegalArgumentException e) {
            rejectExec(replies, source, rankId, coreId, worldSize, MpiErrors.ERR_ARG, e.getMessage());
            return;
        }
        Job job = jobs.get(source);
        if (job != null && job.failedWithoutLiveRank()) {
            retire(job);
            job = null;
        }
        if (job != null) {
            JobSupervisor.onHostHeard(job, supervisor.now());
        }
        Rank existing = job != null ? job.rank(rankId) : null;
        if (existing != null) {
            counters.increment(ProxyCounter.EXEC_DUPLICATE);
            if (existing.phase == Rank.Phase.FAILED) {
                refusedAgain(source, existing);
            }
            if (existing.execResult >= 0) {
                replyExec(replies, existing);
            }
            return;
        }
        ProcessLauncher launcher = launchers.launcher(coreId);
        if (launcher == null) {
            rejectExec(replies, source, rankId, coreId, worldSize, MpiErrors.ERR_IO, "no launcher for "
                    + (coreId == 0 ? "the local core" : "core " + coreId) + " is available");
            return;
        }
        boolean newJob = job == null;
        if (newJob) {
            long jobId = newJobId();
            job = new Job(jobId, source, Instant.now(), settings.get().logDirectory().resolve("job-" + Job.hex(jobId)));
        }
        RankChannel channel;
        try {
            channel = channels.open(job.jobId, rankId);
        } catch (IOException | RuntimeException e) {
            rejectExec(replies, source, rankId, coreId, worldSize, MpiErrors.ERR_IO,
                    "cannot create the channel of rank " + rankId + ": " + e.getMessage());
            if (newJob) {
                releaseQuietly(job.jobId);
            }
            return;
        }
        if (newJob) {
            jobs.put(source, job);
            supervisor.onJobCreated(job, supervisor.now());
            counters.increment(ProxyCounter.JOBS_CREATED);
            log.info("job {} created for {}", Job.hex(job.jobId), Job.ownerText(source));
        }
        Rank rank = new Rank(job, rankId, coreId, worldSize, command.program(), channel);
        job.put(rank);
        LaunchRequest launch = new LaunchRequest(job.jobId, rankId, worldSize, coreId, command.program(),
                command.args(), channel.path(), Map.of(), job.logDirectory);
        try {
            relay.execRepliesVia(replies);
            launchExecutor.execute(() -> lifecycle.launch(launcher, launch, rank, steps));
        } catch (RejectedExecutionException e) {
            lifecycle.notStarted(replies, rank, "the proxy is shutting down", steps);
        }
    }

    /**
     * Ends a job none of whose ranks runs any more after one failed, without replies: its host,
     * retrying from the same address, starts a new job with its next EXEC.
     */
    private void retire(Job job) {
        log.info("job {} of {} has failed and has no live rank: its host's new EXEC starts a new job",
                Job.hex(job.jobId), Job.ownerText(job.owner));
        for (Rank rank : job.ranks()) {
            remove(rank);
        }
    }

    /** Logs (rate-limited) that an EXEC repeating a failed rank of a job with live ranks gets the old failure. */
    private void refusedAgain(InetSocketAddress source, Rank failed) {
        counters.increment(ProxyCounter.EXEC_REJECTED);
        if (invalidLog.permit(ProxyCounter.EXEC_REJECTED)) {
            log.warn("EXEC of rank {} from {} refused with {}: rank {} of job {} failed already ({}) and the job still"
                    + " has live ranks; TERMINATE them to start again ({} similar lines suppressed)", failed.rankId,
                    Job.ownerText(source), MpiErrors.name(failed.execResult), failed.rankId, Job.hex(failed.job.jobId),
                    failed.execReason, invalidLog.takeSuppressed(ProxyCounter.EXEC_REJECTED));
        }
    }

    void onTerminate(V1HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        int rankId = header.rankId();
        if (rankId == 0) {
            // rank 0 is the host itself, never a proxy's: the launcher's probe (is a proxy there?)
            counters.increment(ProxyCounter.PROBES);
            answers.set(OP_TERMINATE, MpiErrors.ERR_RANK, 0, header.coreId(), 0, 0);
            answers.send(replies, HEADER_LENGTH, source);
            return;
        }
        counters.increment(ProxyCounter.TERMINATE_REQUESTS);
        Rank rank = data.rankOf(source, rankId);
        if (rank == null) {
            counters.increment(ProxyCounter.TERMINATE_UNKNOWN);
            answers.set(OP_TERMINATE, MpiErrors.ERR_RANK, rankId, header.coreId(), 0, 0);
            answers.send(replies, HEADER_LENGTH, source);
            return;
        }
        if (rank.terminateRequested) {
            return;
        }
        lifecycle.terminate(replies, rank, false, steps);
    }

    // ------------------------------------------------------------------ launches and exits

    /** What v1 does at each step of a rank's life. */
    private final class Steps implements RankLifecycle.Steps<Rank> {
        @Override
        public void started(DatagramTransport replies, Rank rank) {
            replyExec(replies, rank);
            supervisor.onRankStarted(rank);
        }

        @Override
        public void failed(DatagramTransport replies, Rank rank) {
            lifecycle.closeChannel(rank);
            replyExec(replies, rank);
            supervisor.onRankFailed(rank);
        }

        @Override
        public void exited(DatagramTransport replies, Rank rank) {
            supervisor.onRankExited(rank);
            data.dropHeld(rank);
        }

        @Override
        public void finish(DatagramTransport replies, Rank rank) {
            V1RankRequests.this.finish(replies, rank);
        }

        @Override
        public boolean waits(Rank rank) {
            return !rank.recvs.isEmpty();
        }

        @Override
        public void activate(Rank rank) {
            data.activate(rank);
        }
    }

    /** Removes the rank's channel and, with the last rank, the job's directory; then replies to TERMINATE. */
    private void finish(DatagramTransport replies, Rank rank) {
        data.serveToTheEnd(rank, replies);
        boolean failed = rank.phase == Rank.Phase.FAILED;
        // the reply promises that the rank's files are gone: remove first, then answer
        remove(rank);
        answers.set(OP_TERMINATE, failed ? rank.execResult : MpiErrors.SUCCESS, rank.rankId, rank.coreId, 0,
                failed ? 0 : rank.exitStatus & 0xffffffffL);
        answers.send(replies, HEADER_LENGTH, rank.job.owner);
    }

    private void remove(Rank rank) {
        lifecycle.closeChannel(rank);
        rank.removed = true;
        rank.held.clear();
        rank.recvs.clear();
        Job job = rank.job;
        job.remove(rank);
        if (job.isEmpty()) {
            job.ended = true;
            supervisor.onJobFinished(job);
            jobs.remove(job.owner, job);
            releaseQuietly(job.jobId);
            counters.increment(ProxyCounter.JOBS_FINISHED);
            history.addLast(job.info());
            while (history.size() > V1Dispatcher.HISTORY_SIZE) {
                history.removeFirst();
            }
            log.info("job {} of {} finished", Job.hex(job.jobId), Job.ownerText(job.owner));
        }
    }

    /** Removes the job's ended ranks without a TERMINATE (ranks still running go once they end). */
    private void reap(DatagramTransport replies, Job job) {
        for (Rank rank : job.ranks()) {
            if (rank.isDone() && !rank.removed) {
                finish(replies, rank);
            }
        }
    }

    private void releaseQuietly(long jobId) {
        ChannelCleanup.release(channels, jobId);
    }

    // ------------------------------------------------------------------ replies

    private void replyExec(DatagramTransport replies, Rank rank) {
        int length = HEADER_LENGTH;
        answers.set(OP_EXEC, rank.execResult, rank.rankId, rank.coreId, rank.worldSize, 0);
        if (rank.execResult != MpiErrors.SUCCESS && rank.execReason != null) {
            length += answers.putReason(rank.execReason);
        }
        answers.send(replies, length, rank.job.owner);
    }

    private void rejectExec(DatagramTransport replies, InetSocketAddress source, int rankId, int coreId,
                            int worldSize, int result, String reason) {
        counters.increment(ProxyCounter.EXEC_REJECTED);
        if (invalidLog.permit(ProxyCounter.EXEC_REJECTED)) {
            log.warn("EXEC of rank {} from {} refused with {}: {} ({} similar lines suppressed)", rankId,
                    Job.ownerText(source), MpiErrors.name(result), reason,
                    invalidLog.takeSuppressed(ProxyCounter.EXEC_REJECTED));
        }
        answers.set(OP_EXEC, result, rankId, coreId, worldSize, 0);
        answers.send(replies, HEADER_LENGTH + answers.putReason(reason), source);
    }

    private long newJobId() {
        while (true) {
            long id = random.nextLong() & Long.MAX_VALUE;
            if (id != 0 && !isLiveJobId(id)) {
                return id;
            }
        }
    }

    private boolean isLiveJobId(long id) {
        for (Job job : jobs.values()) {
            if (job.jobId == id) {
                return true;
            }
        }
        return false;
    }


    // ------------------------------------------------------------------ the dispatcher's lock, any thread

    /** @param into gets the live jobs' and the recently finished jobs' descriptions */
    void describe(List<JobInfo> into) {
        into.addAll(history);
        for (Job job : jobs.values()) {
            into.add(job.info());
        }
    }

    /**
     * Hands every job over to the next revision of the proxy ({@link HandOver}): each as plain
     * values, its ranks running, its channels open, its job directory and ledger record kept.
     * This instance forgets them.
     *
     * @return the jobs, then the recently finished jobs' descriptions
     */
    List<Map<String, Object>> handOver() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Job job : jobs.values()) {
            JobSupervisor.forget(job);
            for (Rank rank : job.ranks()) {
                if (rank.terminateTimer != null) {
                    rank.terminateTimer.cancel(false);
                    rank.terminateTimer = null;
                }
            }
            out.add(V1HandOver.export(job));
        }
        jobs.clear();
        return out;
    }

    /** @return the recently finished jobs' descriptions, oldest first */
    List<JobInfo> history() {
        return new ArrayList<>(history);
    }

    /**
     * Takes over the jobs a previous revision handed over: their ranks' exits are watched, their
     * held SENDs and queued RECVs are served, their timers armed again. A job that cannot be
     * restored (a value of another type: the api bundle was refreshed in between) is stopped:
     * its rank processes are killed by pid.
     *
     * @param exported what {@link #handOver()} gave
     * @param finished the recently finished jobs' descriptions that came with them
     * @return the ids of the jobs taken over
     */
    Set<Long> adopt(List<?> exported, List<?> finished) {
        for (Object info : finished) {
            if (info instanceof JobInfo) {
                history.addLast((JobInfo) info);
            }
        }
        Set<Long> adopted = new HashSet<>();
        long now = supervisor.now();
        for (Object o : exported) {
            Map<String, Object> m = RankHandOver.asMap(o);
            Job job;
            try {
                job = V1HandOver.restore(m, channels);
            } catch (IllegalArgumentException e) {
                log.error("cannot take over v1 job {} from the previous revision of the proxy ({}); stopping its ranks",
                        Job.hex(RankHandOver.jobId(m)), e.getMessage());
                log.error("v1 job {}: ranks stopped, pids {}", Job.hex(RankHandOver.jobId(m)),
                        RankHandOver.stopAll(m, settings.get().stopGrace()));
                continue;
            }
            jobs.put(job.owner, job);
            adopted.add(job.jobId);
            supervisor.onJobAdopted(job, now);
            for (Rank rank : job.ranks()) {
                lifecycle.adopt(rank, steps);
                if (rank.hasPendingWork()) {
                    data.activate(rank);
                }
            }
            log.info("job {} of {} taken over from the previous revision of the proxy: {} ranks", Job.hex(job.jobId),
                    Job.ownerText(job.owner), job.ranks().size());
        }
        return adopted;
    }

    /** Stops every rank and removes it with its channel and, with the last, its job. */
    void closeAll() {
        for (Job job : new ArrayList<>(jobs.values())) {
            for (Rank rank : job.ranks()) {
                if (rank.process != null && !rank.isDone()) {
                    rank.process.stop(settings.get().stopGrace());
                }
                remove(rank);
            }
        }
    }
}
