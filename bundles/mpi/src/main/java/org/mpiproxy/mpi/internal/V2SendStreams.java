package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.EAGER_BYTES_PER_RANK;
import static org.mpiproxy.mpi.internal.V2HostTransport.EAGER_SLOTS;
import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_WINDOW;
import static org.mpiproxy.mpi.internal.V2HostTransport.MAX_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.MIN_SEND_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.OVERDUE_SCAN_NANOS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;

import java.nio.ByteBuffer;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The SEND stream to every rank of a v2 job (docs/protocol-v2.md 5.2): fragments sent eagerly
 * within the proxy's window, a copy kept until acknowledged, sent again from a hole the proxy's
 * replies show or after a measured retransmit timeout with back-off, refusals thrown by the next
 * call to that rank. No allocation per fragment. Not thread-safe: every call holds the
 * transport's lock.
 */
final class V2SendStreams {

    /** Per rank: the stream's positions, window, kept copies and retransmit timer. */
    private static final class Stream {
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
         * fragments sent before the last such resend ({@link #onReply}) report the same hole.
         */
        long resentFrom;
        /** A fragment the proxy's replies show missing, to send again at the next chance; -1 when none. */
        long hole = -1;
        /** The last hole sent again, -1 once its reply came, and the end of the fragments sent before it. */
        long holeResent = -1;
        long holeSentBefore;
        /** One past the highest fragment sent (first time or again) since the last refusal. */
        long sentEnd;
        /** The argument of a refused SEND's reply (the proxy's maximum message size for that refusal). */
        long sendRefusalArgument;
    }

    private final V2Exchange exchange;
    private final V2Rank[] ranks;
    private final Stream[] streams;
    /** When {@link #resendOverdue} last looked through the ranks. */
    private long lastOverdueScan = System.nanoTime() - OVERDUE_SCAN_NANOS;

    V2SendStreams(V2Exchange exchange) {
        this.exchange = exchange;
        this.ranks = exchange.ranks;
        this.streams = new Stream[ranks.length];
        for (int r = 1; r < ranks.length; r++) {
            streams[r] = new Stream();
        }
    }

    /** As {@link V2HostTransport#send(int, int, ByteBuffer, int, int, int)}. */
    void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
        Stream s = streams[dest];
        // what arrived since the last call: acknowledgements free kept copies, a refusal is thrown now
        exchange.receive();
        resendOverdue();
        throwRefusal(s, dest);
        int size = MpiDatatype.sizeOf(datatype);
        int perFragment = exchange.maxPayload / size;
        long bytes = (long) count * size;
        for (int from = 0; from < count; from += perFragment) {
            int n = Math.min(perFragment, count - from);
            // the first fragment states the message's size, so a proxy can refuse it before storing any
            sendKept(datatype, tag, src, offset + from * size, n, size, dest, from + n == count,
                    from == 0 ? bytes : 0);
        }
    }

    /** As {@link V2HostTransport#flush(int)}. */
    void flush(int dest) {
        Stream s = streams[dest];
        // a node that falls silent fails the wait (awaitReplies)
        while (unacknowledged(s) && s.sendResult == MpiErrors.SUCCESS) {
            pumpKept(dest);
            exchange.awaitReplies(s.sendTimer.timeoutNanos(), dest);
        }
        throwRefusal(s, dest);
    }

    /**
     * One fragment: sent and kept. The acknowledgement comes during a later call; until then the
     * kept copy is sent again after the retransmit timeout ({@link #resendOverdue}) or at once
     * when a reply shows the proxy missed it ({@link #onReply}). Waits only while the window
     * or the kept copies are full.
     *
     * @param at        the byte index of the fragment's first element in {@code src}
     * @param n         the fragment's elements
     * @param last      whether it ends its message
     * @param statedSize the message's size in bytes on its first fragment, else 0
     */
    private void sendKept(int datatype, int tag, ByteBuffer src, int at, int n, int size, int dest, boolean last,
                          long statedSize) {
        Stream s = streams[dest];
        if (s.retained == null) {
            int datagramSize = exchange.datagramSize;
            s.retained = new RetainedFragments(Math.max(1, Math.min(EAGER_SLOTS, EAGER_BYTES_PER_RANK / datagramSize)),
                    datagramSize);
        }
        RetainedFragments kept = s.retained;
        while (true) {
            long next = Math.max(s.sendNext, kept.end());
            long inFlight = next - s.sendAcked;
            // with nothing in flight a full ring (window 0) still gets this one, as the probe
            long window = Math.max(s.window, kept.isEmpty() ? 1 : 0);
            if (s.sendNext >= kept.end() && inFlight < window && kept.size() < kept.slots()) {
                break;
            }
            pumpKept(dest);
            exchange.awaitReplies(s.sendTimer.timeoutNanos(), dest);
            throwRefusal(s, dest);
        }
        resendHole(dest);
        int bytes = n * size;
        long sequence = Math.max(s.sendNext, kept.end());
        exchange.header(OP_SEND, dest).flags(last ? FLAG_END_OF_MESSAGE : 0).datatype(datatype).tag(tag)
                .sequence(sequence).ack(statedSize).argument(n).payloadLength(bytes);
        ByteBuffer out = exchange.out;
        out.put(HEADER_LENGTH, src, at, bytes);
        long now = System.nanoTime();
        if (kept.isEmpty()) {
            s.sendProgressAt = now;
            s.sendTimer.progress();
        }
        kept.keep(sequence, out, HEADER_LENGTH + bytes);
        exchange.transmit(dest);
        s.sendNext = sequence + 1;
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        if (s.timedSequence < 0) {
            s.timedSequence = sequence;
            s.timedAt = now;
        }
    }

