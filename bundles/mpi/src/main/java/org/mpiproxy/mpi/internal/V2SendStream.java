package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_WINDOW;
import static org.mpiproxy.mpi.internal.V2HostTransport.MAX_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.MIN_SEND_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2SendStreams.MIN_HOLE_PROBE_NANOS;

import org.mpiproxy.protocol.MpiErrors;

/**
 * The SEND stream to one rank (docs/protocol-v2.md 5.2): its positions, window, kept copies,
 * retransmit timer and the hole being recovered, and when it is next due for a resend.
 * {@link V2SendStreams} moves it; not thread-safe (the transport's lock).
 */
final class V2SendStream {

    long sendNext;
    long sendAcked;
    int window = INITIAL_WINDOW;
    /** A fragment was refused for a full ring (window 0): the next window above 0 sends again from sendAcked. */
    boolean sendStalled;
    int sendResult;
    /** Copies of eager fragments not yet acknowledged; made with the first eager send. */
    RetainedFragments retained;
    /** When {@link #sendAcked} last moved or an eager fragment was (re)sent, and their retransmit timeout. */
    long sendProgressAt;
    final RoundTripEstimator sendTimer = new RoundTripEstimator(INITIAL_RTO_NANOS, MIN_SEND_RTO_NANOS,
            MAX_RTO_NANOS);
    /** The fragment whose acknowledgement times a round trip, -1 when none; when it was sent. */
    long timedSequence = -1;
    long timedAt;
    /**
     * Replies to fragments from this sequence on may start a resend from a hole: those to
     * fragments sent before the last such resend ({@link V2SendStreams#onReply}) report the same hole.
     */
    long resentFrom;
    /** A fragment the proxy's replies show missing, to send again at the next chance; -1 when none. */
    long hole = -1;
    /** The last hole sent again, -1 once its reply came, and the end of the fragments sent before it. */
    long holeResent = -1;
    long holeSentBefore;
    /** When the hole was last sent again, and how often since its first resend (the probe's back-off). */
    long holeResentAt;
    int holeProbes;
    /** One past the highest fragment sent (first time or again) since the last refusal. */
    long sentEnd;
    /** The argument of a refused SEND's reply (the proxy's maximum message size for that refusal). */
    long sendRefusalArgument;

    /**
     * @param now the send streams' clock
     * @return how long until the retransmit timeout or the hole probe is due (the whole timeout with nothing kept)
     */
    long untilOverdue(long now) {
        long timeout = sendTimer.timeoutNanos();
        if (retained == null || retained.isEmpty()) {
            return timeout;
        }
        long left = sendProgressAt + timeout - now;
        if (window > 0 && holeOutstanding()) {
            left = Math.min(left, holeResentAt + holeProbeNanos() - now);
        }
        return Math.max(0, left);
    }

    /**
     * How long after a hole was sent again, with no reply to it, it goes once more: one and a half
     * smoothed round trips, at least {@link #MIN_HOLE_PROBE_NANOS}, doubled per probe, never
     * longer than the retransmit timeout. The host that waits for it has nothing else in flight
     * that could show the loss (every kept copy is out), so this is the tail-loss probe of that wait.
     */
    long holeProbeNanos() {
        long rto = sendTimer.timeoutNanos();
        long srtt = sendTimer.smoothedNanos();
        long probe = srtt < 0 ? rto : Math.max(MIN_HOLE_PROBE_NANOS, srtt + srtt / 2) << Math.min(holeProbes, 20);
        return Math.min(rto, probe);
    }

    /** @return whether the hole sent again still waits for its reply (the hole is the first not acknowledged) */
    boolean holeOutstanding() {
        return holeResent >= 0 && holeResent == sendAcked && retained != null && retained.holds(holeResent);
    }

    /** @return whether fragments sent to the rank wait for the proxy's acknowledgement */
    boolean unacknowledged() {
        return retained != null && sendAcked < retained.end();
    }

    /**
     * Forgets the refusal once it is thrown: the fragments from the refused one on were not
     * stored and are dropped, and the next message starts from the refused fragment's sequence.
     *
     * @return the refused message's size in bytes as its first fragment stated it, or -1
     */
    long dropRefused() {
        sendResult = MpiErrors.SUCCESS;
        // the refused fragment is the first not acknowledged; its kept copy states its message's size
        long bytes = -1;
        if (retained != null) {
            if (retained.holds(sendAcked)) {
                bytes = retained.statedSize(sendAcked);
            }
            retained.dropFrom(sendAcked);
        }
        sendNext = sendAcked;
        resentFrom = sendAcked;
        hole = -1;
        holeResent = -1;
        sentEnd = sendAcked;
        timedSequence = -1;
        return bytes;
    }
}
