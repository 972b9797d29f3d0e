package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.MAX_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.PROGRESS_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.PROGRESS_REPEAT_NANOS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Job control of a v2 host (docs/protocol-v2.md 5.1, 5.4): every rank's EXEC and TERMINATE sent at
 * once, idempotent and repeated with back-off until answered (to a node that refused one as busy,
 * only once its own back-off is over, docs/protocol-v2.md 3.5), the launch's progress reported, the
 * exit statuses collected. Not thread-safe: every call holds the transport's lock.
 */
final class V2JobControl {

    private final V2Exchange exchange;
    private final V2Rank[] ranks;
    private final V2SendStreams send;
    private final boolean streamOutput;
    private final PrintStream diagnostics;
    private int[] exitStatuses;

    /**
     * @param streamOutput whether every proxy is asked to stream its rank's output here
     */
    V2JobControl(V2Exchange exchange, V2SendStreams send, boolean streamOutput) {
        this.exchange = exchange;
        this.ranks = exchange.ranks;
        this.send = send;
        this.streamOutput = streamOutput;
        this.diagnostics = exchange.diagnostics;
    }

    /**
     * Sends every rank's EXEC at once (all nodes start in parallel) and a probe to every node
     * (so that a port where nothing listens or a refusal shows within a second), after the job's
     * credential when it signs with a job key (docs/protocol-v2.md 5.9), repeats the
     * unanswered EXECs with back-off, and, when the launch takes longer than
     * {@link V2HostTransport#PROGRESS_NANOS}, reports {@code mpi: k of n ranks started} to the
     * diagnostics stream: once, then whenever k changed (at most once a second) and every
     * {@link V2HostTransport#PROGRESS_REPEAT_NANOS} while it does not.
     */
    void exec(byte[] command) {
        long now = System.nanoTime();
        for (V2Node n : exchange.nodes.values()) {
            n.lastHeard = now;
            n.silentFrom = now;
            n.lastWatched = now;
            if (exchange.credential != null) {
                exchange.credential.present(n, now);
            }
            exchange.probe(n, now);
        }
        exchange.launching(true);
        long rto = INITIAL_RTO_NANOS;
        long begin = now;
        long nextProgress = now + PROGRESS_NANOS;
        int shownDone = -1;
        long shownAt = now;
        boolean progressShown = false;
        while (true) {
            boolean pending = false;
            long round = System.nanoTime();
            for (int r = 1; r < ranks.length; r++) {
                V2Rank s = ranks[r];
                if (s.execResult < 0) {
                    pending = true;
                    if (s.at.holdsOff(round)) {
                        continue;
                    }
                    exchange.header(OP_EXEC, r).flags(streamOutput ? FLAG_OUTPUT : 0).argument(ranks.length)
                            .core(s.node.coreId()).payloadLength(command.length);
                    exchange.out.put(HEADER_LENGTH, command);
                    exchange.transmit(r);
                }
            }
            if (!pending) {
                break;
            }
            // output of ranks already started arrives meanwhile: repeat EXECs only after the timeout
            awaitRepliesFor(rto, V2Exchange.WATCH_EXECS, this::execsAnswered);
            rto = Math.min(rto * 2, MAX_RTO_NANOS);
            long t = System.nanoTime();
            if (t - nextProgress >= 0 && !execsAnswered()) {
                int done = execsDone();
                if (done != shownDone || t - shownAt >= PROGRESS_REPEAT_NANOS) {
                    diagnostics.println("mpi: " + done + " of " + (ranks.length - 1) + " ranks started");
                    shownDone = done;
                    shownAt = t;
                    progressShown = true;
                }
                nextProgress = t + PROGRESS_NANOS;
            }
        }
        exchange.launching(false);
        if (progressShown) {
            diagnostics.println("mpi: all " + (ranks.length - 1) + " ranks answered in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin) + " ms");
        }
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].execResult != MpiErrors.SUCCESS) {
                throw new MpiException(ranks[r].execResult, "rank " + r + " on " + ranks[r].node + " was not started: "
                        + MpiErrors.name(ranks[r].execResult)
                        + (ranks[r].execReason != null ? ": " + ranks[r].execReason : ""));
            }
        }
    }

    /** As {@link V2HostTransport#finish()}: the socket is closed afterwards. */
    int[] finish() {
        if (exitStatuses != null) {
            return exitStatuses.clone();
        }
        exchange.launching(false);
        int[] statuses = new int[ranks.length];
        try {
            send.drainEager();
            long rto = INITIAL_RTO_NANOS;
            long now = System.nanoTime();
            for (V2Node n : exchange.nodes.values()) {
                n.lastHeard = now;
                n.silentFrom = now;
                n.lastWatched = now;
            }
            // a proxy answers TERMINATE once the rank exited; until then its interim replies show it alive
            long timeoutNanos = exchange.timeoutNanos;
            long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE
                    : now + timeoutNanos + TimeUnit.SECONDS.toNanos(45);
            while (true) {
                boolean pending = false;
                long round = System.nanoTime();
                for (int r = 1; r < ranks.length; r++) {
                    if (ranks[r].awaitsTerminate()) {
                        pending = true;
                        if (ranks[r].at.holdsOff(round)) {
                            continue;
                        }
                        exchange.header(OP_TERMINATE, r).core(ranks[r].node.coreId());
                        exchange.transmit(r);
                    }
                }
                if (!pending || System.nanoTime() >= deadline) {
                    break;
                }
                try {
                    awaitRepliesFor(rto, V2Exchange.WATCH_TERMINATING, this::terminatesAnswered);
                } catch (MpiException e) {
                    diagnostics.println("mpi: " + e.getMessage());
                    break;
                }
                // ask at least four times per silence: each repetition earns an interim reply from a live node
                rto = Math.min(Math.min(rto * 2, MAX_RTO_NANOS),
                        Math.max(INITIAL_RTO_NANOS, exchange.silenceNanos() / 4));
            }
            for (int r = 1; r < ranks.length; r++) {
                V2Rank s = ranks[r];
                if (s.terminateResult < 0) {
                    statuses[r] = -1;
                    if (s.execResult >= 0 && !s.at.dead) {
                        diagnostics.println("mpi: no TERMINATE reply for rank " + r + " from " + s.node);
                    }
                } else {
                    statuses[r] = s.terminateResult == MpiErrors.SUCCESS ? (int) s.terminateStatus : -1;
                    if (statuses[r] != 0) {
                        diagnostics.println("mpi: rank " + r + " on " + s.node + " exited with status " + statuses[r]);
                    }
                }
            }
        } finally {
            exchange.closeSocket();
        }
        exitStatuses = statuses;
        return statuses.clone();
    }

    private int execsDone() {
        int n = 0;
        for (int r = 1; r < ranks.length; r++) {
            n += ranks[r].execResult == MpiErrors.SUCCESS ? 1 : 0;
        }
        return n;
    }

    private boolean execsAnswered() {
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].execResult < 0) {
                return false;
            }
        }
        return true;
    }

    private boolean terminatesAnswered() {
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].awaitsTerminate()) {
                return false;
            }
        }
        return true;
    }

    /** Waits up to {@code nanos} for replies, less when {@code done} turns true. */
    private void awaitRepliesFor(long nanos, int watched, BooleanSupplier done) {
        long end = System.nanoTime() + nanos;
        long left = nanos;
        do {
            exchange.awaitReplies(left, watched);
            left = end - System.nanoTime();
        } while (left > 0 && !done.getAsBoolean());
    }
}
