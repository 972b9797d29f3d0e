package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_PLAIN;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.slf4j.Logger;

/**
 * EXEC and TERMINATE of v2 (docs/protocol-v2.md 5.1, 5.4) mapped onto the shared rank life
 * ({@link RankLifecycle}): checks the request, makes the job and the rank's channel, hands the
 * launch over, answers when the rank started or failed, and answers TERMINATE with the exit
 * status once the rank has ended and its output was acknowledged; finished ranks' answers are
 * kept for repeated requests. Receive thread only (the dispatcher's lock).
 */
final class V2RankRequests {

    /**
     * After a TERMINATE with STOP, the host silence after which the job's waiting output is given
     * up (instead of {@link V2OutputStreams#STALL_NANOS}): a stopped job's launcher may be gone.
     */
    static final long STOPPED_OUTPUT_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    private final Logger log;
    private final LongMap<V2Job> jobs;
    private final ChannelManager channels;
    private final LauncherLookup launchers;
    private final Supplier<ProxySettings> settings;
    private final Supplier<V2Settings> v2;
    private final Executor launchExecutor;
    private final RelayQueue relay;
    private final RankLifecycle lifecycle;
    private final V2OutputStreams output;
    private final V2Replies replies;
    private final V2NodeServices services;
    private final V2StatusReport statusReport;
    private final ProxyCounters<V2Counter> counters;
    private final RateLimitedLog<V2Counter> lines;
    private final V2Credentials credentials;
    private final Steps steps;

    /** The dispatcher's parts this class works with; all used on the receive thread. */
    record Parts(Logger log, LongMap<V2Job> jobs, ChannelManager channels, LauncherLookup launchers,
                 Supplier<ProxySettings> settings, Supplier<V2Settings> v2, Executor launchExecutor, RelayQueue relay,
                 RankLifecycle lifecycle, V2OutputStreams output, V2Replies replies, V2NodeServices services,
                 V2StatusReport statusReport, ProxyCounters<V2Counter> counters, RateLimitedLog<V2Counter> lines,
                 Consumer<V2Rank> activate, V2Credentials credentials) {
    }

    V2RankRequests(Parts p) {
        this.log = p.log();
        this.jobs = p.jobs();
        this.channels = p.channels();
        this.launchers = p.launchers();
        this.settings = p.settings();
        this.v2 = p.v2();
        this.launchExecutor = p.launchExecutor();
        this.relay = p.relay();
        this.lifecycle = p.lifecycle();
        this.output = p.output();
        this.replies = p.replies();
        this.services = p.services();
        this.statusReport = p.statusReport();
        this.counters = p.counters();
        this.lines = p.lines();
        this.credentials = p.credentials();
        this.steps = new Steps(p.activate());
        p.services().limits(() -> v2.get().limits());
    }

    // ------------------------------------------------------------------ EXEC

