package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Protocol v2 (docs/protocol-v2.md): authenticated requests for host-chosen jobs; reliable,
 * windowed SEND and pulled RECV streams of fragments; idempotent EXEC and TERMINATE.
 * <p>
 * This class authenticates and routes; the handling is in parts of its own: {@link V2RankRequests}
 * (EXEC, TERMINATE and the rank's life), {@link V2HostSends} (SEND into the rings),
 * {@link V2RankStreams} (RECV out of them), {@link V2OutputStreams} (rank output to the host),
 * {@link V2NodeServices} (PMI fences, STAGE, ENVIRONMENT), {@link V2Credentials} (CREDENTIAL, the jobs' users and
 * keys) and {@link V2Replies} (signing, sending, refusals).
 * <p>
 * Threading as {@link V1Dispatcher}: the handler methods run on the transport's receive thread,
 * which alone touches rings; launches and exits complete elsewhere and are posted to a queue;
 * one lock makes {@link #jobs()}, {@link #counters()} and {@link #close()} safe from any thread.
 */
final class V2Dispatcher {

    /** Result of a SEND to a rank that has ended, and of RECV when no more data will come. */
    static final int RANK_ENDED = MpiErrors.ERR_TRUNCATE;
    /** Result for a job id this node does not know. */
    static final int UNKNOWN_JOB = MpiErrors.ERR_COMM;
    /**
     * A RECV that acknowledges progress resends a retained fragment only when it was sent at least
     * this long ago (half the host's first retransmit timeout): younger ones are still on their
     * way, and the host asked early only to acknowledge (docs/protocol-v2.md 5.3).
     */
    static final long RESEND_AFTER_MILLIS = 10;

    private static final Logger LOG = LoggerFactory.getLogger(V2Dispatcher.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Object lock = new Object();
    private final LongSupplier clock;
    private volatile V2Settings v2;
    private volatile ProxySettings settings;

    // guarded by lock
    private final LongMap<V2Job> jobs = new LongMap<>();
    private final ArrayList<V2Rank> active = new ArrayList<>();
    private final ProxyCounters<V2Counter> counters = new ProxyCounters<>(V2Counter.class);
    private final RateLimitedLog<V2Counter> log = new RateLimitedLog<>(V2Counter.class, LOG_INTERVAL_NANOS);
    private final SplittableRandom random = new SplittableRandom();
    private final V2HeaderFlyweight request = new V2HeaderFlyweight();
    private final V2Replies answers;
    private long lastPurgeNanos;
    private final RelayQueue relay;
    /** This handler's steps, made once: the receive path allocates nothing. */
    private final RelayQueue.DatagramStep dispatch = this::dispatch;
    private final RelayQueue.DatagramFailure failed;
    private final V2RequestFailures failures;
    private final V2RankStreams streams;
    private final V2HostSends sends;
    private final V2RankRequests ranks;
    private final V2NodeServices services;
    private final V2OutputStreams output;
    private final V2Credentials credentials;
    private final V2MungeRequests munge;
    private final V2OutputSender outputSender = this::sendOutput;
    private DatagramTransport outputReplies;
    private final V2StatusReport statusReport = new V2StatusReport();
    /** Replies a previous revision of the proxy could not send any more: sent by the first {@link #doWork}. */
    private final DeferredReplies deferred = new DeferredReplies();

    /**
     * @param channels       creates and removes channels
     * @param settings       the proxy settings (log directory, terminate timeout, stop grace)
     * @param v2             the v2 settings
     * @param launchers      finds the launcher for a core
     * @param wakeup         makes the receive thread call {@link #doWork} soon; any thread
     * @param launchExecutor runs launches
     * @param timer          runs TERMINATE timeouts
     * @param clock          milliseconds since the epoch, for timestamps
     */
    V2Dispatcher(ChannelManager channels, ProxySettings settings, V2Settings v2, LauncherLookup launchers,
                 Runnable wakeup, Executor launchExecutor, ScheduledExecutorService timer, LongSupplier clock) {
        this.settings = settings;
        this.v2 = v2;
        this.clock = clock;
        this.answers = new V2Replies(v2, clock, random, counters);
        this.output = new V2OutputStreams(v2.maxPayload(), wakeup);
        this.sends = new V2HostSends((transport, rank, result, sequence, ack, argument) -> {
            answers.about(OP_SEND, 0, rank.job, rank.rankId, rank.coreId).result(result).sequence(sequence).ack(ack)
                    .argument(argument);
            answers.send(transport, 0, rank.job.owner);
        }, counters, () -> this.v2);
        this.streams = new V2RankStreams(new V2RankStreams.Host() {
            @Override
            public void replyRecv(DatagramTransport transport, V2Rank rank, int result, long sequence) {
                answers.about(OP_RECV, 0, rank.job, rank.rankId, rank.coreId).result(result).sequence(sequence);
                answers.send(transport, 0, rank.job.owner);
            }

            @Override
            public int sign(ByteBuffer buffer, int offset) {
                return answers.sign(buffer, offset);
            }

            @Override
            public long nodeId() {
                return answers.nodeId();
            }

            @Override
            public void invalid(V2Counter reason, InetSocketAddress source, int length) {
                V2Dispatcher.this.invalid(reason, source, length);
            }

            @Override
            public void activate(V2Rank rank) {
                V2Dispatcher.this.activate(rank);
            }
        }, counters, clock, random, () -> this.v2.maxPayload());
        this.relay = new RelayQueue(lock, wakeup, () -> !active.isEmpty(), e -> {
            count(V2Counter.ERRORS);
            LOG.error("failed to complete a v2 launch or exit", e);
        });
        RankLifecycle lifecycle = new RankLifecycle("v2 job", LOG, () -> this.settings, timer, channels,
                RankLifecycle.counting(V2Counter.class, this::count, V2Counter.TERMINATE_FORCED), relay);
        this.failures = new V2RequestFailures(LOG, jobs, answers, lifecycle, counters, log);
        this.failed = failures::failed;
        this.services = new V2NodeServices(answers, output::onPmiLine, clock, () -> this.v2.stageMaxBytes(), LOG);
        this.credentials = new V2Credentials(LOG, jobs, answers, () -> this.v2, clock, counters, log);
        this.munge = new V2MungeRequests(answers, relay, () -> this.v2, clock, counters, log, LOG);
        this.ranks = new V2RankRequests(new V2RankRequests.Parts(LOG, jobs, channels, launchers, () -> this.settings,
                () -> this.v2, launchExecutor, relay, lifecycle, output, answers, services, statusReport, counters, log,
                this::activate, credentials));
    }

    /** @return takes the output lines of v2 ranks (and ignores those of other jobs); any thread */
    RankOutputListener outputListener() {
        return output;
    }

    void settings(ProxySettings newSettings) {
        this.settings = newSettings;
    }

    /**
     * Applies changed v2 settings while jobs run. Keys and node name take effect at once (key
     * rotation: a job whose key was removed can no longer be answered, and its host can no longer
     * be heard); so do the job linger, the maximum message size and the largest staged program.
     * The clock skew, the replay cache size and the datagram size size buffers and caches of
     * running jobs and wait for the next start.
     *
     * @param next the new settings
     * @return the configuration keys whose new values wait for the next start; empty when all applied
     */
    List<String> reconfigure(V2Settings next) {
        synchronized (lock) {
            V2Settings current = v2;
            if (!next.keys().equals(current.keys()) || !next.nodeName().equals(current.nodeName())) {
                answers.rekey(next.keys(), next.nodeId());
                LOG.info("v2 now uses keys {} (node {})", next.keys(), next.nodeName());
            }
            v2 = current.applyLive(next);
            return current.waitingForStart(next);
        }
    }

    // ------------------------------------------------------------------ receive thread

    /** Handles a datagram whose first byte is the v2 magic. */
    void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        relay.onDatagram(datagram, source, replies, dispatch, failed);
    }

    private void dispatch(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.DATAGRAMS_IN);
        failures.handling(null);
        int offset = datagram.position();
        int length = datagram.remaining();
        if (length > v2.datagramSize()) {
            invalid(V2Counter.INVALID_OVERSIZE, source, length);
            return;
        }
        // the replay cache (and the source's share of it) is V2Replies.verify's; a full one is refused busy
        int result = answers.verify(datagram, offset, length, clock.getAsLong(), source);
        if (result == V2Authenticator.MUNGE) {
            munge.onRequest(datagram, offset, length, source); // no MAC: MUNGE vouches (docs/protocol-v2.md 4.3)
            return;
        }
        if (result != V2Authenticator.OK) {
            invalid(V2Counter.ofAuthResult(result), source, length);
            answers.refuseUnverified(datagram, offset, result, source, replies);
            return;
        }
        V2HeaderFlyweight header = request.wrap(datagram, offset);
        failures.handling(header);
        if ((header.flags() & ~V2HeaderDescriptor.KNOWN_FLAGS) != 0 || (header.flags() & FLAG_REPLY) != 0) {
            invalid(V2Counter.INVALID_FLAGS, source, length);
            return;
        }
        switch (header.operation()) {
            case OP_EXEC:
                ranks.onExec(header, source, replies);
                break;
            case OP_SEND:
                onSend(header, source, replies);
                break;
            case OP_RECV:
                onRecv(header, source, replies);
                break;
            case OP_TERMINATE:
                onTerminate(header, source, replies);
                break;
            case OP_OUTPUT:
                onOutputAck(header, source, replies, length);
                break;
            case OP_STATUS:
                ranks.onStatus(header, source, replies);
                break;
            case V2HeaderDescriptor.OP_PMI:
                onPmi(header, source, replies);
                break;
            case V2HeaderDescriptor.OP_STAGE, V2HeaderDescriptor.OP_ENVIRONMENT: // the same fields (5.8, 5.10)
                services.onStage(header, source, replies);
                break;
            case V2HeaderDescriptor.OP_CREDENTIAL:
                if (!credentials.onCredential(header, source, replies)) {
                    invalid(V2Counter.INVALID_OP, source, length);
                }
                break;
            default:
                invalid(V2Counter.INVALID_OP, source, length);
                break;
        }
    }

    private void onSend(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.SEND_FRAGMENTS);
        V2Rank rank = rank(header, source, replies);
        if (rank != null) {
            sends.onSend(header, replies, rank);
        }
    }

    private void onRecv(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.RECV_REQUESTS);
        V2Rank rank = rank(header, source, replies);
        if (rank != null) {
            streams.onRecv(header, source, replies, rank);
        }
    }

    private void onTerminate(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.TERMINATE_REQUESTS);
        V2Job job = job(header, source, replies);
        if (job != null) {
            ranks.onTerminate(header, job, replies);
        }
    }

    /** The host's acknowledgement of an OUTPUT stream (docs/protocol-v2.md 5.5); not answered. */
    private void onOutputAck(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies,
                             int length) {
        V2Job job = outputJob(header, source, replies);
        if (job != null && !output.onAck(job.jobId, header.rank(), header.tag(), header.ack())) {
            invalid(V2Counter.INVALID_SEQUENCE, source, length);
        }
    }

    /** A fence of the job's PMI space from its launcher (docs/protocol-v2.md 5.7), from the job's output port. */
    private void onPmi(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = outputJob(header, source, replies);
        if (job != null) {
            services.onPmi(header, job, source, replies);
        }
    }

    /** @return the request's job when it came from the job's output port, else {@code null} (refused) */
    private V2Job outputJob(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = jobs.get(header.jobId());
        if (job == null || !job.outputTo.equals(source)) {
            answers.refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return null;
        }
        job.keyId = header.keyId();
        return job;
    }

    private void sendOutput(long jobId, int rankId, int stream, long sequence, long dropped, boolean endOfLine,
                            boolean partial, byte[] text, int offset, int length) {
        V2Job job = jobs.get(jobId);
        if (job == null) {
            return;
        }
        V2Rank rank = job.rank(rankId);
        answers.about(OP_OUTPUT, endOfLine ? FLAG_END_OF_MESSAGE : 0, job, rankId, rank != null ? rank.coreId : 0)
                .tag(stream).sequence(sequence).ack(dropped).argument(partial ? V2HeaderDescriptor.OUTPUT_PARTIAL : 0);
        answers.buffer().put(HEADER_LENGTH, text, offset, length);
        answers.send(outputReplies, length, job.outputTo);
    }

    private V2Job job(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = jobs.get(header.jobId());
        if (job == null || !job.owner.equals(source)) {
            // an unknown job is answered to its asker; the request was authentic
            answers.refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return null;
        }
        job.keyId = header.keyId();
        return job;
    }

    /** @return the request's rank of a job of its source, or {@code null} when there is none (refused) */
    private V2Rank rank(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = job(header, source, replies);
        V2Rank rank = job != null ? job.rank(header.rank()) : null;
        if (job != null && rank == null) {
            answers.refuse(replies, header, job.owner, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
        }
        return rank;
    }

    // ------------------------------------------------------------------ work

    /** Sends newly written rank data for open RECV windows, applies completions, forgets lingering jobs. */
    int doWork(DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return 0;
            }
            int work = relay.drain(replies) + deferred.sendAll(replies);
            outputReplies = replies;
            work += output.pump(outputSender);
            for (int i = active.size() - 1; i >= 0; i--) {
                V2Rank rank = active.get(i);
                try {
                    work += streams.pump(replies, rank);
                } catch (RuntimeException e) {
                    failures.rankFailed(rank, e);
                    rank.pullEnd = rank.next;
                }
                if (!rank.wantsData() || rank.removed || (rank.isDone() && rank.truncateSent)) {
                    rank.active = false;
                    active.remove(i);
                }
            }
            work += sends.updateWindows(replies);
            long now = System.nanoTime();
            if (now - lastPurgeNanos > TimeUnit.SECONDS.toNanos(1)) {
                lastPurgeNanos = now;
                credentials.purge(now, v2.jobLinger().toNanos());
            }
            return work;
        }
    }

    boolean hasPendingWork() {
        synchronized (lock) { return !active.isEmpty() || sends.hasStalled() || output.hasPendingWork(); }
    }

    private void activate(V2Rank rank) {
        if (!rank.active) {
            rank.active = true;
            active.add(rank);
        }
    }

    // ------------------------------------------------------------------ counters and logs

    private void count(V2Counter counter) { counters.increment(counter); }

    private void invalid(V2Counter reason, InetSocketAddress source, int length) {
        count(reason);
        if (log.permit(reason)) {
            LOG.warn("dropped a {}-byte v2 datagram from {}: {} ({} similar lines suppressed)", length,
                    Job.ownerText(source), reason.key(), log.takeSuppressed(reason));
        }
    }

    // ------------------------------------------------------------------ any thread

    List<JobInfo> jobs() {
        synchronized (lock) {
            return jobs.values().stream().map(V2Job::info).sorted(Comparator.comparingLong(JobInfo::jobId))
                    .collect(java.util.stream.Collectors.toCollection(ArrayList::new));
        }
    }

    Map<String, Long> counters() {
        synchronized (lock) {
            Map<String, Long> m = counters.snapshot();
            m.putAll(output.counters());
            return m;
        }
    }

    long counter(V2Counter counter) {
        synchronized (lock) { return counters.get(counter); }
    }

    /** @return the authenticator in force: its replay caches' sizes show how full they are */
    V2Authenticator authenticator() {
        synchronized (lock) { return answers.authenticator(); }
    }

    /** Measures the refusals' rate limits on {@code nanoClock} ({@link System#nanoTime} by default). */
    void refusalClock(LongSupplier nanoClock) {
        synchronized (lock) { answers.refusalClock(nanoClock); }
    }

    /** Stops handling datagrams and completions: the first step of a {@link #handOver()}, before launches end. */
    void closeRelay() {
        relay.close();
        munge.close();
    }

    /**
     * Instead of {@link #close()}, once no launch runs any more: applies the queued completions
     * (their replies kept for the next revision), then hands everything over ({@link V2RankRequests#handOver}).
     */
    Map<String, Object> handOver() {
        relay.close();
        synchronized (lock) {
            DeferredReplies unsent = new DeferredReplies();
            unsent.addAll(deferred);
            relay.drain(unsent);
            active.clear();
            sends.clear();
            return ranks.handOver(unsent);
        }
    }

    /** Takes the output streams of a previous revision's {@link #handOver()}; before any output line. */
    void adoptOutput(Map<String, Object> state) {
        synchronized (lock) { ranks.adoptOutput(state); }
    }

    /** @return the ids of the jobs taken over from what {@link #handOver()} gave; before the first datagram */
    java.util.Set<Long> adopt(Map<String, Object> state) {
        synchronized (lock) {
            deferred.restore(state.get("replies"));
            return ranks.adopt(state, sends);
        }
    }

    /** Stops every rank and removes the channels. Launch and timer executors belong to the caller. */
    void close() {
        relay.close();
        munge.close();
        synchronized (lock) {
            output.closeAll();
            for (V2Job job : jobs.values()) {
                for (V2Rank rank : job.ranks()) {
                    if (rank.process != null && !rank.isDone()) {
                        rank.process.stop(settings.stopGrace());
                    }
                    ranks.remove(rank, new V2Job.Finished(MpiErrors.ERR_IO, 0, rank.coreId, rank.info()));
                }
            }
            jobs.clear();
            active.clear();
            sends.clear();
            relay.drain(null);
        }
        services.close();
    }
}
