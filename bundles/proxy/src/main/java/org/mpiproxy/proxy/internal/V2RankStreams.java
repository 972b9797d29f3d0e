package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The rank-to-host streams of v2 ranks: RECV windows, the fragments cut from a rank's ring and
 * retained until the host acknowledges them, resends, and the end of a stream (docs/protocol-v2.md
 * 5.3). Relay thread only, under the dispatcher's lock.
 */
final class V2RankStreams {

    /** What the stream needs of its dispatcher. */
    interface Host {
        /** Sends a RECV reply without data: {@code result} 0 (alive, nothing yet) or the end of the stream. */
        void replyRecv(DatagramTransport replies, V2Rank rank, int result, long sequence);

        /** @return the length of the datagram signed at {@code offset}, or -1 (counted) when its key is gone */
        int sign(ByteBuffer buffer, int offset);

        /** @return this node's id, for the replies' headers */
        long nodeId();

        /** Counts and logs a datagram dropped for {@code reason}. */
        void invalid(V2Counter reason, InetSocketAddress source, int length);

        /** Puts the rank on the list of ranks whose window is open. */
        void activate(V2Rank rank);
    }

    private final Host host;
    private final ProxyCounters<V2Counter> counters;
    private final LongSupplier clock;
    private final SplittableRandom random;
    private final IntSupplier maxPayload;
    private final V2HeaderFlyweight slot = new V2HeaderFlyweight();

    /**
     * @param host       the dispatcher
     * @param counters   the dispatcher's counters
     * @param clock      milliseconds since the epoch, for timestamps and resend ages
     * @param random     nonces
     * @param maxPayload the largest payload of a datagram now
     */
    V2RankStreams(Host host, ProxyCounters<V2Counter> counters, LongSupplier clock, SplittableRandom random,
                  IntSupplier maxPayload) {
        this.host = host;
        this.counters = counters;
        this.clock = clock;
        this.random = random;
        this.maxPayload = maxPayload;
    }

    /** A RECV for {@code rank}: acknowledges what the host got, sends what its window asks for. */
    void onRecv(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport replies, V2Rank rank) {
        long from = header.sequence();
        // After a bundle refresh this instance starts at the ring's released head: fragments the
        // host got from the previous instance are cut again from the ring (same boundaries) and
        // skipped. Never further than the retained slots reach, so a refusal leaves them intact.
        if (from >= rank.acked && from - rank.acked <= rank.slots) {
            while (rank.next < from && readFragment(rank)) {
                counters.increment(V2Counter.RECV_SKIPPED);
            }
        }
        if (from < rank.acked || from > rank.next) {
            // below: already acknowledged and released; above: never produced
            host.invalid(V2Counter.INVALID_SEQUENCE, source, header.payloadLength());
            return;
        }
        // the same f again: the host lost something and asks for everything from f
        boolean repeated = from == rank.acked;
        acknowledge(rank, from);
        long window = Math.max(1, Math.min(header.argument(), rank.slots));
        rank.pullEnd = from + window;
        rank.truncateSent = false;
        int sent = 0;
        long now = clock.getAsLong();
        for (long s = from; s < rank.next && s < rank.pullEnd; s++) {
            if (repeated || now - rank.sentAt[rank.slot(s)] >= V2Dispatcher.RESEND_AFTER_MILLIS) {
                sendRetained(replies, rank, s);
                counters.increment(V2Counter.RECV_RESENT);
            } else {
                counters.increment(V2Counter.RECV_IN_FLIGHT);
            }
            sent++;
        }
        sent += pump(replies, rank);
        if (sent == 0) {
            // nothing to send yet: an empty reply tells the host that the node is alive
            host.replyRecv(replies, rank, MpiErrors.SUCCESS, rank.next);
        }
        if (rank.wantsData()) {
            host.activate(rank);
        }
    }

