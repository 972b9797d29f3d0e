package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops jobs as a whole: on the first failed rank (abort on failure), when the job's time is
 * up (job timeout) and when its host has been silent too long. Stopping a rank is
 * {@code RankProcess.stop(grace)}: SIGTERM to its process group, SIGKILL after the grace.
 * <p>
 * Threading: the {@code on*} methods run on the relay thread under the dispatcher's lock;
 * timers fire on the timer thread and only post work back to the relay thread.
 */
final class JobSupervisor {

    private static final Logger LOG = LoggerFactory.getLogger(JobSupervisor.class);

    /** Removes the ranks of a job that have ended, as TERMINATE would; relay thread. */
    @FunctionalInterface
    interface Reaper {
        void reap(DatagramTransport replies, Job job);
    }

    private final ScheduledExecutorService timer;
    private final Consumer<RelayQueue.Completion> post;
    private final Supplier<Duration> grace;
    private final Reaper reaper;
    private final LongSupplier clock;
    private volatile SupervisionSettings settings = SupervisionSettings.DEFAULT;
    private volatile RankLedger ledger;

    /**
     * @param timer  runs the job timers
     * @param post   hands work to the relay thread
     * @param grace  the current time between SIGTERM and SIGKILL
     * @param reaper removes ended ranks of a job nobody will TERMINATE
     * @param clock  the time the host's silence is measured in ({@link System#nanoTime}; the
     *               timer's delays run on it too)
     */
    JobSupervisor(ScheduledExecutorService timer, Consumer<RelayQueue.Completion> post, Supplier<Duration> grace,
                  Reaper reaper, LongSupplier clock) {
        this.timer = timer;
        this.post = post;
        this.grace = grace;
        this.reaper = reaper;
        this.clock = clock;
    }

    /** @return the time on the clock a host's silence is measured in, nanoseconds */
    long now() {
        return clock.getAsLong();
    }

    /** Applies new settings to jobs created from now on; any thread. */
    void settings(SupervisionSettings newSettings) {
        this.settings = newSettings;
    }

    SupervisionSettings settings() {
        return settings;
    }

    /** Records started ranks from now on in {@code newLedger} ({@code null}: nowhere); any thread. */
    void ledger(RankLedger newLedger) {
        this.ledger = newLedger;
    }

    /** A new job: takes the current settings and starts its timers. */
    void onJobCreated(Job job, long nowNanos) {
        SupervisionSettings s = settings;
        job.abortOnFailure = s.abortOnFailure();
        job.lastHeardNanos = nowNanos;
        if (!s.jobTimeout().isZero()) {
            job.timeoutTimer = schedule(s.jobTimeout(), () -> post.accept(r -> onTimeout(job, s.jobTimeout())));
        }
        if (!s.hostSilence().isZero()) {
            scheduleSilenceCheck(job, s.hostSilence(), s.hostSilence());
        }
    }

    /** The host of a job sent a request. */
    /**
     * A job a previous revision of the proxy handed over: its timeout counts from its start, its
     * host's silence from when the host was last heard; both with the settings in force now.
     */
    void onJobAdopted(Job job, long nowNanos) {
        SupervisionSettings s = settings;
        if (!s.jobTimeout().isZero()) {
            Duration left = s.jobTimeout().minus(Duration.between(job.started, java.time.Instant.now()));
            job.timeoutTimer = schedule(left.isNegative() ? Duration.ZERO : left,
                    () -> post.accept(r -> onTimeout(job, s.jobTimeout())));
        }
        if (!s.hostSilence().isZero()) {
            long silent = Math.max(0, nowNanos - job.lastHeardNanos);
            scheduleSilenceCheck(job, s.hostSilence(), Duration.ofNanos(Math.max(0, s.hostSilence().toNanos() - silent)));
        }
    }