    void onExec(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport) {
        counters.increment(V2Counter.EXEC_REQUESTS);
        long jobId = header.jobId();
        long rankId = header.rank();
        int coreId = header.core();
        long worldSize = header.argument();
        if (jobId == 0) {
            rejectExec(header, transport, source, MpiErrors.ERR_ARG, "job id 0 is not allowed");
            return;
        }
        if (worldSize < 2 || worldSize > 65535) {
            rejectExec(header, transport, source, MpiErrors.ERR_ARG, "world size " + worldSize + " is not in 2..65535");
            return;
        }
        if (rankId < 1 || rankId >= worldSize) {
            rejectExec(header, transport, source, MpiErrors.ERR_RANK, "rank " + rankId + " is not in 1.."
                    + (worldSize - 1));
            return;
        }
        V2Job job = jobs.get(jobId);
        if (job != null && !job.owner.equals(source)) {
            rejectExec(header, transport, source, MpiErrors.ERR_ARG, "job " + Job.hex(jobId)
                    + " belongs to another host address");
            return;
        }
        V2Rank existing = job != null ? job.rank(rankId) : null;
        if (existing != null || (job != null && job.finished.containsKey((int) rankId))) {
            counters.increment(V2Counter.EXEC_DUPLICATE);
            if (existing != null && existing.execResult >= 0) {
                replyExec(transport, existing);
            } else if (existing == null) {
                V2Job.Finished f = job.finished.get((int) rankId);
                replies.about(OP_EXEC, 0, job, (int) rankId, f.core()).result(f.result());
                replies.send(transport, 0, job.owner);
            }
            return;
        }
        NodeLimits.Refusal over = v2.get().limits().refusal(jobs, job, job != null ? job.user
                : credentials.userOfNewJob(header));
        if (over != null) {
            rejectExec(header, transport, source, MpiErrors.ERR_NO_MEM, over.reason(), over.counter());
            return;
        }
        boolean plain = (header.flags() & FLAG_PLAIN) != 0;
        int outputPort = plain ? header.tag() : 0;
        if (outputPort < 0 || outputPort > 65535) {
            rejectExec(header, transport, source, MpiErrors.ERR_ARG, "output port " + outputPort
                    + " is not in 0..65535");
            return;
        }
        ExecCommand command;
        try { // the plain form, with the job's environment it names (docs/protocol-v2.md 5.10)
            command = services.environments().command(header, plain, System.nanoTime());
        } catch (IllegalArgumentException e) {
            rejectExec(header, transport, source, e instanceof V2JobEnvironments.Refused r ? r.result
                    : MpiErrors.ERR_ARG, e.getMessage());
            return;
        }
        ProcessLauncher launcher = launchers.launcher(coreId);
        if (launcher == null) {
            rejectExec(header, transport, source, MpiErrors.ERR_IO, "no launcher for "
                    + (coreId == 0 ? "the local core" : "core " + coreId) + " is available");
            return;
        }
        boolean newJob = job == null;
        if (newJob) {
            job = new V2Job(jobId, source, outputPort, header.keyId(), Instant.now(),
                    settings.get().logDirectory().resolve("job-" + Job.hex(jobId)), credentials.userOfNewJob(header));
        }
        job.keyId = header.keyId();
        RankChannel channel;
        try {
            channel = channels.open(jobId, (int) rankId);
        } catch (IOException | RuntimeException e) {
            rejectExec(header, transport, source, MpiErrors.ERR_IO, "cannot create the channel of rank " + rankId
                    + ": " + e.getMessage());
            if (newJob) {
                ChannelCleanup.release(channels, jobId);
            }
            return;
        }
        if (newJob) {
            jobs.put(jobId, job);
            credentials.created(job);
            counters.increment(V2Counter.JOBS_CREATED);
            log.info("v2 job {} created for {}{}", Job.hex(jobId), Job.ownerText(source),
                    job.user != null ? " as user " + job.user : "");
        }
        V2Rank rank = new V2Rank(job, (int) rankId, coreId, (int) worldSize, command.program(), channel,
                v2.get().datagramSize());
        job.put(rank);
        if ((header.flags() & FLAG_OUTPUT) != 0) {
            output.open(jobId, (int) rankId);
        }
        Map<String, String> environment = command.environment();
        ProcessLauncher using = launcher;
        if (plain) {
            // MPICH programs find their process manager in PMI_PORT and PMI_ID
            V2NodeServices.PmiLaunch pmi = services.plainLaunch(jobId, (int) rankId, (int) worldSize, environment,
                    launcher);
            environment = pmi.environment();
            using = pmi.launcher();
        }
        LaunchRequest launch = new LaunchRequest(jobId, (int) rankId, (int) worldSize, coreId, command.program(),
                command.args(), channel.path(), environment, job.logDirectory, plain, job.user);
        ProcessLauncher starting = using;
        try {
            relay.execRepliesVia(transport);
            launchExecutor.execute(() -> lifecycle.launch(starting, launch, rank, steps));
        } catch (RejectedExecutionException e) {
            lifecycle.notStarted(transport, rank, "the proxy is shutting down", steps);
        }
    }

    private void replyExec(DatagramTransport transport, V2Rank rank) {
        replies.about(OP_EXEC, 0, rank.job, rank.rankId, rank.coreId).result(rank.execResult);
        replies.send(transport, rank.execResult != MpiErrors.SUCCESS && rank.execReason != null
                ? replies.putReason(rank.execReason) : 0, rank.job.owner);
    }

