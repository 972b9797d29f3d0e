package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The v1 (FreeNOS) protocol: jobs per source address, EXEC, SEND, RECV and TERMINATE relayed
 * between datagrams and the ranks' rings.
 * <p>
 * Threading: {@link #onDatagram}, {@link #doWork} and {@link #hasPendingWork} run on the
 * transport's receive thread, which alone touches the rings. Launches and exits complete on
 * other threads and are posted to a queue that {@link #doWork} drains. One lock guards the
 * state so that {@link #jobs()}, {@link #counters()} and {@link #close()} may run on any thread;
 * it is uncontended on the fast path.
 */
final class V1Dispatcher implements DatagramHandler {

    /** Result of a RECV answered without data because the rank ended before writing it all. */
    static final int RECV_RANK_ENDED = MpiErrors.ERR_TRUNCATE;
    /** Finished jobs kept for operators. */
    static final int HISTORY_SIZE = 32;

    private static final Logger LOG = LoggerFactory.getLogger(V1Dispatcher.class);
    private static final long CLOSE_WAIT_SECONDS = 10;

    private final Object lock = new Object();
    private final ChannelManager channels;
    private final LauncherLookup launchers;
    private final Runnable wakeup;
    private final Executor launchExecutor;
    private final ScheduledExecutorService timer;
    private final SecureRandom random = new SecureRandom();
    private volatile ProxySettings settings;
    private final JobSupervisor supervisor;
    private final RelayQueue relay;
    private final RankLifecycle lifecycle;
    private final Steps steps = new Steps();

    // guarded by lock
    private final Map<InetSocketAddress, Job> jobs = new HashMap<>();
    private final ArrayDeque<JobInfo> history = new ArrayDeque<>();
    private final ArrayList<Rank> active = new ArrayList<>();
    private final ProxyCounters<ProxyCounter> counters = new ProxyCounters<>(ProxyCounter.class);
    private final RateLimitedLog<ProxyCounter> invalidLog;
    private final V1HeaderFlyweight request = new V1HeaderFlyweight();
    private final V1HeaderFlyweight reply = new V1HeaderFlyweight();
    private final ByteBuffer replyBuffer = ByteBuffer.allocateDirect(MAX_DATAGRAM_LENGTH)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);

    /**
     * @param channels       creates and removes channels
     * @param settings       the settings
     * @param launchers      finds the launcher for a core
     * @param wakeup         makes the receive thread call {@link #doWork} soon; any thread
     * @param launchExecutor runs launches (they may block)
     * @param timer          runs TERMINATE timeouts
     */
    V1Dispatcher(ChannelManager channels, ProxySettings settings, LauncherLookup launchers, Runnable wakeup,
                 Executor launchExecutor, ScheduledExecutorService timer) {
        this(channels, settings, launchers, wakeup, launchExecutor, timer, RateLimitedLog.DEFAULT_INTERVAL_NANOS);
    }

    V1Dispatcher(ChannelManager channels, ProxySettings settings, LauncherLookup launchers, Runnable wakeup,
                 Executor launchExecutor, ScheduledExecutorService timer, long logIntervalNanos) {
        this.channels = channels;
        this.settings = settings;
        this.launchers = launchers;
        this.wakeup = wakeup;
        this.launchExecutor = launchExecutor;
        this.timer = timer;
        this.invalidLog = new RateLimitedLog<>(ProxyCounter.class, logIntervalNanos);
        this.relay = new RelayQueue(lock, wakeup, () -> !active.isEmpty(), e -> {
            counters.increment(ProxyCounter.ERRORS);
            LOG.error("failed to complete a launch or exit", e);
        });
        this.supervisor = new JobSupervisor(timer, relay::post, () -> this.settings.stopGrace(), this::reap);
        this.lifecycle = new RankLifecycle("job", LOG, () -> this.settings, timer, channels,
                RankLifecycle.counting(ProxyCounter.class, counters::increment, ProxyCounter.TERMINATE_FORCED), relay);
        reply.wrap(replyBuffer, 0);
    }

    /** Applies new supervision settings to jobs created from now on; any thread. */
    void supervision(SupervisionSettings newSettings) {
        supervisor.settings(newSettings);
    }

    /** Records the ranks started from now on in {@code ledger}; any thread. */
    void ledger(RankLedger ledger) {
        supervisor.ledger(ledger);
    }

    /** Applies new settings to what starts from now on; any thread. */
    void settings(ProxySettings newSettings) {
        this.settings = newSettings;
    }

    /** @return the settings in force and the supervision settings of new jobs; any thread */
    Map.Entry<ProxySettings, SupervisionSettings> settingsInForce() {
        return Map.entry(settings, supervisor.settings());
    }

    // ------------------------------------------------------------------ receive thread

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return;
            }
            try {
                dispatch(datagram, source, replies);
            } catch (RuntimeException e) {
                counters.increment(ProxyCounter.ERRORS);
                if (invalidLog.permit(ProxyCounter.ERRORS)) {
                    LOG.error("failed to handle a datagram from {} ({} similar failures suppressed)", source,
                            invalidLog.takeSuppressed(ProxyCounter.ERRORS), e);
                }
            }
        }
    }

    private void dispatch(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        counters.increment(ProxyCounter.DATAGRAMS_IN);
        int offset = datagram.position();
        int length = datagram.remaining();
        if (length > MAX_DATAGRAM_LENGTH) {
            invalid(ProxyCounter.INVALID_OVERSIZE, source, length, -1);
            return;
        }
        if (length < HEADER_LENGTH) {
            invalid(ProxyCounter.INVALID_SHORT, source, length, -1);
            return;
        }
        V1HeaderFlyweight header = request.wrap(datagram, offset);
        int operation = header.operation();
        switch (operation) {
            case OP_SEND:
                onSend(header, length, source, replies);
                break;
            case OP_RECV:
                onRecv(header, source, replies);
                break;
            case OP_EXEC:
                onExec(header, length, source, replies);
                break;
            case OP_TERMINATE:
                onTerminate(header, source, replies);
                break;
            default:
                invalid(ProxyCounter.INVALID_OP, source, length, operation);
                break;
        }
    }

    private void onSend(V1HeaderFlyweight header, int length, InetSocketAddress source, DatagramTransport replies) {
        int datatype = header.datatype();
        int size = v1Size(datatype);
        if (size < 0) {
            invalid(ProxyCounter.INVALID_DATATYPE, source, length, datatype);
            return;
        }
        long count = header.datacount();
        long bytes = count * size;
        if (bytes > length - HEADER_LENGTH) {
            invalid(ProxyCounter.INVALID_COUNT, source, length, count);
            return;
        }
        Rank rank = rankOf(source, header.rankId());
        if (rank == null) {
            invalid(ProxyCounter.INVALID_RANK, source, length, header.rankId());
            return;
        }
        counters.increment(ProxyCounter.SEND_DATAGRAMS);
        if (count == 0) {
            return;
        }
        if (rank.isDone()) {
            dropSend(rank);
            return;
        }
        ByteBuffer buffer = header.buffer();
        int payloadOffset = header.payloadOffset();
        int n = (int) bytes;
        // Straight from the receive buffer into the ring, unless held data must go first (order).
        if (rank.held.isEmpty() && rank.toRank.offer(datatype, (int) count, buffer, payloadOffset, n)) {
            rank.bytesIn += n;
            counters.add(ProxyCounter.SEND_BYTES, n);
            ringRank(rank, replies);
            return;
        }
        if (rank.held.add(datatype, (int) count, buffer, payloadOffset, n, settings.holdLimitBytes())) {
            counters.increment(ProxyCounter.SEND_HELD);
            activate(rank);
        } else {
            dropSend(rank);
            if (invalidLog.permit(ProxyCounter.SEND_DROPPED)) {
                LOG.warn("dropped SEND from {} to rank {}: {} bytes held already, the hold limit ({}; {} similar"
                        + " lines suppressed)", Job.ownerText(source), rank.rankId, rank.held.heldBytes(),
                        ProxyCounter.SEND_DROPPED.key(), invalidLog.takeSuppressed(ProxyCounter.SEND_DROPPED));
            }
        }
    }

    private void dropSend(Rank rank) {
        rank.dropped++;
        counters.increment(ProxyCounter.SEND_DROPPED);
    }

    private void onRecv(V1HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        int datatype = header.datatype();
        if (v1Size(datatype) < 0) {
            invalid(ProxyCounter.INVALID_DATATYPE, source, HEADER_LENGTH, datatype);
            return;
        }
        Rank rank = rankOf(source, header.rankId());
        if (rank == null) {
            invalid(ProxyCounter.INVALID_RANK, source, HEADER_LENGTH, header.rankId());
            return;
        }
        counters.increment(ProxyCounter.RECV_REQUESTS);
        long count = header.datacount();
        if (count == 0) {
            return;
        }
        if (!rank.recvs.offer(datatype, count)) {
            counters.increment(ProxyCounter.RECV_DROPPED);
            if (invalidLog.permit(ProxyCounter.RECV_DROPPED)) {
                LOG.warn("dropped RECV from {} for rank {}: {} requests pending already ({}; {} similar lines"
                        + " suppressed)", Job.ownerText(source), rank.rankId, Rank.MAX_PENDING_RECVS,
                        ProxyCounter.RECV_DROPPED.key(), invalidLog.takeSuppressed(ProxyCounter.RECV_DROPPED));
            }
            return;
        }
        serve(rank, replies);
        if (rank.hasPendingWork()) {
            activate(rank);
        }
    }

    private void onExec(V1HeaderFlyweight header, int length, InetSocketAddress source, DatagramTransport replies) {
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
            JobSupervisor.onHostHeard(job, System.nanoTime());
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
            job = new Job(jobId, source, Instant.now(), settings.logDirectory().resolve("job-" + Job.hex(jobId)));
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
            supervisor.onJobCreated(job, System.nanoTime());
            counters.increment(ProxyCounter.JOBS_CREATED);
            LOG.info("job {} created for {}", Job.hex(job.jobId), Job.ownerText(source));
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
        LOG.info("job {} of {} has failed and has no live rank: its host's new EXEC starts a new job",
                Job.hex(job.jobId), Job.ownerText(job.owner));
        for (Rank rank : job.ranks()) {
            remove(rank);
        }
    }

    /** Logs (rate-limited) that an EXEC repeating a failed rank of a job with live ranks gets the old failure. */
    private void refusedAgain(InetSocketAddress source, Rank failed) {
        counters.increment(ProxyCounter.EXEC_REJECTED);
        if (invalidLog.permit(ProxyCounter.EXEC_REJECTED)) {
            LOG.warn("EXEC of rank {} from {} refused with {}: rank {} of job {} failed already ({}) and the job still"
                    + " has live ranks; TERMINATE them to start again ({} similar lines suppressed)", failed.rankId,
                    Job.ownerText(source), MpiErrors.name(failed.execResult), failed.rankId, Job.hex(failed.job.jobId),
                    failed.execReason, invalidLog.takeSuppressed(ProxyCounter.EXEC_REJECTED));
        }
    }

    private void onTerminate(V1HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies) {
        int rankId = header.rankId();
        if (rankId == 0) {
            // rank 0 is the host itself, never a proxy's: the launcher's probe (is a proxy there?)
            counters.increment(ProxyCounter.PROBES);
            reply.set(OP_TERMINATE, MpiErrors.ERR_RANK, 0, header.coreId(), 0, 0);
            sendReply(replies, HEADER_LENGTH, source);
            return;
        }
        counters.increment(ProxyCounter.TERMINATE_REQUESTS);
        Rank rank = rankOf(source, rankId);
        if (rank == null) {
            counters.increment(ProxyCounter.TERMINATE_UNKNOWN);
            reply.set(OP_TERMINATE, MpiErrors.ERR_RANK, rankId, header.coreId(), 0, 0);
            sendReply(replies, HEADER_LENGTH, source);
            return;
        }
        if (rank.terminateRequested) {
            return;
        }
        rank.terminateRequested = true;
        switch (rank.phase) {
            case EXITED:
            case FAILED:
                finish(replies, rank);
                break;
            case RUNNING:
                rank.phase = Rank.Phase.TERMINATING;
                lifecycle.startTerminateTimer(rank);
                break;
            default:
                // STARTING: the timer starts once the launch completes.
                break;
        }
    }

    @Override
    public int doWork(DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return 0;
            }
            int work = relay.drain(replies);
            for (int i = 0; i < active.size();) {
                Rank rank = active.get(i);
                if (!rank.removed) {
                    int moved = flushHeld(rank);
                    if (moved > 0) {
                        ringRank(rank, replies);
                    }
                    work += moved;
                    work += serve(rank, replies);
                }
                if (rank.removed || !rank.hasPendingWork()) {
                    rank.active = false;
                    int last = active.size() - 1;
                    active.set(i, active.get(last));
                    active.remove(last);
                } else {
                    i++;
                }
            }
            return work;
        }
    }

    @Override
    public boolean hasPendingWork() {
        synchronized (lock) {
            return !relay.closed() && !active.isEmpty();
        }
    }

    private void ringRank(Rank rank, DatagramTransport replies) {
        if (RankDoorbells.ringIfArmed(rank.toRank, replies)) {
            counters.increment(ProxyCounter.DOORBELLS_RUNG);
        }
    }

    /**
     * Before the receive thread sleeps: the ranks whose RECVs wait for data get its doorbell.
     * Held SENDs wait for room, which no doorbell announces: then the usual sleep.
     */
    @Override
    public int armDoorbells(long doorbell, DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed() || relay.hasWork()) {
                return relay.hasWork() ? DO_NOT_SLEEP : SLEEP_AS_USUAL;
            }
            int result = doorbell == 0 ? SLEEP_AS_USUAL : SLEEP_UNTIL_RUNG;
            for (Rank rank : active) {
                if (rank.removed) {
                    continue;
                }
                if (!rank.held.isEmpty()) {
                    result = Math.min(result, SLEEP_AS_USUAL);
                }
                if (!rank.recvs.isEmpty()) {
                    if (rank.fromRank == null || rank.isDone()) {
                        return DO_NOT_SLEEP;
                    }
                    if (doorbell != 0 && Doorbell.arm(rank.fromRank, doorbell)) {
                        return DO_NOT_SLEEP;
                    }
                    if (!rank.fromRank.producerRingsDoorbell()) {
                        // a rank library without doorbells: wake on the timer as before
                        result = Math.min(result, SLEEP_AS_USUAL);
                    }
                }
            }
            return result;
        }
    }

    private int flushHeld(Rank rank) {
        HeldSends held = rank.held;
        int moved = 0;
        while (!held.isEmpty()) {
            int length = held.headLength();
            if (!rank.toRank.offer(held.headDatatype(), held.headCount(), held.buffer(), held.headPayloadOffset(),
                    length)) {
                break;
            }
            held.pop();
            rank.bytesIn += length;
            counters.add(ProxyCounter.SEND_BYTES, length);
            moved++;
        }
        return moved;
    }

    /** Answers the rank's pending RECVs as far as its ring allows; returns datagrams sent. */
    private int serve(Rank rank, DatagramTransport replies) {
        PendingRecvQueue recvs = rank.recvs;
        MessageRing ring = rank.fromRank;
        int sent = 0;
        while (!recvs.isEmpty()) {
            int datatype = recvs.headDatatype();
            if (ring == null) {
                abandonHeadRecv(replies, rank, datatype);
                sent++;
                continue;
            }
            int head = ring.peekDatatype();
            if (head == MessageRing.EMPTY) {
                if (!rank.isDone()) {
                    break;
                }
                abandonHeadRecv(replies, rank, datatype);
                sent++;
                continue;
            }
            if (head != datatype) {
                typeMismatch(replies, rank, datatype);
                sent++;
                continue;
            }
            int size = MpiDatatype.sizeOf(datatype);
            int want = (int) Math.min(recvs.headRemaining(), MAX_PAYLOAD_LENGTH / size);
            // No dribbling: wait for a full datagram or the rest of the request, unless the rank
            // has ended and nothing more will come.
            if (!rank.isDone() && ring.availableElements(datatype, want) < want) {
                break;
            }
            int n = ring.poll(datatype, replyBuffer, HEADER_LENGTH, want);
            if (n == MessageRing.TYPE_MISMATCH) {
                typeMismatch(replies, rank, datatype);
                sent++;
                continue;
            }
            if (n <= 0) {
                break;
            }
            int bytes = n * size;
            reply.set(OP_RECV, MpiErrors.SUCCESS, rank.rankId, rank.coreId, datatype, n);
            sendReply(replies, HEADER_LENGTH + bytes, rank.job.owner);
            rank.bytesOut += bytes;
            counters.increment(ProxyCounter.RECV_REPLIES);
            counters.add(ProxyCounter.RECV_BYTES, bytes);
            recvs.consume(n);
            sent++;
        }
        return sent;
    }

    private void typeMismatch(DatagramTransport replies, Rank rank, int datatype) {
        counters.increment(ProxyCounter.RECV_TYPE_MISMATCH);
        reply.set(OP_RECV, MpiErrors.ERR_TYPE, rank.rankId, rank.coreId, datatype, 0);
        sendReply(replies, HEADER_LENGTH, rank.job.owner);
        rank.recvs.pop();
    }

    private void abandonHeadRecv(DatagramTransport replies, Rank rank, int datatype) {
        counters.increment(ProxyCounter.RECV_ABANDONED);
        reply.set(OP_RECV, RECV_RANK_ENDED, rank.rankId, rank.coreId, datatype, 0);
        sendReply(replies, HEADER_LENGTH, rank.job.owner);
        rank.recvs.pop();
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
            if (!rank.held.isEmpty()) {
                rank.dropped += rank.held.records();
                counters.add(ProxyCounter.SEND_DROPPED, rank.held.records());
                rank.held.clear();
            }
        }

        @Override
        public void finish(DatagramTransport replies, Rank rank) {
            V1Dispatcher.this.finish(replies, rank);
        }

        @Override
        public boolean waits(Rank rank) {
            return !rank.recvs.isEmpty();
        }

        @Override
        public void activate(Rank rank) {
            V1Dispatcher.this.activate(rank);
        }
    }

    /** Removes the rank's channel and, with the last rank, the job's directory; then replies to TERMINATE. */
    private void finish(DatagramTransport replies, Rank rank) {
        serve(rank, replies);
        while (!rank.recvs.isEmpty()) {
            abandonHeadRecv(replies, rank, rank.recvs.headDatatype());
        }
        boolean failed = rank.phase == Rank.Phase.FAILED;
        // the reply promises that the rank's files are gone: remove first, then answer
        remove(rank);
        reply.set(OP_TERMINATE, failed ? rank.execResult : MpiErrors.SUCCESS, rank.rankId, rank.coreId, 0,
                failed ? 0 : rank.exitStatus & 0xffffffffL);
        sendReply(replies, HEADER_LENGTH, rank.job.owner);
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
            while (history.size() > HISTORY_SIZE) {
                history.removeFirst();
            }
            LOG.info("job {} of {} finished", Job.hex(job.jobId), Job.ownerText(job.owner));
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
        reply.set(OP_EXEC, rank.execResult, rank.rankId, rank.coreId, rank.worldSize, 0);
        if (rank.execResult != MpiErrors.SUCCESS && rank.execReason != null) {
            length += putReason(rank.execReason);
        }
        sendReply(replies, length, rank.job.owner);
    }

    private void rejectExec(DatagramTransport replies, InetSocketAddress source, int rankId, int coreId,
                            int worldSize, int result, String reason) {
        counters.increment(ProxyCounter.EXEC_REJECTED);
        if (invalidLog.permit(ProxyCounter.EXEC_REJECTED)) {
            LOG.warn("EXEC of rank {} from {} refused with {}: {} ({} similar lines suppressed)", rankId,
                    Job.ownerText(source), MpiErrors.name(result), reason,
                    invalidLog.takeSuppressed(ProxyCounter.EXEC_REJECTED));
        }
        reply.set(OP_EXEC, result, rankId, coreId, worldSize, 0);
        sendReply(replies, HEADER_LENGTH + putReason(reason), source);
    }

    /** Writes the reason after the header; returns its length in bytes. */
    private int putReason(String reason) {
        byte[] text = (reason == null ? "" : reason).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_PAYLOAD_LENGTH);
        replyBuffer.put(HEADER_LENGTH, text, 0, n);
        return n;
    }

    private void sendReply(DatagramTransport replies, int length, InetSocketAddress target) {
        if (replies == null) {
            return;
        }
        replyBuffer.limit(length).position(0);
        if (!replies.send(replyBuffer, target)) {
            counters.increment(ProxyCounter.REPLIES_FAILED);
        }
        replyBuffer.clear();
    }

    private void activate(Rank rank) {
        if (!rank.active) {
            rank.active = true;
            active.add(rank);
        }
    }

    private Rank rankOf(InetSocketAddress source, int rankId) {
        Job job = jobs.get(source);
        if (job == null) {
            return null;
        }
        JobSupervisor.onHostHeard(job, System.nanoTime());
        return job.rank(rankId);
    }

    private void invalid(ProxyCounter reason, InetSocketAddress source, int length, long value) {
        counters.increment(reason);
        if (invalidLog.permit(reason)) {
            LOG.warn("dropped a {}-byte datagram from {}: {} (value {}; {} similar lines suppressed)", length,
                    Job.ownerText(source), reason.key(), value, invalidLog.takeSuppressed(reason));
        }
    }

    private static int v1Size(int datatype) {
        return datatype <= MpiDatatype.V1_MAX_CODE ? MpiDatatype.sizeOf(datatype) : -1;
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

    // ------------------------------------------------------------------ any thread

    /** @return every live and recently finished job, ordered by job id */
    List<JobInfo> jobs() {
        synchronized (lock) {
            List<JobInfo> list = new ArrayList<>(history);
            for (Job job : jobs.values()) {
                list.add(job.info());
            }
            list.sort(Comparator.comparingLong(JobInfo::jobId));
            return list;
        }
    }

    /** @return the counters by name */
    Map<String, Long> counters() {
        synchronized (lock) {
            return counters.snapshot();
        }
    }

    long counter(ProxyCounter counter) {
        synchronized (lock) {
            return counters.get(counter);
        }
    }

    /**
     * Stops every rank, closes and removes channels, releases job directories and stops the
     * launch and timer threads. Later calls of the handler methods do nothing.
     */
    void close() {
        relay.close();
        timer.shutdownNow();
        if (launchExecutor instanceof ExecutorService) {
            ExecutorService executor = (ExecutorService) launchExecutor;
            executor.shutdown();
            try {
                if (!executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                    LOG.warn("launches still running after {} s", CLOSE_WAIT_SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (lock) {
            for (Job job : new ArrayList<>(jobs.values())) {
                for (Rank rank : job.ranks()) {
                    if (rank.process != null && !rank.isDone()) {
                        rank.process.stop(settings.stopGrace());
                    }
                    remove(rank);
                }
            }
            active.clear();
            relay.drain(null);
        }
    }
}