    /**
     * Releases the rank's ring up to where fragment {@code from} starts and records {@code from}
     * in the ring's consumer mark: everything below it is acknowledged.
     */
    private void acknowledge(V2Rank rank, long from) {
        if (from == rank.acked) {
            return;
        }
        MessageRing ring = rank.fromRank;
        if (ring != null) {
            ring.commit(from == rank.next ? ring.peekPosition() : rank.starts[rank.slot(from)]);
            ring.consumerMark(from);
        }
        rank.acked = from;
    }

    /** Reads new fragments from the rank's ring and sends them while the window allows; returns fragments sent. */
    int pump(DatagramTransport replies, V2Rank rank) {
        int sent = 0;
        MessageRing ring = rank.fromRank;
        while (ring != null && rank.next < rank.pullEnd) {
            if (ring.peekNextDatatype() == MessageRing.EMPTY) {
                if (rank.isDone() && !rank.truncateSent) {
                    host.replyRecv(replies, rank, V2Dispatcher.RANK_ENDED, rank.next);
                    rank.truncateSent = true;
                    sent++;
                }
                break;
            }
            if (!readFragment(rank)) {
                break;
            }
            sendRetained(replies, rank, rank.next - 1);
            sent++;
        }
        return sent;
    }

    /**
     * Cuts the next fragment from the rank's ring into its retained slot without releasing it
     * from the ring. The cut depends only on the ring's records and the maximum payload: at most
     * one record per fragment, {@code min(elements left in the record, maxPayload / size)}
     * elements, so a new instance cuts the same fragments from the same position.
     *
     * @return whether a fragment was read (as number {@code next - 1})
     */
    private boolean readFragment(V2Rank rank) {
        MessageRing ring = rank.fromRank;
        if (ring == null) {
            return false;
        }
        int datatype = ring.peekNextDatatype();
        if (datatype == MessageRing.EMPTY) {
            return false;
        }
        int size = MpiDatatype.sizeOf(datatype);
        if (size < 0) {
            throw new IllegalStateException("rank " + rank.rankId + " of job " + Job.hex(rank.job.jobId)
                    + " wrote datatype " + datatype);
        }
        int tagWord = ring.peekNextTagWord();
        int inRecord = ring.peekNextElements();
        int want = Math.min(inRecord, maxPayload.getAsInt() / size);
        int base = rank.slotOffset(rank.next);
        ByteBuffer retained = rank.retained();
        long start = ring.peekPosition();
        int n = ring.peekRecord(datatype, retained, base + HEADER_LENGTH, want);
        if (n <= 0) {
            return false;
        }
        rank.starts[rank.slot(rank.next)] = start;
        boolean endOfMessage = n == inRecord && (tagWord & MessageRing.MORE_RECORDS) == 0;
        slot.wrap(retained, base).reset(OP_RECV, FLAG_REPLY | (endOfMessage ? FLAG_END_OF_MESSAGE : 0))
                .datatype(datatype).tag(tagWord & ~MessageRing.MORE_RECORDS).rank(rank.rankId)
                .jobId(rank.job.jobId).sequence(rank.next).argument(n).payloadLength(n * size);
        rank.next++;
        rank.bytesOut += n * size;
        counters.increment(V2Counter.RECV_FRAGMENTS);
        counters.add(V2Counter.RECV_BYTES, n * size);
        return true;
    }

    private void sendRetained(DatagramTransport replies, V2Rank rank, long sequence) {
        int base = rank.slotOffset(sequence);
        slot.wrap(rank.retained, base).keyId(rank.job.keyId).nodeId(host.nodeId())
                .timestamp(clock.getAsLong()).nonce(random.nextLong());
        int length = host.sign(rank.retained, base);
        if (length < 0) {
            return;
        }
        rank.sentAt[rank.slot(sequence)] = clock.getAsLong();
        ByteBuffer b = rank.retained;
        b.limit(base + length).position(base);
        if (replies != null && !replies.send(b, rank.job.owner)) {
            counters.increment(V2Counter.REPLIES_FAILED);
        }
        b.clear();
    }
}
