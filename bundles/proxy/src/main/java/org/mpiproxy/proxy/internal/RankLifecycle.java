package org.mpiproxy.proxy.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.protocol.MpiErrors;
import org.slf4j.Logger;

/**
 * The life of a rank on this node, the same under every protocol: the launch (on a launch
 * thread), the start or the failure, the exit, the wait for an exit after TERMINATE and the stop
 * after it (or at once), the release of its channel. Each step moves the {@link LiveRank} along,
 * counts and logs it, and then hands over to the protocol ({@link Steps}) for what its host is
 * told and what follows. One instance per protocol handler; relay thread, except
 * {@link #launch}.
 */
final class RankLifecycle {

    /** What a protocol counts of its ranks' lives. */
    enum Event { EXEC_STARTED, EXEC_FAILED, RANKS_EXITED, TERMINATE_FORCED, TERMINATE_STOPPED }

    /**
     * Counts each event as the protocol's counter of the same name.
     *
     * @param type      the protocol's counters
     * @param increment counts one
     * @param otherwise what an event without a counter of its name counts as
     * @return what the lifecycle counts with
     */
    static <C extends Enum<C>> Consumer<Event> counting(Class<C> type, Consumer<C> increment, C otherwise) {
        java.util.EnumMap<Event, C> counted = new java.util.EnumMap<>(Event.class);
        for (Event e : Event.values()) {
            C counter = otherwise;
            for (C c : type.getEnumConstants()) {
                if (c.name().equals(e.name())) {
                    counter = c;
                }
            }
            counted.put(e, counter);
        }
        return event -> increment.accept(counted.get(event));
    }

    /** How a protocol handler runs work on its relay thread. */
    interface Relay {
        /** @return whether {@code done} ran now, on this thread (see {@link LaunchReplies#completeNow}) */
        boolean completeNow(RelayQueue.Completion done);

        /** Queues {@code done} for the relay thread and wakes it. */
        void post(RelayQueue.Completion done);

        /** @return whether the handler is closed */
        boolean closed();

        /** @return whether {@code done} was still queued and is now taken back */
        boolean withdraw(RelayQueue.Completion done);
    }

    /**
     * What a protocol does at each step, once the rank has been moved along.
     *
     * @param <R> the protocol's rank
     */
    interface Steps<R extends LiveRank> {
        /** The process runs: answer the EXEC. */
        void started(DatagramTransport replies, R rank);

        /** The process could not be started ({@link LiveRank#execReason} says why): answer the EXEC. */
        void failed(DatagramTransport replies, R rank);

        /** The process ended ({@link LiveRank#exitStatus}): what the protocol keeps of it. */
        void exited(DatagramTransport replies, R rank);

        /** The ended rank's TERMINATE is answered and the rank removed. */
        void finish(DatagramTransport replies, R rank);

        /** @return whether requests of the host wait for the rank's data (they are answered now) */
        boolean waits(R rank);

        /** Puts the rank on the relay thread's list of ranks with work. */
        void activate(R rank);
    }

    private final String jobWord;
    private final Logger log;
    private final Supplier<ProxySettings> settings;
    private final ScheduledExecutorService timer;
    private final ChannelManager channels;
    private final Consumer<Event> count;
    private final Relay relay;

    /**
     * @param jobWord  how the log names a job of this protocol ({@code job}, {@code v2 job})
     * @param log      the protocol handler's log
     * @param settings the settings in force (terminate timeout, stop grace)
     * @param timer    runs the terminate timeouts
     * @param channels releases the ranks' channels
     * @param count    counts each {@link Event}
     * @param relay    the handler's relay thread
     */
    RankLifecycle(String jobWord, Logger log, Supplier<ProxySettings> settings, ScheduledExecutorService timer,
                  ChannelManager channels, Consumer<Event> count, Relay relay) {
        this.jobWord = jobWord;
        this.log = log;
        this.settings = settings;
        this.timer = timer;
        this.channels = channels;
        this.count = count;
        this.relay = relay;
    }

