package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_PLAIN;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Protocol v2 (docs/protocol-v2.md): authenticated requests for host-chosen jobs; reliable,
 * windowed SEND and pulled RECV streams of fragments; idempotent EXEC and TERMINATE.
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
    private final ChannelManager channels;
    private final LauncherLookup launchers;
    private final Runnable wakeup;
    private final Executor launchExecutor;
    private final ScheduledExecutorService timer;
    private final LongSupplier clock;
    private volatile V2Settings v2;
    private volatile ProxySettings settings;

    // guarded by lock
    private final LongMap<V2Job> jobs = new LongMap<>();
    private final ArrayList<V2Rank> active = new ArrayList<>();
    private final ProxyCounters<V2Counter> counters = new ProxyCounters<>(V2Counter.class);
    private final RateLimitedLog<V2Counter> log = new RateLimitedLog<>(V2Counter.class, LOG_INTERVAL_NANOS);
    private V2Authenticator authenticator;
    private final SplittableRandom random = new SplittableRandom();
    private final V2HeaderFlyweight request = new V2HeaderFlyweight();
    private final V2HeaderFlyweight reply = new V2HeaderFlyweight();
    private final ByteBuffer replyBuffer;
    private long lastPurgeNanos;
    private final RelayQueue relay;
    private final V2RankStreams streams;
    private final V2HostSends sends;
    private final RankLifecycle lifecycle;
    private final Steps steps = new Steps();
    private final V2OutputStreams output;
    /** An EXEC variable that is also the job's PMI key of that name: which ranks share a node. */
    static final String PROCESS_MAPPING = "PMI_process_mapping";
    /** Programs hosts staged here (docs/protocol-v2.md 5.8), made with the first STAGE. */
    private StagedPrograms staged;
    /** The PMI server of MPICH programs, opened with the first plain EXEC. */
    private org.mpiproxy.protocol.pmi.PmiServer pmi;
    private final V2OutputStreams.Sender outputSender = this::sendOutput;
    private DatagramTransport outputReplies;
    private final V2StatusReport statusReport = new V2StatusReport();
    private final ByteBuffer refusalBuffer = ByteBuffer.allocateDirect(V2RefusalDescriptor.LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
    private final RefusalLimiter refusals = new RefusalLimiter();

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
        this.channels = channels;
        this.settings = settings;
        this.v2 = v2;
        this.launchers = launchers;
        this.wakeup = wakeup;
        this.launchExecutor = launchExecutor;
        this.timer = timer;
        this.clock = clock;
        this.authenticator = new V2Authenticator(v2.keys(), v2.nodeId(), v2.skew().toMillis(), v2.replayCacheSize());
        this.replyBuffer = ByteBuffer.allocateDirect(v2.datagramSize()).order(ByteOrder.LITTLE_ENDIAN);
        reply.wrap(replyBuffer, 0);
        this.output = new V2OutputStreams(v2.maxPayload(), wakeup);
        this.sends = new V2HostSends((replies, rank, result, sequence, ack, argument) -> {
            putReply(OP_SEND, 0, rank.job, rank.rankId, rank.coreId);
            reply.result(result).sequence(sequence).ack(ack).argument(argument);
            send(replies, 0, rank.job.owner);
        }, counters, () -> this.v2);
        this.streams = new V2RankStreams(new V2RankStreams.Host() {
            @Override
            public void replyRecv(DatagramTransport replies, V2Rank rank, int result, long sequence) {
                putReply(OP_RECV, 0, rank.job, rank.rankId, rank.coreId);
                reply.result(result).sequence(sequence);
                send(replies, 0, rank.job.owner);
            }

            @Override
            public int sign(ByteBuffer buffer, int offset) {
                return V2Dispatcher.this.sign(buffer, offset);
            }

            @Override
            public long nodeId() {
                return authenticator.nodeId();
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
        this.lifecycle = new RankLifecycle("v2 job", LOG, () -> this.settings, timer, channels,
                RankLifecycle.counting(V2Counter.class, this::count, V2Counter.TERMINATE_FORCED), relay);
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
     * be heard); so do the job linger and the maximum message size. The clock skew, the replay
     * cache size and the datagram size size buffers and caches of running jobs and wait for the
     * next start.
     *
     * @param next the new settings
     * @return the configuration keys whose new values wait for the next start; empty when all applied
     */
    List<String> reconfigure(V2Settings next) {
        synchronized (lock) {
            V2Settings current = v2;
            List<String> later = new ArrayList<>();
            if (!next.skew().equals(current.skew())) {
                later.add("v2.skew.seconds");
            }
            if (next.replayCacheSize() != current.replayCacheSize()) {
                later.add("v2.replay.cache.size");
            }
            if (next.datagramSize() != current.datagramSize()) {
                later.add("v2.datagram.size");
            }
            if (!next.keys().equals(current.keys()) || !next.nodeName().equals(current.nodeName())) {
                authenticator = authenticator.rekey(next.keys(), next.nodeId());
                LOG.info("v2 now uses keys {} (node {})", next.keys(), next.nodeName());
            }
            v2 = new V2Settings(next.keys(), next.nodeName(), current.skew(), current.replayCacheSize(),
                    current.datagramSize(), next.jobLinger(), next.maxMessageBytes());
            return later;
        }
    }

    // ------------------------------------------------------------------ receive thread

    /** Handles a datagram whose first byte is the v2 magic. */
    void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return;
            }
            try {
                dispatch(datagram, source, replies);
            } catch (RuntimeException e) {
                count(V2Counter.ERRORS);
                if (permit(V2Counter.ERRORS)) {
                    LOG.error("failed to handle a v2 datagram from {} ({} similar failures suppressed)", source,
                            takeSuppressed(V2Counter.ERRORS), e);
                }
            }
        }
    }

    private void dispatch(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.DATAGRAMS_IN);
        int offset = datagram.position();
        int length = datagram.remaining();
        if (length > v2.datagramSize()) {
            invalid(V2Counter.INVALID_OVERSIZE, source, length);
            return;
        }
        long now = clock.getAsLong();
        // The operation is read before the MAC only to decide whether the nonce must be remembered;
        // the replay check itself runs after the MAC has been verified.
        int operation = length > V2HeaderDescriptor.OPERATION_OFFSET
                ? datagram.get(offset + V2HeaderDescriptor.OPERATION_OFFSET) & 0xff : -1;
        // STATUS is answered to its source: remembered too, so a replay cannot reflect replies elsewhere
        boolean sideEffects = operation == OP_EXEC || operation == OP_TERMINATE || operation == OP_STATUS
                || operation == V2HeaderDescriptor.OP_STAGE || operation == V2HeaderDescriptor.OP_PMI;
        int result = authenticator.verify(datagram, offset, length, now, sideEffects);
        if (result != V2Authenticator.OK) {
            invalid(V2Counter.ofAuthResult(result), source, length);
            refuse(datagram, offset, result, source, replies);
            return;
        }
        V2HeaderFlyweight header = request.wrap(datagram, offset);
        if ((header.flags() & ~V2HeaderDescriptor.KNOWN_FLAGS) != 0 || (header.flags() & FLAG_REPLY) != 0) {
            invalid(V2Counter.INVALID_FLAGS, source, length);
            return;
        }
        switch (header.operation()) {
            case OP_EXEC:
                onExec(header, source, replies);
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
                onStatus(header, source, replies);
                break;
            case V2HeaderDescriptor.OP_PMI:
                onPmi(header, source, replies);
                break;
            case V2HeaderDescriptor.OP_STAGE:
                onStage(header, source, replies);
                break;
            default:
                invalid(V2Counter.INVALID_OP, source, length);
                break;
        }
    }

    private void onExec(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.EXEC_REQUESTS);
        long jobId = header.jobId();
        long rankId = header.rank();
        int coreId = header.core();
        long worldSize = header.argument();
        if (jobId == 0) {
            rejectExec(header, replies, source, MpiErrors.ERR_ARG, "job id 0 is not allowed");
            return;
        }
        if (worldSize < 2 || worldSize > 65535) {
            rejectExec(header, replies, source, MpiErrors.ERR_ARG, "world size " + worldSize + " is not in 2..65535");
            return;
        }
        if (rankId < 1 || rankId >= worldSize) {
            rejectExec(header, replies, source, MpiErrors.ERR_RANK, "rank " + rankId + " is not in 1.."
                    + (worldSize - 1));
            return;
        }
        V2Job job = jobs.get(jobId);
        if (job != null && !job.owner.equals(source)) {
            rejectExec(header, replies, source, MpiErrors.ERR_ARG, "job " + Job.hex(jobId)
                    + " belongs to another host address");
            return;
        }
        V2Rank existing = job != null ? job.rank(rankId) : null;
        if (existing != null || (job != null && job.finished.containsKey((int) rankId))) {
            count(V2Counter.EXEC_DUPLICATE);
            if (existing != null && existing.execResult >= 0) {
                replyExec(replies, existing);
            } else if (existing == null) {
                V2Job.Finished f = job.finished.get((int) rankId);
                putReply(OP_EXEC, 0, job, (int) rankId, f.core());
                reply.result(f.result() == MpiErrors.SUCCESS ? MpiErrors.SUCCESS : f.result());
                send(replies, 0, job.owner);
            }
            return;
        }
        boolean plain = (header.flags() & FLAG_PLAIN) != 0;
        int outputPort = plain ? header.tag() : 0;
        if (outputPort < 0 || outputPort > 65535) {
            rejectExec(header, replies, source, MpiErrors.ERR_ARG, "output port " + outputPort + " is not in 0..65535");
            return;
        }
        ExecCommand command;
        try {
            command = plain ? ExecCommand.parsePlain(header.buffer(), header.payloadOffset(), header.payloadLength())
                    : ExecCommand.parse(header.buffer(), header.payloadOffset(), header.payloadLength());
        } catch (IllegalArgumentException e) {
            rejectExec(header, replies, source, MpiErrors.ERR_ARG, e.getMessage());
            return;
        }
        ProcessLauncher launcher = launchers.launcher(coreId);
        if (launcher == null) {
            rejectExec(header, replies, source, MpiErrors.ERR_IO, "no launcher for "
                    + (coreId == 0 ? "the local core" : "core " + coreId) + " is available");
            return;
        }
        boolean newJob = job == null;
        if (newJob) {
            job = new V2Job(jobId, source, outputPort, header.keyId(), Instant.now(),
                    settings.logDirectory().resolve("job-" + Job.hex(jobId)));
        }
        job.keyId = header.keyId();
        RankChannel channel;
        try {
            channel = channels.open(jobId, (int) rankId);
        } catch (IOException | RuntimeException e) {
            rejectExec(header, replies, source, MpiErrors.ERR_IO, "cannot create the channel of rank " + rankId
                    + ": " + e.getMessage());
            if (newJob) {
                releaseQuietly(jobId);
            }
            return;
        }
        if (newJob) {
            jobs.put(jobId, job);
            count(V2Counter.JOBS_CREATED);
            LOG.info("v2 job {} created for {}", Job.hex(jobId), Job.ownerText(source));
        }
        V2Rank rank = new V2Rank(job, (int) rankId, coreId, (int) worldSize, command.program(), channel,
                v2.datagramSize());
        job.put(rank);
        if ((header.flags() & FLAG_OUTPUT) != 0) {
            output.open(jobId, (int) rankId);
        }
        Map<String, String> environment = command.environment();
        ProcessLauncher starting = launcher;
        if (plain && pmi() != null) {
            // MPICH programs find their process manager in PMI_PORT and PMI_ID
            environment = new java.util.LinkedHashMap<>(environment);
            String mapping = environment.get(PROCESS_MAPPING);
            environment.putAll(pmi.register(jobId, (int) rankId, (int) worldSize,
                    mapping == null ? Map.of() : Map.of(PROCESS_MAPPING, mapping)));
            org.mpiproxy.protocol.pmi.PmiServer server = pmi;
            starting = request -> {
                org.mpiproxy.api.RankProcess process = launcher.launch(request);
                server.started(request.jobId(), request.rankId(), process.pid());
                return process;
            };
        }
        LaunchRequest launch = new LaunchRequest(jobId, (int) rankId, (int) worldSize, coreId, command.program(),
                command.args(), channel.path(), environment, job.logDirectory, plain);
        ProcessLauncher using = starting;
        try {
            relay.execRepliesVia(replies);
            launchExecutor.execute(() -> lifecycle.launch(using, launch, rank, steps));
        } catch (RejectedExecutionException e) {
            lifecycle.notStarted(replies, rank, "the proxy is shutting down", steps);
        }
    }

    private void onSend(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.SEND_FRAGMENTS);
        V2Job job = job(header, source, replies);
        if (job == null) {
            return;
        }
        V2Rank rank = rank(job, header, replies);
        if (rank == null) {
            return;
        }
        sends.onSend(header, replies, rank);
    }

    private void onRecv(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.RECV_REQUESTS);
        V2Job job = job(header, source, replies);
        if (job == null) {
            return;
        }
        V2Rank rank = rank(job, header, replies);
        if (rank == null) {
            return;
        }
        streams.onRecv(header, source, replies, rank);
    }

    private void onTerminate(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.TERMINATE_REQUESTS);
        V2Job job = job(header, source, replies);
        if (job == null) {
            return;
        }
        if ((header.argument() & ~V2HeaderDescriptor.TERMINATE_STOP) != 0) {
            refuseTerminateArgument(replies, header, job);
            return;
        }
        boolean stop = (header.argument() & V2HeaderDescriptor.TERMINATE_STOP) != 0;
        V2Rank rank = job.rank(header.rank());
        if (rank == null) {
            V2Job.Finished f = header.rank() <= Integer.MAX_VALUE ? job.finished.get((int) header.rank()) : null;
            if (f == null) {
                refuse(replies, header, job.owner, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
                return;
            }
            putReply(OP_TERMINATE, 0, job, (int) header.rank(), f.core());
            reply.result(f.result()).argument(f.exitStatus());
            send(replies, 0, job.owner);
            return;
        }
        if (rank.terminateRequested) {
            // a retransmission: the rank is still being terminated
            if (stop) {
                lifecycle.stopNow(rank);
            }
            sendInterim(replies, rank);
            return;
        }
        rank.terminateRequested = true;
        rank.stopRequested = stop;
        switch (rank.phase) {
            case EXITED:
            case FAILED:
                finish(replies, rank);
                break;
            case RUNNING:
                rank.phase = Rank.Phase.TERMINATING;
                if (stop) {
                    lifecycle.stopNow(rank);
                } else {
                    lifecycle.startTerminateTimer(rank);
                }
                break;
            default:
                // STARTING: the lifecycle stops or waits once the process exists
                break;
        }
    }

    /**
     * Answers a repeated TERMINATE of a rank still being terminated with the interim reply
     * (docs/protocol-v2.md 5.4): a STATUS reply for the rank, so its host hears that the node is alive.
     */
    private void sendInterim(DatagramTransport replies, V2Rank rank) {
        V2Job job = rank.job;
        int length = statusReport.write(job, rank.rankId, 0, replyBuffer, HEADER_LENGTH, v2.maxPayload());
        if (length < 0) {
            return;
        }
        count(V2Counter.TERMINATE_INTERIM);
        reply.reset(OP_STATUS, FLAG_REPLY).keyId(job.keyId).nodeId(authenticator.nodeId()).jobId(job.jobId)
                .rank(rank.rankId).argument(statusReport.entries).ack(statusReport.next);
        send(replies, length, job.owner);
    }

    /** A TERMINATE with argument bits this proxy does not know: refused, the rank is left alone. */
    private void refuseTerminateArgument(DatagramTransport replies, V2HeaderFlyweight header, V2Job job) {
        if (permit(V2Counter.INVALID_ARGUMENT)) {
            LOG.warn("v2 TERMINATE of job {} rank {} refused with MPI_ERR_ARG: argument 0x{} has bits other than"
                    + " STOP (0x1) ({} similar lines suppressed)", Job.hex(job.jobId), header.rank(),
                    Long.toHexString(header.argument()), takeSuppressed(V2Counter.INVALID_ARGUMENT));
        }
        refuse(replies, header, job.owner, MpiErrors.ERR_ARG, V2Counter.INVALID_ARGUMENT);
    }

    /** The host's acknowledgement of an OUTPUT stream (docs/protocol-v2.md 5.5); not answered. */
    private void onOutputAck(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies,
                             int length) {
        V2Job job = jobs.get(header.jobId());
        if (job == null || !job.outputTo.equals(source)) {
            refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return;
        }
        job.keyId = header.keyId();
        if (!output.onAck(job.jobId, header.rank(), header.tag(), header.ack())) {
            invalid(V2Counter.INVALID_SEQUENCE, source, length);
        }
    }

    /** @return the PMI server, opened now if it is not yet; {@code null} when it cannot be opened (logged) */
    private org.mpiproxy.protocol.pmi.PmiServer pmi() {
        if (pmi == null) {
            try {
                pmi = new org.mpiproxy.protocol.pmi.PmiServer(output::onPmiLine, LOG::warn);
                LOG.info("PMI server for MPICH programs on 127.0.0.1:{}", pmi.port());
            } catch (IOException e) {
                LOG.warn("cannot open the PMI server ({}): MPICH programs start as singletons", e.toString());
            }
        }
        return pmi;
    }

    /**
     * A fence of the job's PMI space from its launcher (docs/protocol-v2.md 5.7): one fragment of
     * the pairs every rank put, acknowledged to the job's output port.
     */
    private void onPmi(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = jobs.get(header.jobId());
        if (job == null || !job.outputTo.equals(source)) {
            refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return;
        }
        job.keyId = header.keyId();
        int result = pmi == null ? MpiErrors.ERR_COMM : pmi.onFence(job.jobId, header.argument(), header.sequence(),
                header.ack(), header.buffer(), header.payloadOffset(), header.payloadLength());
        reply.reset(V2HeaderDescriptor.OP_PMI, FLAG_REPLY).keyId(header.keyId()).nodeId(authenticator.nodeId())
                .jobId(job.jobId).result(result).argument(header.argument()).sequence(header.sequence())
                .ack(header.ack());
        send(replies, 0, source);
    }

    /**
     * A fragment of a program a host stages here, or the probe whether it is here (docs/protocol-v2.md
     * 5.8); answered to the source, as STATUS (it changes no job).
     */
    private void onStage(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        if (staged == null) {
            staged = new StagedPrograms(org.mpiproxy.process.StagedFiles.directory(System::getProperty));
        }
        StagedPrograms.Outcome o = staged.onFragment(header.argument(), header.sequence(), header.ack(), header.tag(),
                header.buffer(), header.payloadOffset(), header.payloadLength(), clock.getAsLong() * 1_000_000L);
        if (o.problem() != null) {
            LOG.warn("v2 STAGE from {} refused with {}: {}", Job.ownerText(source), MpiErrors.name(o.result()),
                    o.problem());
        }
        reply.reset(V2HeaderDescriptor.OP_STAGE, FLAG_REPLY).keyId(header.keyId()).nodeId(authenticator.nodeId())
                .jobId(header.jobId()).result(o.result()).argument(o.complete() ? 1 : 0).sequence(header.sequence())
                .ack(header.ack()).tag(header.tag());
        send(replies, 0, source);
    }

    /** A job's ranks on this node (docs/protocol-v2.md 5.6); any key holder may ask, the reply goes to the source. */
    private void onStatus(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        count(V2Counter.STATUS_REQUESTS);
        if (header.jobId() == 0) {
            // job id 0 names no job: the probe of hosts and launchers (is a proxy there, with our key?)
            refuse(replies, header, source, UNKNOWN_JOB, V2Counter.STATUS_PROBES);
            return;
        }
        V2Job job = jobs.get(header.jobId());
        if (job == null) {
            refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return;
        }
        int length = statusReport.write(job, header.rank(), header.sequence(), replyBuffer, HEADER_LENGTH,
                v2.maxPayload());
        if (length < 0) {
            refuse(replies, header, source, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
            return;
        }
        reply.reset(OP_STATUS, FLAG_REPLY).keyId(header.keyId()).nodeId(authenticator.nodeId()).jobId(job.jobId)
                .rank(header.rank()).sequence(header.sequence()).argument(statusReport.entries).ack(statusReport.next);
        send(replies, length, source);
    }

    private void sendOutput(long jobId, int rankId, int stream, long sequence, long dropped, boolean endOfLine,
                            boolean partial, byte[] text, int offset, int length) {
        V2Job job = jobs.get(jobId);
        if (job == null) {
            return;
        }
        V2Rank rank = job.rank(rankId);
        putReply(OP_OUTPUT, endOfLine ? FLAG_END_OF_MESSAGE : 0, job, rankId, rank != null ? rank.coreId : 0);
        reply.tag(stream).sequence(sequence).ack(dropped)
                .argument(partial ? V2HeaderDescriptor.OUTPUT_PARTIAL : 0);
        replyBuffer.put(HEADER_LENGTH, text, offset, length);
        send(outputReplies, length, job.outputTo);
    }

    private V2Job job(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        V2Job job = jobs.get(header.jobId());
        if (job == null || !job.owner.equals(source)) {
            // an unknown job is answered to its asker; the request was authentic
            refuse(replies, header, source, UNKNOWN_JOB, V2Counter.UNKNOWN_JOB);
            return null;
        }
        job.keyId = header.keyId();
        return job;
    }

    private V2Rank rank(V2Job job, V2HeaderFlyweight header, DatagramTransport replies) {
        V2Rank rank = job.rank(header.rank());
        if (rank == null) {
            refuse(replies, header, job.owner, MpiErrors.ERR_RANK, V2Counter.UNKNOWN_RANK);
        }
        return rank;
    }

    private void refuse(DatagramTransport replies, V2HeaderFlyweight header, InetSocketAddress target, int result,
                        V2Counter counter) {
        count(counter);
        int op = header.operation();
        long jobId = header.jobId();
        long rankId = header.rank();
        long sequence = header.sequence();
        int keyId = header.keyId();
        reply.reset(op, FLAG_REPLY).keyId(keyId).nodeId(authenticator.nodeId()).jobId(jobId).rank(rankId)
                .sequence(sequence).result(result);
        send(replies, 0, target);
    }

    /**
     * Tells the source of a request that did not verify why it is not answered (docs/protocol-v2.md
     * 3.5): a 16-byte refusal echoing its key id and nonce, at most one per request and within the
     * per-source and global rate limits; none for a malformed or replayed datagram.
     */
    private void refuse(ByteBuffer datagram, int offset, int authResult, InetSocketAddress source,
                        DatagramTransport replies) {
        int reason = V2RefusalDescriptor.reasonOf(authResult);
        if (reason == 0 || replies == null) {
            return;
        }
        if (!refusals.permit(source.getAddress(), System.nanoTime())) {
            count(V2Counter.REFUSALS_LIMITED);
            return;
        }
        V2RefusalDescriptor.put(datagram, offset, reason, refusalBuffer, 0);
        refusalBuffer.limit(V2RefusalDescriptor.LENGTH).position(0);
        count(replies.send(refusalBuffer, source) ? V2Counter.REFUSALS_SENT : V2Counter.REPLIES_FAILED);
        refusalBuffer.clear();
    }

    // ------------------------------------------------------------------ work

    /** Sends newly written rank data for open RECV windows, applies completions, forgets lingering jobs. */
    int doWork(DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return 0;
            }
            int work = relay.drain(replies);
            outputReplies = replies;
            work += output.pump(outputSender);
            for (int i = active.size() - 1; i >= 0; i--) {
                V2Rank rank = active.get(i);
                try {
                    work += streams.pump(replies, rank);
                } catch (RuntimeException e) {
                    count(V2Counter.ERRORS);
                    LOG.error("v2 job {} rank {}: reading the rank's data failed", Job.hex(rank.job.jobId),
                            rank.rankId, e);
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
                purge(now);
            }
            return work;
        }
    }

    boolean hasPendingWork() {
        synchronized (lock) {
            return !active.isEmpty() || sends.hasStalled() || output.hasPendingWork();
        }
    }

    /**
     * The window update (docs/protocol-v2.md 5.2): once the ring of a rank whose host was told
     * window 0 has room again (for half the fragments the empty ring takes, at least one), an
     * unsolicited acknowledgement tells the host, which then sends again at once instead of after
     * its retransmit timeout.
     *
     * @return 1 when the update was sent
     */
    private void purge(long now) {
        long linger = v2.jobLinger().toNanos();
        jobs.removeIf(job -> job.isEmpty() && job.emptySince != 0 && now - job.emptySince >= linger);
    }

    private void activate(V2Rank rank) {
        if (!rank.active) {
            rank.active = true;
            active.add(rank);
        }
    }

    // ------------------------------------------------------------------ launches and exits

    /** What v2 does at each step of a rank's life. */
    private final class Steps implements RankLifecycle.Steps<V2Rank> {
        @Override
        public void started(DatagramTransport replies, V2Rank rank) {
            replyExec(replies, rank);
        }

        @Override
        public void failed(DatagramTransport replies, V2Rank rank) {
            replyExec(replies, rank);
        }

        @Override
        public void exited(DatagramTransport replies, V2Rank rank) {
            // the output streams drain on their own; nothing else is kept
        }

        @Override
        public void finish(DatagramTransport replies, V2Rank rank) {
            V2Dispatcher.this.finish(replies, rank);
        }

        @Override
        public boolean waits(V2Rank rank) {
            return rank.wantsData();
        }

        @Override
        public void activate(V2Rank rank) {
            V2Dispatcher.this.activate(rank);
        }
    }

    /** Answers TERMINATE once everything the rank wrote to its output has been acknowledged by the host. */
    private void finish(DatagramTransport replies, V2Rank rank) {
        output.whenDrained(rank.job.jobId, rank.rankId, () -> {
            if (!rank.removed) {
                finishNow(replies, rank);
            }
        });
    }

    private void finishNow(DatagramTransport replies, V2Rank rank) {
        boolean failed = rank.phase == Rank.Phase.FAILED;
        int result = failed ? rank.execResult : MpiErrors.SUCCESS;
        long status = failed ? 0 : rank.exitStatus & 0xffffffffL;
        remove(rank, new V2Job.Finished(result, status, rank.coreId, rank.info()));
        putReply(OP_TERMINATE, 0, rank.job, rank.rankId, rank.coreId);
        reply.result(result).argument(status);
        send(replies, 0, rank.job.owner);
    }

    private void remove(V2Rank rank, V2Job.Finished outcome) {
        lifecycle.closeChannel(rank);
        rank.removed = true;
        V2Job job = rank.job;
        job.remove(rank, outcome);
        if (job.isEmpty()) {
            job.emptySince = System.nanoTime();
            output.close(job.jobId);
            if (pmi != null) {
                pmi.forget(job.jobId);
            }
            releaseQuietly(job.jobId);
            count(V2Counter.JOBS_FINISHED);
            LOG.info("v2 job {} of {} finished", Job.hex(job.jobId), Job.ownerText(job.owner));
        }
    }

    private void releaseQuietly(long jobId) {
        ChannelCleanup.release(channels, jobId);
    }

    // ------------------------------------------------------------------ replies

    private void replyExec(DatagramTransport replies, V2Rank rank) {
        putReply(OP_EXEC, 0, rank.job, rank.rankId, rank.coreId);
        reply.result(rank.execResult);
        int length = 0;
        if (rank.execResult != MpiErrors.SUCCESS && rank.execReason != null) {
            length = putReason(rank.execReason);
        }
        send(replies, length, rank.job.owner);
    }

    private void rejectExec(V2HeaderFlyweight header, DatagramTransport replies, InetSocketAddress source, int result,
                            String reason) {
        count(V2Counter.EXEC_REJECTED);
        if (permit(V2Counter.EXEC_REJECTED)) {
            LOG.warn("v2 EXEC of job {} rank {} from {} refused with {}: {} ({} similar lines suppressed)",
                    Job.hex(header.jobId()), header.rank(), Job.ownerText(source), MpiErrors.name(result), reason,
                    takeSuppressed(V2Counter.EXEC_REJECTED));
        }
        reply.reset(OP_EXEC, FLAG_REPLY).keyId(header.keyId()).nodeId(authenticator.nodeId()).jobId(header.jobId())
                .rank(header.rank()).core(header.core()).result(result);
        send(replies, putReason(reason), source);
    }

    private void putReply(int operation, int flags, V2Job job, int rankId, int coreId) {
        reply.reset(operation, FLAG_REPLY | flags).keyId(job.keyId).nodeId(authenticator.nodeId()).jobId(job.jobId)
                .rank(rankId).core(coreId);
    }

    private int putReason(String reason) {
        byte[] text = (reason == null ? "" : reason).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, v2.maxPayload());
        replyBuffer.put(HEADER_LENGTH, text, 0, n);
        return n;
    }

    /** Completes and signs the reply header in {@link #replyBuffer} and sends it. */
    private void send(DatagramTransport replies, int payloadLength, InetSocketAddress target) {
        reply.payloadLength(payloadLength).timestamp(clock.getAsLong()).nonce(random.nextLong());
        int length = sign(replyBuffer, 0);
        if (length < 0 || replies == null) {
            replyBuffer.clear();
            return;
        }
        replyBuffer.limit(length).position(0);
        if (!replies.send(replyBuffer, target)) {
            count(V2Counter.REPLIES_FAILED);
        }
        replyBuffer.clear();
    }

    /** Signs under the key the header names; -1 (counted) when that key was removed since. */
    private int sign(ByteBuffer buffer, int offset) {
        try {
            return authenticator.sign(buffer, offset);
        } catch (IllegalArgumentException e) {
            count(V2Counter.REPLIES_KEY_REMOVED);
            return -1;
        }
    }

    // ------------------------------------------------------------------ counters and logs

    private void count(V2Counter counter) {
        counters.increment(counter);
    }

    private void add(V2Counter counter, long delta) {
        counters.add(counter, delta);
    }

    private void invalid(V2Counter reason, InetSocketAddress source, int length) {
        count(reason);
        if (permit(reason)) {
            LOG.warn("dropped a {}-byte v2 datagram from {}: {} ({} similar lines suppressed)", length,
                    Job.ownerText(source), reason.key(), takeSuppressed(reason));
        }
    }

    private boolean permit(V2Counter reason) {
        return log.permit(reason);
    }

    private long takeSuppressed(V2Counter reason) {
        return log.takeSuppressed(reason);
    }

    // ------------------------------------------------------------------ any thread

    List<JobInfo> jobs() {
        synchronized (lock) {
            List<JobInfo> list = new ArrayList<>();
            for (V2Job job : jobs.values()) {
                list.add(job.info());
            }
            list.sort(Comparator.comparingLong(JobInfo::jobId));
            return list;
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
        synchronized (lock) {
            return counters.get(counter);
        }
    }

    /** Stops every rank and removes the channels. Launch and timer executors belong to the caller. */
    void close() {
        relay.close();
        synchronized (lock) {
            output.closeAll();
            for (V2Job job : jobs.values()) {
                for (V2Rank rank : job.ranks()) {
                    if (rank.process != null && !rank.isDone()) {
                        rank.process.stop(settings.stopGrace());
                    }
                    remove(rank, new V2Job.Finished(MpiErrors.ERR_IO, 0, rank.coreId, rank.info()));
                }
            }
            jobs.clear();
            active.clear();
            sends.clear();
            relay.drain(null);
        }
        if (pmi != null) {
            pmi.close();
        }
    }
}
