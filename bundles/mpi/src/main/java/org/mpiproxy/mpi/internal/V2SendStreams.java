package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.EAGER_BYTES_PER_RANK;
import static org.mpiproxy.mpi.internal.V2HostTransport.EAGER_SLOTS;
import static org.mpiproxy.mpi.internal.V2HostTransport.OVERDUE_SCAN_NANOS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The SEND stream to every rank of a v2 job (docs/protocol-v2.md 5.2): fragments sent eagerly
 * within the proxy's window, a copy kept until acknowledged, sent again from a hole the proxy's
 * replies show or after a measured retransmit timeout with back-off, refusals thrown by the next
 * call to that rank or by a wait for data from it ({@link #throwRefusalTo}). No allocation per
 * fragment. Not thread-safe: every call holds the
 * transport's lock.
 */
final class V2SendStreams {

    /**
     * A fragment resent within this time of its signature goes out as it was signed: a proxy
     * takes it within its skew (30 s by default, seconds at the least one would set), and only
     * its sequence number tells it from the first copy (docs/protocol-v2.md 3.2). Later it is
     * signed again with a fresh timestamp and nonce.
     */
    static final long RESEND_SIGNED_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /**
     * What a proxy may hold of the fragments after a hole (docs/protocol-v2.md 5.2: ours holds the
     * next 64, at most 2 MiB per rank): after a retransmit timeout only the first fragment not
     * acknowledged and those past this range go out again. A proxy that holds fewer gets the
     * others one round trip apart, each reply showing the next one missing.
     */
    static final int HELD_PAST_HOLE = 64;
    static final int HELD_PAST_HOLE_BYTES = 2 << 20;

    /** The shortest wait for the reply to a resent hole before it goes again ({@link V2SendStream#holeProbeNanos}). */
    static final long MIN_HOLE_PROBE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final V2Exchange exchange;
    private final V2Rank[] ranks;
    private final V2SendStream[] streams;
    /**
     * The clock of the retransmit timeouts, the hole probes and the age of a kept copy's signature
     * (nanoseconds, {@link System#nanoTime} unless a test drives time).
     */
    private LongSupplier clock = System::nanoTime;
    /** When {@link #resendOverdue} last looked through the ranks. */
    private long lastOverdueScan;
    /** Fragments sent (first time or again), sent again for a hole, retransmit timeouts and what they sent. */
    private long fragmentsSent;
    private long holeResends;
    private long timeouts;
    private long timeoutResends;
    /** Holes sent once more because no reply to their resend came within the probe time. */
    private long holeProbesSent;
    /** How long the streams waited for their retransmit timeouts in all. */
    private long timeoutWaitNanos;
    /** Fragments after a hole a proxy may hold (ours: 64, at most 2 MiB), not resent after a timeout. */
    private final long heldPastHole;

    V2SendStreams(V2Exchange exchange) {
        this.exchange = exchange;
        this.ranks = exchange.ranks;
        this.streams = new V2SendStream[ranks.length];
        this.heldPastHole = Math.max(1, Math.min(HELD_PAST_HOLE,
                HELD_PAST_HOLE_BYTES / Math.max(1, exchange.maxPayload)));
        for (int r = 1; r < ranks.length; r++) {
            streams[r] = new V2SendStream();
        }
        clock(clock);
    }

    /** Times the streams with {@code nanoClock} from now on; before the first send. */
    void clock(LongSupplier nanoClock) {
        this.clock = nanoClock;
        this.lastOverdueScan = nanoClock.getAsLong() - OVERDUE_SCAN_NANOS;
    }

    /** As {@link V2HostTransport#send(int, int, ByteBuffer, int, int, int)}. */
    void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
        V2SendStream s = streams[dest];
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
        V2SendStream s = streams[dest];
        // a node that falls silent fails the wait (awaitReplies)
        while (s.unacknowledged() && s.sendResult == MpiErrors.SUCCESS) {
            pumpKept(dest);
            await(s, dest);
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
        V2SendStream s = streams[dest];
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
            await(s, dest);
            throwRefusal(s, dest);
        }
        resendHole(dest);
        int bytes = n * size;
        long sequence = Math.max(s.sendNext, kept.end());
        exchange.header(OP_SEND, dest).flags(last ? FLAG_END_OF_MESSAGE : 0).datatype(datatype).tag(tag)
                .sequence(sequence).ack(statedSize).argument(n).payloadLength(bytes);
        ByteBuffer out = exchange.out;
        out.put(HEADER_LENGTH, src, at, bytes);
        long now = clock.getAsLong();
        if (kept.isEmpty()) {
            s.sendProgressAt = now;
            s.sendTimer.progress();
        }
        kept.keep(sequence, out, exchange.transmit(dest, exchange.epochClock.getAsLong()), now);
        fragmentsSent++;
        s.sendNext = sequence + 1;
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        if (s.timedSequence < 0) {
            s.timedSequence = sequence;
            s.timedAt = now;
        }
    }

    /** Sends the hole the proxy's replies showed again, if it is still not acknowledged. */
    private void resendHole(int dest) {
        V2SendStream s = streams[dest];
        long hole = s.hole;
        if (hole >= 0) {
            s.hole = -1;
            if (hole >= s.sendAcked && s.retained != null && s.retained.holds(hole)) {
                resendAsHole(dest, hole);
                holeResends++;
            }
        }
    }

    /** Sends fragment {@code hole} again, watching the reply to it for the next hole and for its loss. */
    private void resendAsHole(int dest, long hole) {
        V2SendStream s = streams[dest];
        s.holeResent = hole;
        s.holeSentBefore = s.sentEnd;
        s.holeResentAt = clock.getAsLong();
        s.holeProbes = 0;
        resendKept(dest, hole);
    }

    /** Sends the kept fragments from {@code sendNext} on, as far as the window allows. */
    private void pumpKept(int dest) {
        resendHole(dest);
        V2SendStream s = streams[dest];
        long limit = s.sendAcked + Math.max(s.window, 0);
        s.sendNext = Math.max(s.sendNext, s.sendAcked);
        while (s.retained != null && s.sendNext < s.retained.end() && s.sendNext < limit) {
            resendKept(dest, s.sendNext);
            s.sendNext++;
        }
    }

    private void resendKept(int dest, long sequence) {
        V2SendStream s = streams[dest];
        if (sequence <= s.timedSequence) {
            s.timedSequence = -1; // its acknowledgement could answer either copy
        }
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        ByteBuffer out = exchange.out;
        out.clear();
        int length = s.retained.copy(sequence, out);
        long now = clock.getAsLong();
        if (now - s.retained.signedAt(sequence) < RESEND_SIGNED_NANOS) {
            exchange.transmitSigned(dest, length); // no second MAC over the payload
        } else {
            s.retained.resigned(sequence, exchange.transmit(dest, exchange.epochClock.getAsLong()), now, out);
        }
        fragmentsSent++;
    }

    /**
     * Eager fragments whose acknowledgement is overdue go out again from the first one not
     * acknowledged (one only while the window is 0: a probe), with the timeout doubled; called
     * after every wait for datagrams, whatever the call waits for, so that a rank waiting for an
     * eager message that was lost gets it while the host waits in {@code recv} or {@code finish}.
     */
    void resendOverdue() {
        // every send comes here: the ranks are looked through once per millisecond at most
        if (clock.getAsLong() - lastOverdueScan >= OVERDUE_SCAN_NANOS) {
            resendOverdueNow();
        }
    }

    /** As {@link #resendOverdue}, whenever the last look was: after a wait for datagrams. */
    void resendOverdueNow() {
        long now = clock.getAsLong();
        lastOverdueScan = now;
        for (int r = 1; r < ranks.length; r++) {
            resendOverdue(r, now);
        }
    }

    /** As {@link #resendOverdueNow} for rank {@code rank} alone: after a wait for replies from its node. */
    void resendOverdueFor(int rank) {
        resendOverdue(rank, clock.getAsLong());
    }

    private void resendOverdue(int r, long now) {
        V2SendStream s = streams[r];
        RetainedFragments kept = s.retained;
        if (kept == null || s.sendResult != MpiErrors.SUCCESS) {
            return;
        }
        // acknowledgements released what they covered as they came
        if (kept.isEmpty() || ranks[r].at.dead) {
            return;
        }
        resendHole(r);
        if (now - s.sendProgressAt >= s.sendTimer.timeoutNanos()) {
            timeouts++;
            timeoutWaitNanos += now - s.sendProgressAt;
            long before = fragmentsSent;
            long first = s.sendAcked;
            if (s.window <= 0) {
                s.sendNext = first;
                if (kept.holds(first)) {
                    resendKept(r, first);
                    s.sendNext++;
                }
            } else {
                // the first fragment not acknowledged goes again as a hole (its reply shows the next
                // one missing, if any); those a proxy holds past a hole are not sent again, the rest are
                if (kept.holds(first)) {
                    resendAsHole(r, first);
                }
                s.sendNext = Math.max(first + 1, Math.min(s.sendNext, first + 1 + heldPastHole));
                pumpKept(r);
            }
            timeoutResends += fragmentsSent - before;
            s.sendTimer.backOff();
            s.sendProgressAt = now;
        } else if (s.window > 0 && s.holeOutstanding() && now - s.holeResentAt >= s.holeProbeNanos()) {
            // the hole sent again or its reply was lost too: once more, long before the timeout
            int probes = s.holeProbes + 1;
            resendAsHole(r, s.holeResent);
            s.holeProbes = probes;
            holeProbesSent++;
        } else if (s.sendNext < kept.end()) {
            // a window update after a full ring sent us back: the kept ones go out again now
            pumpKept(r);
        }
    }

    /**
     * Throws the refusal of a SEND to rank {@code dest} (once), of a message sent by this call or
     * an earlier one. The fragments after the refused one were not stored: they are dropped, and
     * the next message starts from the refused fragment's sequence.
     */
    private void throwRefusal(V2SendStream s, int dest) {
        int result = s.sendResult;
        if (result == MpiErrors.SUCCESS) {
            return;
        }
        long bytes = s.dropRefused();
        if (result == MpiErrors.ERR_MESSAGE_TOO_LARGE) {
            throw new MpiException(result, "rank " + dest + " on " + ranks[dest].node + " refused a message"
                    + (bytes > 0 ? " of " + bytes + " bytes" : "")
                    + ": the proxy's maximum message size (v2.max.message.bytes) is " + s.sendRefusalArgument
                    + " bytes (" + MpiErrors.name(result) + "); the messages sent after it were dropped");
        }
        throw new MpiException(result, "rank " + dest + " refused data: " + MpiErrors.name(result)
                + "; the messages sent after it were dropped");
    }

    /**
     * Throws the refusal of a SEND to the rank a call waits for data from (once; the next send to
     * that rank then throws nothing): a rank that never got a message may never answer, and the
     * call would wait for its timeout. Allocates nothing unless it throws.
     *
     * @param awaited the rank; negative: every rank (a receive from any source); 0: none
     */
    void throwRefusalTo(int awaited) {
        for (int r = awaited < 0 ? 1 : awaited; r > 0 && r < ranks.length && (awaited < 0 || r == awaited); r++) {
            V2SendStream s = streams[r];
            int result = s.sendResult;
            if (result != MpiErrors.SUCCESS) {
                long bytes = s.dropRefused();
                throw new MpiException(result, "rank " + r + " on " + ranks[r].node + " refused a message"
                        + (bytes > 0 ? " of " + bytes + " bytes" : "") + " to it (" + MpiErrors.name(result) + ": "
                        + meaning(result, s.sendRefusalArgument) + "); the messages sent to it after that one"
                        + " were dropped");
            }
        }
    }

    /** What a SEND refusal says (docs/protocol-v2.md 5.2). */
    private static String meaning(int result, long argument) {
        switch (result) {
            case MpiErrors.ERR_COMM: return "unknown job";
            case MpiErrors.ERR_RANK: return "unknown rank";
            case MpiErrors.ERR_TYPE: return "unknown datatype";
            case MpiErrors.ERR_COUNT: return "count and payload disagree";
            case MpiErrors.ERR_TAG: return "negative tag";
            case MpiErrors.ERR_TRUNCATE: return "the rank has ended";
            case MpiErrors.ERR_MESSAGE_TOO_LARGE:
                return "the proxy's maximum message size (v2.max.message.bytes) is " + argument + " bytes";
            default: return "refused";
        }
    }

    /** @return the counters by name, as {@link V2HostTransport#sendCounters} describes them */
    Map<String, Long> counters() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("send.fragments", fragmentsSent);
        m.put("send.resent.hole", holeResends);
        m.put("send.timeouts", timeouts);
        m.put("send.resent.timeout", timeoutResends);
        m.put("send.timeout.wait.micros", timeoutWaitNanos / 1000);
        m.put("send.hole.probes", holeProbesSent);
        return m;
    }

    /**
     * Waits for replies from rank {@code dest}'s node until the stream's retransmit timeout at
     * most, then resends what is overdue (what is overdue already goes first).
     */
    private void await(V2SendStream s, int dest) {
        long left = s.untilOverdue(clock.getAsLong());
        if (left == 0) {
            resendOverdueNow();
            left = s.untilOverdue(clock.getAsLong());
        }
        exchange.awaitReplies(left, dest);
    }

    /** Waits until every eager fragment was acknowledged, or its node is given up; before TERMINATE. */
    void drainEager() {
        long timeoutNanos = exchange.timeoutNanos;
        long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
        for (int r = 1; r < ranks.length; r++) {
            V2SendStream s = streams[r];
            while (s.unacknowledged() && s.sendResult == MpiErrors.SUCCESS
                    && !ranks[r].at.dead && ranks[r].execResult == MpiErrors.SUCCESS && System.nanoTime() < deadline) {
                try {
                    pumpKept(r);
                    await(s, r);
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
        V2SendStream s = streams[rank];
        long ack = inHeader.ack();
        int window = (int) inHeader.argument();
        boolean advanced = ack > s.sendAcked;
        if (advanced) {
            s.sendAcked = ack;
            s.sendNext = Math.max(s.sendNext, ack);
            long now = clock.getAsLong();
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
    private static void onWindow(V2SendStream s, int window) {
        if (window == 0) {
            s.sendStalled = true;
        } else if (s.sendStalled) {
            s.sendStalled = false;
            s.sendNext = s.sendAcked;
        }
        s.window = window;
    }
}