    /**
     * Starts the rank's process (a launch thread) and moves the rank on with the outcome, on the
     * relay thread or at once.
     */
    <R extends LiveRank> void launch(ProcessLauncher launcher, LaunchRequest request, R rank, Steps<R> steps) {
        RankProcess process = null;
        String failure = null;
        try {
            process = launcher.launch(request);
        } catch (LaunchException e) {
            failure = e.getMessage();
        } catch (RuntimeException e) {
            failure = "launcher failed: " + e;
            log.error("launcher failed to start {}", request, e);
        }
        RankProcess started = process;
        String reason = failure;
        RelayQueue.Completion done = replies -> onLaunched(replies, rank, started, reason, steps);
        if (relay.completeNow(done)) {
            return;
        }
        relay.post(done);
        // close() drains the queue; if it already did, nobody else will stop this process
        if (relay.closed() && started != null && relay.withdraw(done)) {
            started.stop(settings.get().stopGrace());
        }
    }

    /** The launch could not even be handed to a launch thread: the rank fails with {@code reason}. */
    <R extends LiveRank> void notStarted(DatagramTransport replies, R rank, String reason, Steps<R> steps) {
        onLaunched(replies, rank, null, reason, steps);
    }

    private <R extends LiveRank> void onLaunched(DatagramTransport replies, R rank, RankProcess process,
                                                 String failure, Steps<R> steps) {
        if (rank.removed) {
            if (process != null) {
                process.stop(settings.get().stopGrace());
            }
            return;
        }
        if (process == null) {
            rank.phase = Rank.Phase.FAILED;
            // hosts learn MPI_ERR_IO for a failed EXEC, with the launcher's reason, whatever it was
            rank.execResult = MpiErrors.ERR_IO;
            rank.execReason = failure;
            count.accept(Event.EXEC_FAILED);
            log.warn("{} {} rank {}: {} could not be started: {}", jobWord, Job.hex(rank.jobId()), rank.rankId,
                    rank.program, failure);
            steps.failed(replies, rank);
            afterEnd(replies, rank, steps);
            return;
        }
        rank.process = process;
        rank.phase = rank.terminateRequested || rank.fault != null ? Rank.Phase.TERMINATING : Rank.Phase.RUNNING;
        rank.execResult = MpiErrors.SUCCESS;
        count.accept(Event.EXEC_STARTED);
        log.info("{} {} rank {}: {} started on core {} (pid {})", jobWord, Job.hex(rank.jobId()), rank.rankId,
                rank.program, rank.coreId, process.pid());
        steps.started(replies, rank);
        watchExit(rank, steps);
        if (rank.stopRequested) {
            stopNow(rank);
        } else if (rank.terminateRequested) {
            startTerminateTimer(rank);
        }
    }

    private <R extends LiveRank> void watchExit(R rank, Steps<R> steps) {
        rank.process.onExit().whenComplete((status, error) -> relay.post(r -> onExited(r, rank,
                status != null ? status : -1, steps)));
    }

    /**
     * A running rank a previous revision of the proxy started and handed over: its exit is watched
     * here from now on (at once when it ended meanwhile), and a TERMINATE it was waiting under
     * goes on: a stop asked for is made, the terminate timeout starts again. A rank that had
     * ended goes on from its end on the relay thread: its TERMINATE is answered (once its output
     * is acknowledged), or the requests that wait for its data are served.
     */
    <R extends LiveRank> void adopt(R rank, Steps<R> steps) {
        if (rank.isDone()) {
            relay.post(r -> {
                if (!rank.removed) {
                    afterEnd(r, rank, steps);
                }
            });
            return;
        }
        if (rank.process == null) {
            return;
        }
        watchExit(rank, steps);
        if (rank.phase == Rank.Phase.TERMINATING && !rank.stopped) {
            if (rank.stopRequested) {
                stopNow(rank);
            } else {
                startTerminateTimer(rank);
            }
        }
    }

    private <R extends LiveRank> void onExited(DatagramTransport replies, R rank, int status, Steps<R> steps) {
        if (rank.removed) {
            return;
        }
        rank.exitStatus = status;
        rank.phase = Rank.Phase.EXITED;
        count.accept(Event.RANKS_EXITED);
        cancelTerminateTimer(rank);
        log.info("{} {} rank {}: {} exited with status {}", jobWord, Job.hex(rank.jobId()), rank.rankId, rank.program,
                status);
        steps.exited(replies, rank);
        afterEnd(replies, rank, steps);
    }

