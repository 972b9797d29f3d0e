package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;

import java.util.ArrayList;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The host-to-rank side of v2: SEND fragments stored in a rank's ring in sequence, acknowledged
 * cumulatively with the window the ring has room for, refused when the ring is full and the host
 * owed a window update once the rank has made room (docs/protocol-v2.md 5.2). Relay thread only,
 * under the dispatcher's lock.
 */
final class V2HostSends {

    /** Most fragments a SEND acknowledgement lets the host have in flight. */
    static final int MAX_WINDOW = 256;

    /** What the SEND side needs of its dispatcher. */
    interface Host {
        /**
         * Sends a SEND reply: {@code result}, the fragment it answers, the next fragment expected,
         * and the window (or the refusal's argument).
         */
        void replySend(DatagramTransport replies, V2Rank rank, int result, long sequence, long ack, long argument);
    }

    private final Host host;
    private final ProxyCounters<V2Counter> counters;
    private final Supplier<V2Settings> settings;
    /** Ranks whose host was told window 0 (a full ring) and is owed a window update. */
    private final ArrayList<V2Rank> stalled = new ArrayList<>();

    /**
     * @param host     the dispatcher
     * @param counters the dispatcher's counters
     * @param settings the v2 settings in force (payload and message limits)
     */
    V2HostSends(Host host, ProxyCounters<V2Counter> counters, Supplier<V2Settings> settings) {
        this.host = host;
        this.counters = counters;
        this.settings = settings;
    }

    /** A SEND fragment for {@code rank}: stored, or refused, and answered. */
    void onSend(V2HeaderFlyweight header, DatagramTransport replies, V2Rank rank) {
        long s = header.sequence();
        int datatype = header.datatype();
        int size = MpiDatatype.sizeOf(datatype);
        long count = header.argument();
        int payload = header.payloadLength();
        int problem = MpiErrors.SUCCESS;
        if (size < 0) {
            problem = MpiErrors.ERR_TYPE;
        } else if (count == 0 || count * size != payload) {
            problem = MpiErrors.ERR_COUNT;
        } else if (header.tag() < 0) {
            problem = MpiErrors.ERR_TAG;
        }
        MessageRing ring = rank.toRank;
        long expected = ring != null ? ring.producerMark() : 0;
        boolean refused = false;
        if (problem == MpiErrors.SUCCESS) {
            if (s < expected) {
                counters.increment(V2Counter.SEND_DUPLICATE);
            } else if (s > expected) {
                counters.increment(V2Counter.SEND_OUT_OF_ORDER);
                hold(header, rank, s, expected);
            } else if (ring == null || rank.isDone()) {
                problem = V2Dispatcher.RANK_ENDED;
            } else if (MessageSizeLimit.exceeds(settings.get().maxMessageBytes(), rank.messageBytesIn, header.ack(),
                    payload)) {
                problem = MpiErrors.ERR_MESSAGE_TOO_LARGE;
                counters.increment(V2Counter.SEND_TOO_LARGE);
            } else {
                boolean last = (header.flags() & FLAG_END_OF_MESSAGE) != 0;
                int tagWord = header.tag() | (last ? 0 : MessageRing.MORE_RECORDS);
                boolean stored;
                try {
                    stored = ring.offer(datatype, (int) count, tagWord, header.buffer(), header.payloadOffset(),
                            payload);
                } catch (IllegalArgumentException e) {
                    // larger than the ring's largest record: a datagram size the ring cannot take
                    stored = false;
                    problem = MpiErrors.ERR_COUNT;
                }
                if (stored) {
                    expected = stored(rank, ring, s, payload, last);
                    expected = drainHeld(rank, ring, expected);
                    if (RankDoorbells.ringIfArmed(ring, replies)) {
                        counters.increment(V2Counter.DOORBELLS_RUNG);
                    }
                } else if (problem == MpiErrors.SUCCESS) {
                    counters.increment(V2Counter.SEND_RING_FULL);
                    refused = true;
                }
            }
        }
        if (problem != MpiErrors.SUCCESS && !rank.holdingOff) {
            // the host drops the messages from the refused one on and reuses their sequences
            rank.holdingOff = true;
            rank.held = null;
        }
        // a refused fragment says window 0 whatever the free bytes (they may lie at both ends of the ring)
        int window = refused ? 0 : window(ring);
        if (problem == MpiErrors.SUCCESS && window == 0 && ring != null && !rank.sendStalled) {
            // the host now waits: it is owed a window update once the rank has made room
            rank.sendStalled = true;
            stalled.add(rank);
        }
        long argument = problem == MpiErrors.SUCCESS ? window : problem == MpiErrors.ERR_MESSAGE_TOO_LARGE
                ? MessageSizeLimit.argument(settings.get().maxMessageBytes()) : 0;
        host.replySend(replies, rank, problem, s, expected, argument);
    }