    /** Sends the hole the proxy's replies showed again, if it is still not acknowledged. */
    private void resendHole(int dest) {
        Stream s = streams[dest];
        long hole = s.hole;
        if (hole >= 0) {
            s.hole = -1;
            if (hole >= s.sendAcked && s.retained != null && s.retained.holds(hole)) {
                s.holeResent = hole;
                s.holeSentBefore = s.sentEnd;
                resendKept(dest, hole);
            }
        }
    }

    /** Sends the kept fragments from {@code sendNext} on, as far as the window allows. */
    private void pumpKept(int dest) {
        resendHole(dest);
        Stream s = streams[dest];
        long limit = s.sendAcked + Math.max(s.window, 0);
        s.sendNext = Math.max(s.sendNext, s.sendAcked);
        while (s.retained != null && s.sendNext < s.retained.end() && s.sendNext < limit) {
            resendKept(dest, s.sendNext);
            s.sendNext++;
        }
    }

    private void resendKept(int dest, long sequence) {
        Stream s = streams[dest];
        if (sequence <= s.timedSequence) {
            s.timedSequence = -1; // its acknowledgement could answer either copy
        }
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        ByteBuffer out = exchange.out;
        out.clear();
        s.retained.copy(sequence, out);
        exchange.transmit(dest);
    }

    /**
     * Eager fragments whose acknowledgement is overdue go out again from the first one not
     * acknowledged (one only while the window is 0: a probe), with the timeout doubled; called
     * after every wait for datagrams, whatever the call waits for, so that a rank waiting for an
     * eager message that was lost gets it while the host waits in {@code recv} or {@code finish}.
     */
    void resendOverdue() {
        long now = System.nanoTime();
        // every send comes here: the ranks are looked through once per millisecond at most
        if (now - lastOverdueScan < OVERDUE_SCAN_NANOS) {
            return;
        }
        lastOverdueScan = now;
        for (int r = 1; r < ranks.length; r++) {
            Stream s = streams[r];
            RetainedFragments kept = s.retained;
            if (kept == null || s.sendResult != MpiErrors.SUCCESS) {
                continue;
            }
            // acknowledgements released what they covered as they came
            if (kept.isEmpty() || ranks[r].at.dead) {
                continue;
            }
            resendHole(r);
            if (now - s.sendProgressAt >= s.sendTimer.timeoutNanos()) {
                s.sendNext = s.sendAcked;
                if (s.window <= 0) {
                    if (kept.holds(s.sendNext)) {
                        resendKept(r, s.sendNext);
                        s.sendNext++;
                    }
                } else {
                    pumpKept(r);
                }
                s.sendTimer.backOff();
                s.sendProgressAt = now;
            } else if (s.sendNext < kept.end()) {
                // a window update after a full ring sent us back: the kept ones go out again now
                pumpKept(r);
            }
        }
    }

    /**
     * Throws the refusal of a SEND to rank {@code dest} (once), of a message sent by this call or
     * an earlier one. The fragments after the refused one were not stored: they are dropped, and
     * the next message starts from the refused fragment's sequence.
     */
    private void throwRefusal(Stream s, int dest) {
        int result = s.sendResult;
        if (result == MpiErrors.SUCCESS) {
            return;
        }
        s.sendResult = MpiErrors.SUCCESS;
        // the refused fragment is the first not acknowledged; its kept copy states its message's size
        long bytes = -1;
        if (s.retained != null) {
            if (s.retained.holds(s.sendAcked)) {
                bytes = s.retained.statedSize(s.sendAcked);
            }
            s.retained.dropFrom(s.sendAcked);
        }
        s.sendNext = s.sendAcked;
        s.resentFrom = s.sendAcked;
        s.hole = -1;
        s.holeResent = -1;
        s.sentEnd = s.sendAcked;
        s.timedSequence = -1;
        if (result == MpiErrors.ERR_MESSAGE_TOO_LARGE) {
            throw new MpiException(result, "rank " + dest + " on " + ranks[dest].node + " refused a message"
                    + (bytes > 0 ? " of " + bytes + " bytes" : "")
                    + ": the proxy's maximum message size (v2.max.message.bytes) is " + s.sendRefusalArgument
                    + " bytes (" + MpiErrors.name(result) + "); the messages sent after it were dropped");
        }
        throw new MpiException(result, "rank " + dest + " refused data: " + MpiErrors.name(result)
                + "; the messages sent after it were dropped");
    }