    /** An ended rank answers its TERMINATE, or the requests that wait for its data. */
    private static <R extends LiveRank> void afterEnd(DatagramTransport replies, R rank, Steps<R> steps) {
        if (rank.terminateRequested) {
            steps.finish(replies, rank);
        } else if (steps.waits(rank)) {
            steps.activate(rank);
        }
    }

    /**
     * The first TERMINATE of a rank, in either protocol: an ended rank is finished at once; a
     * running one gets the terminate timeout to exit (or, with {@code stop}, is stopped now); a
     * starting one does the same once its launch completes.
     */
    <R extends LiveRank> void terminate(DatagramTransport replies, R rank, boolean stop, Steps<R> steps) {
        rank.terminateRequested = true;
        rank.stopRequested |= stop;
        switch (rank.phase) {
            case EXITED:
            case FAILED:
                steps.finish(replies, rank);
                break;
            case RUNNING:
                rank.phase = Rank.Phase.TERMINATING;
                if (stop) {
                    stopNow(rank);
                } else {
                    startTerminateTimer(rank);
                }
                break;
            default:
                // STARTING: the launch's completion stops or waits once the process exists
                break;
        }
    }

    /** After TERMINATE: waits the terminate timeout for the rank's exit, then stops it. */
    void startTerminateTimer(LiveRank rank) {
        try {
            rank.terminateTimer = timer.schedule(() -> relay.post(r -> onTerminateTimeout(rank)),
                    settings.get().terminateTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            onTerminateTimeout(rank);
        }
    }

    /**
     * Stops the rank now: SIGTERM, SIGKILL after the stop grace, without waiting for the
     * terminate timeout. Once per rank; before its process exists it only marks the rank.
     */
    void stopNow(LiveRank rank) {
        rank.stopRequested = true;
        if (rank.stopped || rank.process == null || rank.phase != Rank.Phase.TERMINATING) {
            return;
        }
        rank.stopped = true;
        cancelTerminateTimer(rank);
        count.accept(Event.TERMINATE_STOPPED);
        log.info("{} {} rank {}: stopping {} (pid {}) now: SIGTERM, SIGKILL after {} s", jobWord,
                Job.hex(rank.jobId()), rank.rankId, rank.program, rank.process.pid(),
                settings.get().stopGrace().toSeconds());
        rank.process.stop(settings.get().stopGrace());
    }

    /**
     * A rank whose channel failed ({@link LiveRank#fault} says why): stopped now, as {@link #stopNow}
     * after a TERMINATE with STOP; a rank still starting is stopped once its process exists. Its
     * host's TERMINATE is answered with the exit status as usual.
     */
    void stopFaulted(LiveRank rank) {
        if (rank.removed || rank.isDone()) {
            return;
        }
        if (rank.phase == Rank.Phase.RUNNING) {
            rank.phase = Rank.Phase.TERMINATING;
        }
        stopNow(rank);
    }

    private void onTerminateTimeout(LiveRank rank) {
        if (rank.removed || rank.phase != Rank.Phase.TERMINATING || rank.process == null || rank.stopped) {
            return;
        }
        rank.stopped = true;
        count.accept(Event.TERMINATE_FORCED);
        log.warn("{} {} rank {}: {} did not exit within {} s of TERMINATE; stopping it", jobWord,
                Job.hex(rank.jobId()), rank.rankId, rank.program, settings.get().terminateTimeout().toSeconds());
        rank.process.stop(settings.get().stopGrace());
    }

    private static void cancelTerminateTimer(LiveRank rank) {
        if (rank.terminateTimer != null) {
            rank.terminateTimer.cancel(false);
            rank.terminateTimer = null;
        }
    }

    /** Releases the rank's channel (its files go with the job's directory); once. */
    void closeChannel(LiveRank rank) {
        RankChannel channel = rank.channel;
        if (channel == null) {
            return;
        }
        rank.channel = null;
        rank.toRank = null;
        rank.fromRank = null;
        ChannelCleanup.close(channels, channel, rank.jobId(), rank.rankId);
    }
}