    /** Before a hand-over: the job's timers stop here (the taker arms its own). */
    static void forget(Job job) {
        cancel(job.timeoutTimer);
        cancel(job.silenceTimer);
        job.timeoutTimer = null;
        job.silenceTimer = null;
    }

    static void onHostHeard(Job job, long nowNanos) {
        job.lastHeardNanos = nowNanos;
    }

    /** A rank's process has started; a job being stopped stops it at once. */
    void onRankStarted(Rank rank) {
        RankLedger l = ledger;
        if (l != null && rank.process != null) {
            l.rankStarted(rank.job.jobId, rank.rankId, rank.process.pid());
        }
        if (rank.job.stopReason != null && rank.process != null) {
            rank.process.stop(grace.get());
        }
    }

    /** A rank could not be started. */
    void onRankFailed(Rank rank) {
        Job job = rank.job;
        if (job.abortOnFailure && job.stopReason == null) {
            stop(job, "rank " + rank.rankId + " (" + rank.program + ") could not be started", false);
        }
    }

    /** A rank's process has ended; its exit status is set. */
    void onRankExited(Rank rank) {
        Job job = rank.job;
        if (rank.exitStatus != 0 && job.abortOnFailure && job.stopReason == null) {
            stop(job, "rank " + rank.rankId + " (" + rank.program + ") exited with status " + rank.exitStatus,
                    false);
        }
    }

    /** A rank's ring faulted ({@code reason} names the cause): the job is stopped, whatever its abort setting. */
    void onRingFault(Job job, String reason) {
        if (job.stopReason == null && !job.ended) {
            stop(job, reason, false);
        }
    }

    /** The job's last rank is gone: its timers stop. */
    void onJobFinished(Job job) {
        RankLedger l = ledger;
        if (l != null) {
            l.jobEnded(job.jobId);
        }
        cancel(job.timeoutTimer);
        cancel(job.silenceTimer);
        job.timeoutTimer = null;
        job.silenceTimer = null;
    }

    private void onTimeout(Job job, Duration timeout) {
        if (job.ended || job.stopReason != null) {
            return;
        }
        stop(job, "job timeout of " + timeout.toMillis() / 1000.0 + " s reached", false);
    }

    private void onSilenceCheck(DatagramTransport replies, Job job, Duration silence) {
        if (job.ended) {
            return;
        }
        long now = clock.getAsLong();
        for (Rank rank : job.ranks()) {
            // a v1 host blocked in RECV sends nothing while it waits, however long the ranks compute
            if (!rank.recvs.isEmpty()) {
                job.lastHeardNanos = now;
                break;
            }
        }
        long silentNanos = now - job.lastHeardNanos;
        if (silentNanos < silence.toNanos()) {
            scheduleSilenceCheck(job, silence, Duration.ofNanos(silence.toNanos() - silentNanos));
            return;
        }
        // nobody will TERMINATE these ranks: they are removed as soon as they have exited
        stop(job, "host silent for " + TimeUnit.NANOSECONDS.toSeconds(silentNanos) + " s", true);
        reaper.reap(replies, job);
    }

    /** Stops every running rank; with {@code reap}, ranks are removed once ended, without waiting for TERMINATE. */
    private void stop(Job job, String reason, boolean reap) {
        if (job.stopReason == null) {
            job.stopReason = reason;
        }
        LOG.warn("job {} of {}: {}; stopping its ranks", Job.hex(job.jobId), Job.ownerText(job.owner), reason);
        Duration g = grace.get();
        for (Rank rank : job.ranks()) {
            if (reap) {
                rank.terminateRequested = true;
            }
            if (rank.process != null && !rank.isDone()) {
                rank.process.stop(g);
            }
        }
    }

    private void scheduleSilenceCheck(Job job, Duration silence, Duration delay) {
        job.silenceTimer = schedule(delay, () -> post.accept(r -> onSilenceCheck(r, job, silence)));
    }

    private Future<?> schedule(Duration delay, Runnable task) {
        try {
            return timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    private static void cancel(Future<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }
}
