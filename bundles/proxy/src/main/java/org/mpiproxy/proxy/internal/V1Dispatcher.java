package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.JobInfo;
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
    static final int RECV_RANK_ENDED = V1DataPath.RECV_RANK_ENDED;
    /** Finished jobs kept for operators. */
    static final int HISTORY_SIZE = 32;

    private static final Logger LOG = LoggerFactory.getLogger(V1Dispatcher.class);
    private static final long CLOSE_WAIT_SECONDS = 10;

    private final Object lock = new Object();
    private final Executor launchExecutor;
    private final ScheduledExecutorService timer;
    private volatile ProxySettings settings;
    private final RelayQueue relay;
    /** This handler's steps, made once: the receive path allocates nothing. */
    private final RelayQueue.DatagramStep dispatch = this::dispatch;
    private final RelayQueue.DatagramFailure failed;

    // guarded by lock
    private final ProxyCounters<ProxyCounter> counters = new ProxyCounters<>(ProxyCounter.class);
    private final RateLimitedLog<ProxyCounter> invalidLog;
    private final V1HeaderFlyweight request = new V1HeaderFlyweight();
    private final V1Replies replies = new V1Replies(counters);
    private final V1DataPath data;
    private final V1RankRequests ranks;
    private final V1RequestFailures failures;
    /** Replies a previous revision of the proxy could not send any more: sent by the next {@link #doWork}. */
    private final DeferredReplies deferred = new DeferredReplies();

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
        this(channels, settings, launchers, wakeup, launchExecutor, timer, logIntervalNanos, System::nanoTime);
    }

    /**
     * As {@link #V1Dispatcher(ChannelManager, ProxySettings, LauncherLookup, Runnable, Executor,
     * ScheduledExecutorService)}, measuring the hosts' silence on {@code nanoClock} (the timer's
     * delays are meant on it too): a test drives both.
     */
    V1Dispatcher(ChannelManager channels, ProxySettings settings, LauncherLookup launchers, Runnable wakeup,
                 Executor launchExecutor, ScheduledExecutorService timer, long logIntervalNanos,
                 LongSupplier nanoClock) {
        this.settings = settings;
        this.launchExecutor = launchExecutor;
        this.timer = timer;
        this.invalidLog = new RateLimitedLog<>(ProxyCounter.class, logIntervalNanos);
        this.relay = new RelayQueue(lock, wakeup, this::hasActiveRanks, e -> {
            counters.increment(ProxyCounter.ERRORS);
            LOG.error("failed to complete a launch or exit", e);
        });
        RankLifecycle lifecycle = new RankLifecycle("job", LOG, () -> this.settings, timer, channels,
                RankLifecycle.counting(ProxyCounter.class, counters::increment, ProxyCounter.TERMINATE_FORCED), relay);
        Map<InetSocketAddress, Job> jobs = new HashMap<>();
        this.failures = new V1RequestFailures(LOG, replies, counters, invalidLog, this::supervisor,
                this::requestedRank);
        this.failed = failures::failed;
        this.data = new V1DataPath(LOG, jobs, replies, counters, invalidLog,
                () -> this.settings.holdLimitBytes(), nanoClock, failures::rankFailed);
        this.ranks = new V1RankRequests(new V1RankRequests.Parts(LOG, channels, launchers, () -> this.settings,
                launchExecutor, timer, relay, lifecycle, replies, data, jobs, counters, invalidLog, nanoClock));
    }

    private JobSupervisor supervisor() {
        return ranks.supervisor();
    }

    private Rank requestedRank(InetSocketAddress source, int rankId) {
        return data.peekRank(source, rankId);
    }

    private boolean hasActiveRanks() {
        return data.hasActive();
    }

    /** Applies new supervision settings to jobs created from now on; any thread. */
    void supervision(SupervisionSettings newSettings) {
        ranks.supervisor().settings(newSettings);
    }

    /** Records the ranks started from now on in {@code ledger}; any thread. */
    void ledger(RankLedger ledger) {
        ranks.supervisor().ledger(ledger);
    }

    /** Applies new settings to what starts from now on; any thread. */
    void settings(ProxySettings newSettings) {
        this.settings = newSettings;
    }

    /** @return the settings in force and the supervision settings of new jobs; any thread */
    Map.Entry<ProxySettings, SupervisionSettings> settingsInForce() {
        return Map.entry(settings, ranks.supervisor().settings());
    }

    // ------------------------------------------------------------------ receive thread

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        relay.onDatagram(datagram, source, replies, dispatch, failed);
    }

    private void dispatch(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        counters.increment(ProxyCounter.DATAGRAMS_IN);
        failures.handling(null);
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
        failures.handling(header);
        switch (operation) {
            case OP_SEND:
                data.onSend(header, length, source, replies);
                break;
            case OP_RECV:
                data.onRecv(header, source, replies);
                break;
            case OP_EXEC:
                ranks.onExec(header, length, source, replies);
                break;
            case OP_TERMINATE:
                ranks.onTerminate(header, source, replies);
                break;
            default:
                invalid(ProxyCounter.INVALID_OP, source, length, operation);
                break;
        }
    }

    @Override
    public int doWork(DatagramTransport replies) {
        synchronized (lock) {
            if (relay.closed()) {
                return 0;
            }
            int work = relay.drain(replies) + deferred.sendAll(replies);
            work += data.pump(replies);
            return work;
        }
    }

    @Override
    public boolean hasPendingWork() {
        synchronized (lock) {
            return !relay.closed() && data.hasActive();
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
            return data.armDoorbells(doorbell);
        }
    }

    private void invalid(ProxyCounter reason, InetSocketAddress source, int length, long value) {
        data.invalid(reason, source, length, value);
    }

    // ------------------------------------------------------------------ any thread

    /** @return every live and recently finished job, ordered by job id */
    List<JobInfo> jobs() {
        synchronized (lock) {
            List<JobInfo> list = new ArrayList<>();
            ranks.describe(list);
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
     * Instead of {@link #close()}, when the next revision of the proxy takes over: waits for the
     * launches under way, applies what the launch and exit completions queued (their replies kept
     * for the next revision to send), then hands every job over, its ranks running and its
     * channels open. Later calls of the handler methods do nothing.
     *
     * @return the jobs ({@code jobs}), the recently finished jobs ({@code history}), the counters
     *         ({@code counters}) and the replies not sent ({@code replies}): JDK types and api
     *         handles only, for {@link HandOver}
     */
    Map<String, Object> handOver() {
        relay.close();
        timer.shutdownNow();
        awaitLaunches();
        synchronized (lock) {
            DeferredReplies unsent = new DeferredReplies();
            relay.drain(unsent);
            Map<String, Object> state = new java.util.HashMap<>();
            state.put("jobs", ranks.handOver());
            state.put("history", ranks.history());
            state.put("counters", counters.snapshot());
            unsent.addAll(deferred);
            state.put("replies", unsent.export());
            data.clear();
            return state;
        }
    }

    /**
     * Takes over what a previous revision's {@link #handOver()} gave; before the first datagram.
     *
     * @return the ids of the jobs taken over
     */
    java.util.Set<Long> adopt(Map<String, Object> state) {
        synchronized (lock) {
            Object counts = state.get("counters");
            if (counts instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, Long> byName = (Map<String, Long>) counts;
                counters.addAll(byName);
            }
            deferred.restore(state.get("replies"));
            Object jobs = state.get("jobs");
            Object history = state.get("history");
            return ranks.adopt(jobs instanceof List ? (List<?>) jobs : List.of(),
                    history instanceof List ? (List<?>) history : List.of());
        }
    }

    /**
     * Stops every rank, closes and removes channels, releases job directories and stops the
     * launch and timer threads. Later calls of the handler methods do nothing.
     */
    void close() {
        relay.close();
        timer.shutdownNow();
        awaitLaunches();
        synchronized (lock) {
            ranks.closeAll();
            data.clear();
            relay.drain(null);
        }
    }

    private void awaitLaunches() {
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
    }
}
