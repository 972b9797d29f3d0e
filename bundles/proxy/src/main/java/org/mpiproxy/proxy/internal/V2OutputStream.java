package org.mpiproxy.proxy.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * One OUTPUT stream of one rank (stdout, stderr or PMI): its fragments waiting to be sent and
 * those in flight, its sequence numbers, and its retransmission (docs/protocol-v2.md 5.5): a
 * window of {@link V2OutputStreams#WINDOW} fragments, a timeout that doubles up to
 * {@link V2OutputStreams#MAX_RTO_NANOS}, and after a timeout a recovery that sends the next missing
 * fragment on each acknowledgement that advances short of what was sent before. Guarded by its
 * job's monitor in {@link V2OutputStreams}.
 */
final class V2OutputStream {

    /** A piece of a line no longer than the largest payload. */
    static final class Fragment {
        final byte[] text;
        final int offset;
        final int length;
        final boolean lineStart;
        final boolean endOfLine;
        final boolean partial;
        long sequence;

        Fragment(byte[] text, int offset, int length, boolean lineStart, boolean endOfLine, boolean partial) {
            this.text = text;
            this.offset = offset;
            this.length = length;
            this.lineStart = lineStart;
            this.endOfLine = endOfLine;
            this.partial = partial;
        }

        /** @return what the fragment counts against its job's buffer */
        int cost() {
            return length + V2OutputStreams.LINE_OVERHEAD;
        }
    }

    final int code;
    final ArrayDeque<Fragment> unsent = new ArrayDeque<>();
    final ArrayDeque<Fragment> inFlight = new ArrayDeque<>();
    long next;
    long dropped;
    boolean started;
    boolean ended;
    /**
     * Taken over from a previous revision of the proxy: the end of the stream may have been told
     * to nobody while the revisions changed, so it is not waited for.
     */
    boolean adopted;
    private long rto = V2OutputStreams.INITIAL_RTO_NANOS;
    private long timerStart;
    /** After a timeout: fragments below {@code recoverPoint} are sent again one per acknowledgement. */
    private boolean recovering;
    private long recoverPoint;
    private boolean resendHead;

    /** @param code the stream's code on the wire */
    V2OutputStream(int code) {
        this.code = code;
    }

    boolean idle() {
        return unsent.isEmpty() && inFlight.isEmpty();
    }

    /**
     * The host has every fragment below {@code ack}.
     *
     * @return what the fragments acknowledged now counted against the job's buffer; 0 when none was
     */
    long acknowledge(long ack, long now) {
        long freed = 0;
        while (!inFlight.isEmpty() && inFlight.peekFirst().sequence < ack) {
            freed += inFlight.pollFirst().cost();
        }
        if (freed > 0) {
            rto = V2OutputStreams.INITIAL_RTO_NANOS;
            timerStart = now;
            if (recovering) {
                recovering = ack < recoverPoint;
                resendHead = recovering;
            }
        }
        return freed;
    }

    /**
     * Sends what is due: the oldest fragment again after a timeout (or during recovery), then new
     * fragments within the window.
     *
     * @param sender sends one fragment
     * @param jobId  the stream's job
     * @param rankId the stream's rank
     * @param now    monotonic nanoseconds
     * @param fresh  counts fragments sent for the first time
     * @param resent counts fragments sent again
     * @return fragments sent
     */
    int pump(V2OutputSender sender, long jobId, int rankId, long now, LongAdder fresh, LongAdder resent) {
        int sent = 0;
        if (inFlight.isEmpty()) {
            recovering = false;
            resendHead = false;
        } else if (now - timerStart >= rto) {
            recovering = true;
            recoverPoint = next;
            resendHead = true;
            timerStart = now;
            rto = Math.min(rto * 2, V2OutputStreams.MAX_RTO_NANOS);
        }
        if (resendHead) {
            resendHead = false;
            send(sender, jobId, rankId, inFlight.peekFirst());
            resent.increment();
            sent++;
        }
        while (!unsent.isEmpty() && inFlight.size() < V2OutputStreams.WINDOW) {
            Fragment f = unsent.pollFirst();
            f.sequence = next++;
            if (inFlight.isEmpty()) {
                timerStart = now;
            }
            inFlight.addLast(f);
            send(sender, jobId, rankId, f);
            fresh.increment();
            sent++;
        }
        return sent;
    }

    private void send(V2OutputSender sender, long jobId, int rankId, Fragment f) {
        sender.send(jobId, rankId, code, f.sequence, dropped, f.endOfLine, f.partial, f.text, f.offset, f.length);
    }

    /**
     * @return the stream as plain values, for the next revision of the proxy ({@link HandOver}):
     *         its counters and every fragment not yet acknowledged, in flight first
     */
    Map<String, Object> export() {
        Map<String, Object> m = new HashMap<>();
        m.put("code", code);
        m.put("next", next);
        m.put("dropped", dropped);
        m.put("started", started);
        m.put("ended", ended);
        List<Object[]> fragments = new ArrayList<>();
        for (Fragment f : inFlight) {
            fragments.add(export(f, f.sequence));
        }
        for (Fragment f : unsent) {
            fragments.add(export(f, -1));
        }
        m.put("fragments", fragments);
        return m;
    }

    private static Object[] export(Fragment f, long sequence) {
        byte[] text = java.util.Arrays.copyOfRange(f.text, f.offset, f.offset + f.length);
        return new Object[] {text, sequence, new boolean[] {f.lineStart, f.endOfLine, f.partial}};
    }

    /**
     * @param m what {@link #export()} gave
     * @return the stream, its fragments in flight due for retransmission at once
     * @throws ClassCastException when a value is of another type
     */
    static V2OutputStream restore(Map<String, Object> m) {
        V2OutputStream s = new V2OutputStream((Integer) m.get("code"));
        s.next = (Long) m.get("next");
        s.dropped = (Long) m.get("dropped");
        s.started = (Boolean) m.get("started");
        s.ended = (Boolean) m.get("ended");
        s.adopted = true;
        for (Object o : (List<?>) m.get("fragments")) {
            Object[] a = (Object[]) o;
            byte[] text = (byte[]) a[0];
            long sequence = (Long) a[1];
            boolean[] flags = (boolean[]) a[2];
            Fragment f = new Fragment(text, 0, text.length, flags[0], flags[1], flags[2]);
            f.sequence = sequence;
            (sequence >= 0 ? s.inFlight : s.unsent).addLast(f);
        }
        // the timer starts at 0: the oldest fragment in flight is sent again on the first pump
        return s;
    }
}
