package org.mpiproxy.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import org.mpiproxy.api.RankOutputListener;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Protocol v2 OUTPUT (docs/protocol-v2.md 5.5): the lines of ranks whose EXEC asked for it,
 * streamed to the job's owner per (job, rank, stream) with sequence numbers, cumulative
 * acknowledgements, a window, and retransmission with back-off: when the oldest fragment is
 * not acknowledged in time it is sent again, and while recovering, each acknowledgement that
 * advances but stops short of what was sent before the timeout sends the next missing one (the
 * host keeps fragments that arrive after a gap).
 * <p>
 * Lines come in on the launcher's output threads ({@link #onOutput}); each job buffers at most
 * {@link #BUFFER_BYTES} of lines not yet acknowledged, and a full buffer makes the output thread
 * wait, so the rank's pipe fills and the rank blocks in its write: back-pressure, nothing lost.
 * Only a host that acknowledges nothing for {@link #STALL_NANOS} while lines wait loses lines:
 * the job's unsent lines are dropped and counted, and so is every new line until the host
 * acknowledges again; the next fragment sent tells the host how many lines of its stream were
 * dropped. Everything else ({@link #pump}, {@link #onAck}, {@link #open}, {@link #close}) runs
 * on the relay thread; each stream's window and retransmission is a {@link V2OutputStream}.
 * Thread-safe: each job is guarded by its own monitor.
 */
final class V2OutputStreams implements RankOutputListener {

    /** Bytes of lines (plus {@link #LINE_OVERHEAD} each) buffered per job at most. */
    static final long BUFFER_BYTES = 4L << 20;
    /** Accounting cost of a fragment besides its text. */
    static final int LINE_OVERHEAD = 64;
    /** Fragments sent and not acknowledged per stream at most. */
    static final int WINDOW = 64;
    /** Silence of the host, while lines wait, after which the job's lines are dropped. */
    static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final long INITIAL_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final long MAX_RTO_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final Logger LOG = LoggerFactory.getLogger(V2OutputStreams.class);

    private final ConcurrentHashMap<Long, V2JobOutput> jobs = new ConcurrentHashMap<>();
    /** The lines of jobs handed over that still come here, and those of earlier revisions. */
    private final LateOutput late = new LateOutput();
    private final int maxPayload;
    private final Runnable wakeup;
    private final LongSupplier nanoClock;
    private final long bufferBytes;
    private final long stallNanos;
    // relay thread only
    private final List<Waiter> waiters = new ArrayList<>();
    private final LongAdder lines = new LongAdder();
    private final LongAdder fragments = new LongAdder();
    private final LongAdder resent = new LongAdder();
    private final LongAdder acks = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder stalls = new LongAdder();
    private final LongAdder waits = new LongAdder();

    /** A continuation run once a rank's output is all acknowledged (or given up). */
    private record Waiter(long jobId, int rankId, Runnable then) {
    }

    /**
     * @param maxPayload  the largest OUTPUT payload (a longer line is sent in several fragments)
     * @param wakeup      makes the relay thread call {@link #pump} soon; any thread
     * @param nanoClock   monotonic nanoseconds
     * @param bufferBytes bytes buffered per job before writers wait
     * @param stallNanos  host silence after which waiting lines are dropped
     */
    V2OutputStreams(int maxPayload, Runnable wakeup, LongSupplier nanoClock, long bufferBytes, long stallNanos) {
        if (maxPayload < 1) {
            throw new IllegalArgumentException("maxPayload=" + maxPayload + " must be >= 1");
        }
        this.maxPayload = maxPayload;
        this.wakeup = wakeup;
        this.nanoClock = nanoClock;
        this.bufferBytes = bufferBytes;
        this.stallNanos = stallNanos;
    }

    V2OutputStreams(int maxPayload, Runnable wakeup) {
        this(maxPayload, wakeup, System::nanoTime, BUFFER_BYTES, STALL_NANOS);
    }

    // ------------------------------------------------------------------ relay thread

    /** Streams the output of a rank of a job from now on. */
    void open(long jobId, int rankId) {
        V2JobOutput job = jobs.computeIfAbsent(jobId, id -> new V2JobOutput(id, stallNanos));
        synchronized (job) {
            job.ranks.computeIfAbsent(rankId, r -> new V2OutputStream[] {
                new V2OutputStream(V2HeaderDescriptor.STREAM_STDOUT), new V2OutputStream(V2HeaderDescriptor.STREAM_STDERR),
                pmiStream()});
        }
    }

    /** Forgets a job: what it buffered is discarded and its waiting writers return. */
    void close(long jobId) {
        V2JobOutput job = jobs.remove(jobId);
        if (job == null) {
            return;
        }
        synchronized (job) {
            job.closed = true;
            job.notifyAll();
        }
        waiters.removeIf(w -> w.jobId() == jobId);
    }

    /** Forgets every job. */
    void closeAll() {
        for (Long jobId : new ArrayList<>(jobs.keySet())) {
            close(jobId);
        }
        waiters.clear();
    }

    /**
     * Instead of {@link #closeAll()}, when the next revision of the proxy takes over: every job's
     * streams as plain values ({@link V2OutputStream#export()}). The jobs are closed here: writers
     * waiting for room return, and lines that come later are not taken.
     *
     * @return each job's {@link V2JobOutput#export()}
     */
    List<Map<String, Object>> handOver() {
        late.handOver(jobs.keySet());
        List<Map<String, Object>> out = new ArrayList<>();
        for (V2JobOutput job : jobs.values()) {
            synchronized (job) {
                out.add(job.export());
                job.closed = true;
                job.notifyAll();
            }
        }
        jobs.clear();
        waiters.clear();
        return out;
    }

    /**
     * Takes over the streams a previous revision's {@link #handOver()} gave; before the first pump.
     *
     * @return the ids of the jobs whose streams could not be taken over (values of another type)
     */
    List<Long> adopt(List<?> exported) {
        List<Long> lost = new ArrayList<>();
        for (Object o : exported) {
            Map<String, Object> m = RankHandOver.asMap(o);
            try {
                V2JobOutput job = V2JobOutput.restore(m, nanoClock.getAsLong());
                jobs.put(job.jobId, job);
            } catch (ClassCastException | NullPointerException | IllegalArgumentException e) {
                lost.add(m.get("jobId") instanceof Long ? (Long) m.get("jobId") : -1L);
            }
        }
        return lost;
    }

    /**
     * A host's acknowledgement: every fragment of the stream below {@code next} arrived.
     *
     * @return {@code false} when the job, rank or stream is not streamed, or {@code next} is
     *         beyond what was sent
     */
    boolean onAck(long jobId, long rankId, int streamCode, long next) {
        V2JobOutput job = jobs.get(jobId);
        if (job == null || rankId < 0 || rankId > Integer.MAX_VALUE) {
            return false;
        }
        synchronized (job) {
            V2OutputStream[] streams = job.ranks.get((int) rankId);
            V2OutputStream stream = streams == null ? null : streamOf(streams, streamCode);
            if (stream == null || next > stream.next) {
                return false;
            }
            acks.increment();
            long now = nanoClock.getAsLong();
            long freed = stream.acknowledge(next, now);
            if (freed > 0) {
                job.buffered -= freed;
                job.lastProgress = now;
                if (job.stalled) {
                    job.stalled = false;
                    LOG.info("v2 job {}: the host acknowledges output again", Job.hex(jobId));
                    job.notifyAll();
                } else if (job.buffered <= bufferBytes / 2) {
                    // writers wait for half the buffer, not for each acknowledgement: fewer wake-ups
                    job.notifyAll();
                }
            } else if (job.stalled && stream.inFlight.isEmpty()) {
                // the host is alive and has everything sent: stream again
                job.stalled = false;
                job.lastProgress = now;
            }
            return true;
        }
    }

    /**
     * Sends new fragments within each stream's window, retransmits what was not acknowledged in
     * time, drops a stalled job's waiting lines, and runs continuations whose rank is drained.
     *
     * @return fragments sent
     */
    int pump(V2OutputSender sender) {
        late.replay(this);
        if (jobs.isEmpty() && waiters.isEmpty()) {
            // the relay's every pass comes here: no iterators when no job streams output
            return 0;
        }
        int sent = 0;
        long now = nanoClock.getAsLong();
        for (V2JobOutput job : jobs.values()) {
            synchronized (job) {
                if (job.closed) {
                    continue;
                }
                boolean waiting = false;
                for (Map.Entry<Integer, V2OutputStream[]> e : job.ranks.entrySet()) {
                    for (V2OutputStream stream : e.getValue()) {
                        sent += stream.pump(sender, job.jobId, e.getKey(), now, fragments, resent);
                        waiting |= !stream.idle();
                    }
                }
                if (waiting && !job.stalled && now - job.lastProgress > job.stallNanos) {
                    stall(job);
                }
            }
        }
        if (!waiters.isEmpty()) {
            List<Waiter> ready = new ArrayList<>();
            for (int i = waiters.size() - 1; i >= 0; i--) {
                Waiter w = waiters.get(i);
                if (drained(w.jobId(), w.rankId())) {
                    ready.add(waiters.remove(i));
                }
            }
            for (int i = ready.size() - 1; i >= 0; i--) {
                ready.get(i).then().run();
            }
        }
        return sent;
    }

    private void stall(V2JobOutput job) {
        stalls.increment();
        long lost = job.stall();
        dropped.add(lost);
        job.notifyAll();
        LOG.warn("v2 job {}: the host acknowledged no output for {} s; {} waiting lines dropped, new lines are dropped"
                + " until it acknowledges again", Job.hex(job.jobId), TimeUnit.NANOSECONDS.toSeconds(job.stallNanos), lost);
    }

    /**
     * Waits at most {@code nanos} of the host's silence for the job's output from now on, instead
     * of the stall time: the job is being stopped (TERMINATE with STOP), and a launcher that died
     * with it must not hold the answers for the whole stall time. A host that still acknowledges
     * loses nothing.
     */
    void hurry(long jobId, long nanos) {
        V2JobOutput job = jobs.get(jobId);
        if (job != null) {
            synchronized (job) {
                job.stallNanos = Math.min(job.stallNanos, nanos);
            }
        }
    }

    /**
     * @return whether everything the rank wrote has been acknowledged: each stream ended (or
     *         never started) and holds nothing, or the job's host stalled, or the rank is not streamed
     */
    boolean drained(long jobId, int rankId) {
        V2JobOutput job = jobs.get(jobId);
        if (job == null) {
            return true;
        }
        synchronized (job) {
            V2OutputStream[] streams = job.ranks.get(rankId);
            if (streams == null || job.stalled) {
                return true;
            }
            for (V2OutputStream s : streams) {
                if (!s.idle() || (s.started && !s.ended && !s.adopted)) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Runs {@code then} on the relay thread once the rank's output is {@link #drained}: at once
     * when it already is.
     */
    void whenDrained(long jobId, int rankId, Runnable then) {
        if (drained(jobId, rankId)) {
            then.run();
        } else {
            waits.increment();
            waiters.add(new Waiter(jobId, rankId, then));
        }
    }

    /** @return whether a stream has fragments to send or to see acknowledged, or a rank waits to drain */
    boolean hasPendingWork() {
        if (!waiters.isEmpty()) {
            return true;
        }
        for (V2JobOutput job : jobs.values()) {
            synchronized (job) {
                for (V2OutputStream[] streams : job.ranks.values()) {
                    for (V2OutputStream s : streams) {
                        if (!s.idle()) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    Map<String, Long> counters() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("v2.output.lines", lines.sum());
        m.put("v2.output.fragments", fragments.sum());
        m.put("v2.output.resent", resent.sum());
        m.put("v2.output.acks", acks.sum());
        m.put("v2.output.dropped", dropped.sum());
        m.put("v2.output.stalls", stalls.sum());
        m.put("v2.output.terminate.waits", waits.sum());
        return m;
    }

    // ------------------------------------------------------------------ output threads

    @Override
    public void onOutput(long jobId, int rankId, RankOutputListener.Stream which, String text, boolean partial) {
        V2JobOutput job = jobs.get(jobId);
        if (job == null) {
            late.keep(jobId, rankId, which == RankOutputListener.Stream.STDOUT ? 0 : 1, text, partial);
            return;
        }
        append(job, rankId, which == RankOutputListener.Stream.STDOUT ? 0 : 1, text, partial, true);
    }

    private void append(V2JobOutput job, int rankId, int index, String text, boolean partial, boolean wait) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int pieces = Math.max(1, (bytes.length + maxPayload - 1) / maxPayload);
        long cost = (long) bytes.length + (long) pieces * LINE_OVERHEAD;
        boolean wake;
        synchronized (job) {
            V2OutputStream[] streams = job.ranks.get(rankId);
            if (streams == null) {
                return;
            }
            V2OutputStream stream = streams[index];
            stream.started = true;
            // a line larger than the whole buffer is still taken once the buffer is empty
            while (wait && !job.closed && !job.stalled && job.buffered > 0 && job.buffered + cost > bufferBytes) {
                try {
                    job.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            if (job.closed) {
                return;
            }
            lines.increment();
            if (job.stalled) {
                stream.dropped++;
                dropped.increment();
                return;
            }
            wake = stream.unsent.isEmpty();
            if (stream.idle()) {
                job.lastProgress = nanoClock.getAsLong();
            }
            for (int i = 0; i < pieces; i++) {
                int from = i * maxPayload;
                int length = Math.min(maxPayload, bytes.length - from);
                stream.unsent.addLast(new V2OutputStream.Fragment(bytes, from, length, i == 0, i == pieces - 1, partial));
            }
            job.buffered += cost;
        }
        if (wake) {
            wakeup.run();
        }
    }

    @Override
    public void onEnd(long jobId, int rankId, RankOutputListener.Stream which) {
        V2JobOutput job = jobs.get(jobId);
        if (job == null) {
            late.keep(jobId, rankId, which == RankOutputListener.Stream.STDOUT ? 0 : 1, null, false);
            return;
        }
        end(job, rankId, which == RankOutputListener.Stream.STDOUT ? 0 : 1);
    }

    private void end(V2JobOutput job, int rankId, int index) {
        synchronized (job) {
            V2OutputStream[] streams = job.ranks.get(rankId);
            if (streams != null) {
                streams[index].ended = true;
            }
        }
        wakeup.run();
    }

    /** @return the lines of jobs handed over that came after {@link #handOver()} (and earlier revisions'), for the next */
    Object lateLines() {
        return late.export();
    }

    /** Takes a previous revision's {@link #lateLines()} and gives what they hold now and on every pump. */
    void adoptLate(Object lateLines) {
        late.inherit(lateLines, this);
    }

    /** A line (or a stream's end, {@code text} null) an earlier revision kept; never waits for room. */
    void replayed(long jobId, int rankId, int index, String text, boolean partial) {
        V2JobOutput job = jobs.get(jobId);
        if (job != null && text != null) {
            append(job, rankId, index, text, partial, false);
        } else if (job != null) {
            end(job, rankId, index);
        }
    }

    private static V2OutputStream streamOf(V2OutputStream[] streams, int code) {
        switch (code) {
            case V2HeaderDescriptor.STREAM_STDOUT:
                return streams[0];
            case V2HeaderDescriptor.STREAM_STDERR:
                return streams[1];
            case V2HeaderDescriptor.STREAM_PMI:
                return streams[2];
            default:
                return null;
        }
    }

    /** The PMI stream has no end of its own: it is drained whenever its lines are acknowledged. */
    private static V2OutputStream pmiStream() {
        V2OutputStream pmi = new V2OutputStream(V2HeaderDescriptor.STREAM_PMI);
        pmi.ended = true;
        return pmi;
    }

    /**
     * Streams one of a rank's PMI requests that concern the whole job (a {@code put}, its
     * {@code barrier_in}, an {@code abort}) to the job's output port, in order with the rank's
     * others; as output lines, with the same back-pressure. Any thread.
     *
     * @param jobId  the job
     * @param rankId the rank
     * @param line   the PMI line, without its line end
     * @return {@code false} when the rank's output is not streamed (its EXEC did not ask for it)
     */
    boolean onPmiLine(long jobId, int rankId, String line) {
        V2JobOutput job = jobs.get(jobId);
        if (job == null) {
            return late.keep(jobId, rankId, 2, line, false);
        }
        synchronized (job) {
            if (job.ranks.get(rankId) == null) {
                return false;
            }
        }
        append(job, rankId, 2, line, false, true);
        return true;
    }
}