    private void rejectExec(V2HeaderFlyweight header, DatagramTransport transport, InetSocketAddress source,
                            int result, String reason) {
        rejectExec(header, transport, source, result, reason, V2Counter.EXEC_REJECTED);
    }

    /** @param kind counted besides {@code v2.exec.rejected}; its lines are rate-limited apart */
    private void rejectExec(V2HeaderFlyweight header, DatagramTransport transport, InetSocketAddress source,
                            int result, String reason, V2Counter kind) {
        counters.increment(V2Counter.EXEC_REJECTED);
        if (kind != V2Counter.EXEC_REJECTED) {
            counters.increment(kind);
        }
        if (lines.permit(kind)) {
            log.warn("v2 EXEC of job {} rank {} from {} refused with {}: {} ({} similar lines suppressed)",
                    Job.hex(header.jobId()), header.rank(), Job.ownerText(source), MpiErrors.name(result), reason,
                    lines.takeSuppressed(kind));
        }
        replies.to(header).rank(header.rank()).core(header.core()).result(result);
        replies.send(transport, replies.putReason(reason), source);
    }

    // ------------------------------------------------------------------ TERMINATE

    /** @param job the request's job, found and checked by the dispatcher */
    void onTerminate(V2HeaderFlyweight header, V2Job job, DatagramTransport transport) {
        if ((header.argument() & ~V2HeaderDescriptor.TERMINATE_STOP) != 0) {
            refuseTerminateArgument(transport, header, job);
            return;
        }
        boolean stop = (header.argument() & V2HeaderDescriptor.TERMINATE_STOP) != 0;
        if (stop) {
            output.hurry(job.jobId, STOPPED_OUTPUT_WAIT_NANOS);
        }
        V2Rank rank = job.rank(header.rank());
        if (rank == null) {
            V2Job.Finished f = header.rank() <= Integer.MAX_VALUE ? job.finished.get((int) header.rank()) : null;
            if (f == null) {
                replies.refuse(transport, header, job.owner, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
                return;
            }
            replies.about(OP_TERMINATE, 0, job, (int) header.rank(), f.core()).result(f.result())
                    .argument(f.exitStatus());
            replies.send(transport, 0, job.owner);
            return;
        }
        if (rank.terminateRequested) {
            // a retransmission: the rank is still being terminated
            if (stop) {
                lifecycle.stopNow(rank);
            }
            sendInterim(transport, rank);
            return;
        }
        lifecycle.terminate(transport, rank, stop, steps);
    }

    /** A job's ranks on this node (docs/protocol-v2.md 5.6); any key holder may ask, the reply goes to the source. */
    void onStatus(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport) {
        counters.increment(V2Counter.STATUS_REQUESTS);
        if (header.jobId() == 0) {
            // job id 0 names no job: the probe of hosts and launchers (is a proxy there, with our key?)
            replies.refuse(transport, header, source, V2Dispatcher.UNKNOWN_JOB, V2Counter.STATUS_PROBES);
            return;
        }
        V2Job job = jobs.get(header.jobId());
        if (job == null) {
            replies.refuse(transport, header, source, V2Dispatcher.UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return;
        }
        int length = statusReport.write(job, header.rank(), header.sequence(), replies.buffer(), HEADER_LENGTH,
                v2.get().maxPayload());
        if (length < 0) {
            replies.refuse(transport, header, source, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
            return;
        }
        replies.to(header).rank(header.rank()).sequence(header.sequence()).argument(statusReport.entries)
                .ack(statusReport.next);
        replies.send(transport, length, source);
    }

    /**
     * Answers a repeated TERMINATE of a rank still being terminated with the interim reply
     * (docs/protocol-v2.md 5.4): a STATUS reply for the rank, so its host hears that the node is alive.
     */
    private void sendInterim(DatagramTransport transport, V2Rank rank) {
        V2Job job = rank.job;
        int length = statusReport.write(job, rank.rankId, 0, replies.buffer(), HEADER_LENGTH, v2.get().maxPayload());
        if (length < 0) {
            return;
        }
        counters.increment(V2Counter.TERMINATE_INTERIM);
        replies.header().reset(OP_STATUS, FLAG_REPLY).keyId(job.keyId).nodeId(replies.nodeId()).jobId(job.jobId)
                .rank(rank.rankId).argument(statusReport.entries).ack(statusReport.next);
        replies.send(transport, length, job.owner);
    }

    /** A TERMINATE with argument bits this proxy does not know: refused, the rank is left alone. */
    private void refuseTerminateArgument(DatagramTransport transport, V2HeaderFlyweight header, V2Job job) {
        if (lines.permit(V2Counter.INVALID_ARGUMENT)) {
            log.warn("v2 TERMINATE of job {} rank {} refused with MPI_ERR_ARG: argument 0x{} has bits other than"
                    + " STOP (0x1) ({} similar lines suppressed)", Job.hex(job.jobId), header.rank(),
                    Long.toHexString(header.argument()), lines.takeSuppressed(V2Counter.INVALID_ARGUMENT));
        }
        replies.refuse(transport, header, job.owner, MpiErrors.ERR_ARG, V2Counter.INVALID_ARGUMENT);
    }

    // ------------------------------------------------------------------ the end of a rank

    /** What v2 does at each step of a rank's life. */
    private final class Steps implements RankLifecycle.Steps<V2Rank> {
        private final Consumer<V2Rank> activate;

        Steps(Consumer<V2Rank> activate) {
            this.activate = activate;
        }

        @Override
        public void started(DatagramTransport transport, V2Rank rank) {
            replyExec(transport, rank);
        }

        @Override
        public void failed(DatagramTransport transport, V2Rank rank) {
            replyExec(transport, rank);
        }

        @Override
        public void exited(DatagramTransport transport, V2Rank rank) {
            // the output streams drain on their own; nothing else is kept
        }

        @Override
        public void finish(DatagramTransport transport, V2Rank rank) {
            V2RankRequests.this.finish(transport, rank);
        }

        @Override
        public boolean waits(V2Rank rank) {
            return rank.wantsData();
        }

        @Override
        public void activate(V2Rank rank) {
            activate.accept(rank);
        }
    }

    /** Answers TERMINATE once everything the rank wrote to its output has been acknowledged by the host. */
    private void finish(DatagramTransport transport, V2Rank rank) {
        output.whenDrained(rank.job.jobId, rank.rankId, () -> {
            if (!rank.removed) {
                finishNow(transport, rank);
            }
        });
    }

    private void finishNow(DatagramTransport transport, V2Rank rank) {
        boolean failed = rank.phase == Rank.Phase.FAILED;
        int result = failed ? rank.execResult : MpiErrors.SUCCESS;
        long status = failed ? 0 : rank.exitStatus & 0xffffffffL;
        remove(rank, new V2Job.Finished(result, status, rank.coreId, rank.info()));
        replies.about(OP_TERMINATE, 0, rank.job, rank.rankId, rank.coreId).result(result).argument(status);
        replies.send(transport, 0, rank.job.owner);
    }

    // ------------------------------------------------------------------ hand-over

    /**
     * Instead of stopping the ranks, when the next revision of the proxy takes over: cancels the
     * timers and gives every job as plain values ({@link V2HandOver}), with its output streams, the
     * PMI server and the replay caches; the jobs are forgotten here.
     *
     * @param unsent the replies the completions applied last could not send
     * @return the jobs ({@code jobs}), their output ({@code output}), the PMI server ({@code pmi}),
     *         the authenticator ({@code authenticator}), the counters ({@code counters}) and the
     *         replies not sent ({@code replies}): JDK types, api handles and objects of the
     *         protocol bundle (taken only by a taker wired to the same revision of it)
     */
    Map<String, Object> handOver(DeferredReplies unsent) {
        List<Map<String, Object>> exported = new ArrayList<>();
        for (V2Job job : jobs.values()) {
            for (V2Rank rank : job.ranks()) {
                if (rank.terminateTimer != null) {
                    rank.terminateTimer.cancel(false);
                    rank.terminateTimer = null;
                }
            }
            exported.add(V2HandOver.export(job));
        }
        jobs.clear();
        Map<String, Object> state = new java.util.HashMap<>();
        state.put("jobs", exported);
        state.put("output", output.handOver());
        state.put("lateOutput", output.lateLines());
        state.put("pmi", services.handOver());
        state.put("staged", services.handOverStaged());
        state.put("authenticator", replies.authenticator());
        state.put("counters", counters.snapshot());
        state.put("replies", unsent.export());
        return state;
    }

    /**
     * Takes over what a previous revision's {@link #handOver} gave, its output streams already
     * taken ({@link #adoptOutput}): the ranks' exits are watched,
     * their TERMINATEs go on, their hosts' windows are served. A job that cannot be restored is
     * stopped.
     *
     * @param sends where ranks whose host waits for a window update are kept
     * @return the ids of the jobs taken over
     */
    Set<Long> adopt(Map<String, Object> state, V2HostSends sends) {
        if (state.get("counters") instanceof Map) {
            @SuppressWarnings("unchecked")
            Map<String, Long> byName = (Map<String, Long>) state.get("counters");
            counters.addAll(byName);
        }
        Object authenticator = state.get("authenticator");
        if (!replies.adopt(authenticator, v2.get().keys(), v2.get().nodeId()) && authenticator != null) {
            log.info("the replay caches of the previous revision of the proxy are of another protocol bundle: they"
                    + " start empty");
        }
        services.adopt(state.get("pmi"));
        services.adoptStaged(state.get("staged"));
        Set<Long> adopted = new HashSet<>();
        for (Object o : state.get("jobs") instanceof List<?> l ? l : List.of()) {
            Map<String, Object> m = RankHandOver.asMap(o);
            V2Job job;
            try {
                job = V2HandOver.restore(m, channels, v2.get().datagramSize());
            } catch (IllegalArgumentException e) {
                log.error("cannot take over v2 job {} from the previous revision of the proxy ({}); stopping its ranks",
                        Job.hex(RankHandOver.jobId(m)), e.getMessage());
                log.error("v2 job {}: ranks stopped, pids {}", Job.hex(RankHandOver.jobId(m)),
                        RankHandOver.stopAll(m, settings.get().stopGrace()));
                continue;
            }
            jobs.put(job.jobId, job);
            adopted.add(job.jobId);
            for (V2Rank rank : job.ranks()) {
                lifecycle.adopt(rank, steps);
                if (rank.wantsData()) {
                    steps.activate(rank);
                }
                sends.stalled(rank);
            }
            log.info("v2 job {} of {} taken over from the previous revision of the proxy: {} ranks", Job.hex(job.jobId),
                    Job.ownerText(job.owner), job.ranks().size());
        }
        return adopted;
    }

    /**
     * Takes over the output streams a previous revision's {@link #handOver} gave, then the lines
     * its ranks wrote after it ({@link LateOutput}); before any line comes here itself, so that
     * every stream stays in order.
     */
    void adoptOutput(Map<String, Object> state) {
        List<Long> lost = output.adopt(state.get("output") instanceof List<?> l ? l : List.of());
        if (!lost.isEmpty()) {
            log.warn("the output streams of v2 jobs {} could not be taken over", lost);
        }
        output.adoptLate(state.get("lateOutput"));
    }

    /** Releases the rank's channel and keeps its outcome; the last rank of a job ends the job here. */
    void remove(V2Rank rank, V2Job.Finished outcome) {
        lifecycle.closeChannel(rank);
        rank.removed = true;
        V2Job job = rank.job;
        job.remove(rank, outcome);
        if (job.isEmpty()) {
            job.emptySince = System.nanoTime();
            output.close(job.jobId);
            services.forget(job.jobId);
            ChannelCleanup.release(channels, job.jobId);
            counters.increment(V2Counter.JOBS_FINISHED);
            log.info("v2 job {} of {} finished", Job.hex(job.jobId), Job.ownerText(job.owner));
        }
    }
}