    /**
     * A fragment past a hole: held (a copy) when it is among the next few, so that once the host
     * resends the hole the proxy stores it and every held one after it, and acknowledges them all.
     */
    private void hold(V2HeaderFlyweight header, V2Rank rank, long sequence, long expected) {
        if (rank.toRank == null || rank.isDone() || rank.holdingOff) {
            return;
        }
        if (rank.held == null) {
            rank.held = new HeldFragments(settings.get().maxPayload());
        } else {
            rank.held.releaseBefore(expected);
        }
        boolean last = (header.flags() & FLAG_END_OF_MESSAGE) != 0;
        if (rank.held.hold(sequence, expected, header.datatype(), (int) header.argument(),
                header.tag() | (last ? 0 : MessageRing.MORE_RECORDS), header.ack(), header.buffer(),
                header.payloadOffset(), header.payloadLength())) {
            counters.increment(V2Counter.SEND_HELD);
        }
    }

    /**
     * Stores the held fragments that follow {@code expected} in sequence, as far as the ring takes
     * them; @return the next fragment expected after them.
     */
    private long drainHeld(V2Rank rank, MessageRing ring, long expected) {
        HeldFragments held = rank.held;
        if (held == null || held.size() == 0) {
            return expected;
        }
        held.releaseBefore(expected);
        while (held.holds(expected)) {
            long s = expected;
            int length = held.length(s);
            if (MessageSizeLimit.exceeds(settings.get().maxMessageBytes(), rank.messageBytesIn, held.statedSize(s),
                    length)) {
                // refused when the host sends it again, with the reply that says why
                held.clear();
                break;
            }
            boolean stored;
            try {
                stored = ring.offer(held.datatype(s), held.count(s), held.tagWord(s), held.payloads(), held.offset(s),
                        length);
            } catch (IllegalArgumentException e) {
                held.clear();
                break;
            }
            if (!stored) {
                break; // the ring is full: it stays held
            }
            boolean last = (held.tagWord(s) & MessageRing.MORE_RECORDS) == 0;
            held.release(s);
            expected = stored(rank, ring, s, length, last);
        }
        return expected;
    }

    /** Bookkeeping of fragment {@code sequence}, just stored in the ring; @return the next expected. */
    private long stored(V2Rank rank, MessageRing ring, long sequence, int payload, boolean last) {
        ring.producerMark(sequence + 1);
        rank.bytesIn += payload;
        rank.messageBytesIn = last ? 0 : rank.messageBytesIn + payload;
        counters.increment(V2Counter.SEND_STORED);
        counters.add(V2Counter.SEND_BYTES, payload);
        return sequence + 1;
    }

    /** Sends the window updates ranks have made room for; returns how many. */
    int updateWindows(DatagramTransport replies) {
        int work = 0;
        for (int i = stalled.size() - 1; i >= 0; i--) {
            work += updateWindow(replies, stalled.get(i), i);
        }
        return work;
    }

    /** @return whether hosts wait for window updates */
    boolean hasStalled() {
        return !stalled.isEmpty();
    }

    /** A rank taken over from a previous revision whose host waits for a window update. */
    void stalled(V2Rank rank) {
        if (rank.sendStalled && !stalled.contains(rank)) {
            stalled.add(rank);
        }
    }

    /** Forgets every stalled rank (the dispatcher closes). */
    void clear() {
        stalled.clear();
    }

    private int updateWindow(DatagramTransport replies, V2Rank rank, int index) {
        MessageRing ring = rank.toRank;
        if (ring == null || rank.removed || rank.isDone()) {
            rank.sendStalled = false;
            stalled.remove(index);
            return 0;
        }
        int window = window(ring);
        // wait for room for half of what the empty ring takes, so one update lets the host send a batch
        int whenEmpty = Math.max(1, window(ring.capacity()));
        if (window == 0 || window < whenEmpty / 2) {
            return 0;
        }
        rank.sendStalled = false;
        stalled.remove(index);
        long expected = ring.producerMark();
        host.replySend(replies, rank, MpiErrors.SUCCESS, expected, expected, window);
        counters.increment(V2Counter.SEND_WINDOW_UPDATES);
        return 1;
    }

    /**
     * Fragments of the maximum payload the ring surely takes now: one less than its free bytes
     * hold, because a record that does not fit before the ring's end leaves the rest unused
     * (but one when the ring is empty).
     */
    private int window(MessageRing ring) {
        if (ring == null) {
            return 0;
        }
        int w = window(ring.freeBytes());
        // an empty ring takes its largest record: a ring of fewer than two still takes one at a time
        return w == 0 && ring.isEmpty() ? 1 : w;
    }

    private int window(long freeBytes) {
        long w = freeBytes / (settings.get().maxPayload() + 24L) - 1;
        return (int) Math.max(0, Math.min(MAX_WINDOW, w));
    }
}