    /** @return whether fragments sent to the rank wait for the proxy's acknowledgement */
    private static boolean unacknowledged(Stream s) {
        return s.retained != null && s.sendAcked < s.retained.end();
    }

    /** Waits until every eager fragment was acknowledged, or its node is given up; before TERMINATE. */
    void drainEager() {
        long timeoutNanos = exchange.timeoutNanos;
        long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
        for (int r = 1; r < ranks.length; r++) {
            Stream s = streams[r];
            while (unacknowledged(s) && s.sendResult == MpiErrors.SUCCESS
                    && !ranks[r].at.dead && ranks[r].execResult == MpiErrors.SUCCESS && System.nanoTime() < deadline) {
                try {
                    pumpKept(r);
                    exchange.awaitReplies(s.sendTimer.timeoutNanos(), r);
                } catch (MpiException e) {
                    exchange.diagnostics.println("mpi: " + e.getMessage() + "; " + (s.retained.end() - s.sendAcked)
                            + " fragments sent to rank " + r + " were not acknowledged");
                    break;
                }
            }
            if (s.sendResult != MpiErrors.SUCCESS) {
                exchange.diagnostics.println("mpi: rank " + r + " refused data sent without waiting: "
                        + MpiErrors.name(s.sendResult));
            }
        }
    }

    /**
     * The reply to a SEND fragment: a cumulative acknowledgement (every fragment before {@code ack}
     * is stored) with the window, or a refusal. A reply to fragment {@code sequence} whose
     * acknowledgement stops below it says the proxy missed the fragments between (lost or
     * reordered on the way; the proxy holds a few past a hole): the first not acknowledged goes
     * out again at once, instead of after the retransmit timeout. Once per loss: replies to
     * fragments sent before that resend say the same and are not acted on again. The reply to
     * that resend acknowledging less than was sent before it shows the next one lost too.
     */
    void onReply(int rank, int result, V2HeaderFlyweight inHeader) {
        Stream s = streams[rank];
        long ack = inHeader.ack();
        int window = (int) inHeader.argument();
        boolean advanced = ack > s.sendAcked;
        if (advanced) {
            s.sendAcked = ack;
            s.sendNext = Math.max(s.sendNext, ack);
            long now = System.nanoTime();
            s.sendProgressAt = now;
            if (s.timedSequence >= 0 && ack > s.timedSequence) {
                s.sendTimer.sample(now - s.timedAt);
                s.timedSequence = -1;
            } else {
                s.sendTimer.progress();
            }
            if (s.retained != null) {
                s.retained.release(ack);
            }
        }
        if (result != MpiErrors.SUCCESS) {
            s.sendResult = result;
            s.sendRefusalArgument = inHeader.argument();
            return;
        }
        if (ack < s.sendAcked) {
            return; // an old reply, overtaken by a later one
        }
        long sequence = inHeader.sequence();
        if (sequence > ack && window > 0 && sequence >= s.resentFrom && s.sendResult == MpiErrors.SUCCESS
                && s.retained != null && s.retained.holds(ack)) {
            // the proxy got a fragment past a hole (and holds it): the hole goes out again now
            s.resentFrom = s.retained.end();
            s.hole = ack;
        } else if (sequence == s.holeResent && ack > sequence && window > 0 && s.sendResult == MpiErrors.SUCCESS) {
            // the hole sent again filled it, but the proxy still misses a fragment sent before it:
            // datagrams between two nodes keep their order, so that one was lost too
            s.holeResent = -1;
            if (ack < s.holeSentBefore && s.retained != null && s.retained.holds(ack)) {
                s.resentFrom = s.retained.end();
                s.hole = ack;
            }
        }
        if (advanced) {
            s.window = window;
            s.sendStalled = window == 0;
        } else {
            onWindow(s, window);
        }
    }

    /**
     * An acknowledgement that stores nothing new: a refusal for a full ring (window 0) or, after
     * one, the proxy's window update (docs/protocol-v2.md 5.2), which makes the fragments from
     * the refused one go out again now rather than after the retransmit timeout.
     */
    private static void onWindow(Stream s, int window) {
        if (window == 0) {
            s.sendStalled = true;
        } else if (s.sendStalled) {
            s.sendStalled = false;
            s.sendNext = s.sendAcked;
        }
        s.window = window;
    }
}
