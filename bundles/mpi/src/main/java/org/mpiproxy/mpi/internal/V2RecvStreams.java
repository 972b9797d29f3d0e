package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.EARLY_ACK_BYTES;
import static org.mpiproxy.mpi.internal.V2HostTransport.INITIAL_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.MAX_RTO_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.RECV_WINDOW;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The RECV stream from every rank of a v2 job (docs/protocol-v2.md 5.3): fragments pulled by
 * sequence number, a window at a time, asked for again with back-off, and queued in order until
 * delivered into the caller's buffer or assembled into whole messages. No allocation per fragment
 * (a queue per rank is made with its first one). Not thread-safe: every call holds the
 * transport's lock.
 */
final class V2RecvStreams {

    /** Per rank: the stream's position and the fragments received and not yet delivered. */
    private static final class Stream {
        long recvNext;
        long recvEnd;
        /** recvNext when the last RECV was sent. */
        long recvAskedFrom;
        int recvResult;
        /** Fragments received and not yet delivered, in order: RECV_WINDOW slots of a datagram each. */
        ByteBuffer queue;
        int[] queueType;
        int[] queueLength;
        int queueHead;
        int queued;
        /** Bytes of the head fragment already delivered. */
        int headAt;
        /** Per queued fragment: its tag and whether it ends its message (for {@link #nextMessage}). */
        int[] queueTag;
        boolean[] queueEnd;
        /** The message {@link #nextMessage} is assembling: elements so far, datatype, tag. */
        MessageAssembly assembly;
        /** RECV pulls of {@link #nextMessage}, which may return before a message is complete. */
        boolean pullAsked;
        long pullRto = INITIAL_RTO_NANOS;
        long pullLastProgress;
    }

    private final V2Exchange exchange;
    /** Whose refusals of a message to a rank fail a wait for data from that rank. */
    private final V2SendStreams send;
    private final int datagramSize;
    private final Stream[] streams;

    V2RecvStreams(V2Exchange exchange, V2SendStreams send) {
        this.exchange = exchange;
        this.send = send;
        this.datagramSize = exchange.datagramSize;
        this.streams = new Stream[exchange.ranks.length];
        for (int r = 1; r < streams.length; r++) {
            streams[r] = new Stream();
        }
    }

    /** @return whether rank {@code rank} may still send: its stream did not end */
    boolean maySend(int rank) {
        return streams[rank].recvResult == MpiErrors.SUCCESS;
    }

    /** As {@link V2HostTransport#recv(int, ByteBuffer, int, int, int)}. */
    void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
        Stream s = streams[source];
        int size = MpiDatatype.sizeOf(datatype);
        int got = 0;
        long rto = INITIAL_RTO_NANOS;
        long lastProgress = System.nanoTime();
        boolean asked = false;
        while (got < count) {
            if (s.queued > 0) {
                int type = s.queueType[s.queueHead];
                if (type != datatype) {
                    throw new MpiException(MpiErrors.ERR_TYPE, "rank " + source + " sent "
                            + MpiDatatype.ofCode(type) + ", not " + MpiDatatype.ofCode(datatype));
                }
                int base = s.queueHead * datagramSize;
                int n = Math.min(count - got, (s.queueLength[s.queueHead] - s.headAt) / size);
                dst.put(offset + got * size, s.queue, base + s.headAt, n * size);
                s.headAt += n * size;
                got += n;
                if (s.headAt == s.queueLength[s.queueHead]) {
                    s.queueHead = (s.queueHead + 1) % RECV_WINDOW;
                    s.queued--;
                    s.headAt = 0;
                }
                lastProgress = System.nanoTime();
                rto = INITIAL_RTO_NANOS;
                continue;
            }
            if (s.recvResult != MpiErrors.SUCCESS) {
                int result = s.recvResult;
                throw new MpiException(result, "rank " + source + " ended before sending " + count + " elements ("
                        + MpiErrors.name(result) + ")");
            }
            // a rank that never got a message may never answer: its refusal ends the wait
            send.throwRefusalTo(source);
            // the queue is empty here: a new window cannot overflow it
            boolean drained = asked && drained(s);
            if (!asked || s.recvNext >= s.recvEnd || drained || System.nanoTime() - lastProgress >= rto) {
                if (asked && s.recvNext < s.recvEnd && !drained) {
                    rto = Math.min(rto * 2, MAX_RTO_NANOS);
                }
                ask(s, source);
                asked = true;
                lastProgress = System.nanoTime();
            }
            exchange.awaitData(rto, source);
        }
    }

    /** Sends a RECV for the window from the rank's next fragment on. */
    private void ask(Stream s, int source) {
        exchange.header(OP_RECV, source).sequence(s.recvNext).argument(RECV_WINDOW);
        exchange.transmit(source);
        s.recvEnd = s.recvNext + RECV_WINDOW;
        s.recvAskedFrom = s.recvNext;
    }

    /**
     * Whether enough fragments arrived since the last RECV to acknowledge them early: the proxy
     * keeps unacknowledged data in the rank's ring, so a rank with a full ring waits for this
     * acknowledgement. Called with the queue empty (every arrived fragment was delivered).
     */
    private boolean drained(Stream s) {
        return s.recvNext - s.recvAskedFrom >= EARLY_ACK_BYTES / exchange.maxPayload + 1;
    }

    /** As {@link V2HostTransport#nextMessage(int, long)}. */
    TaggedMessage nextMessage(int source, long waitNanos) {
        Stream s = streams[source];
        long start = System.nanoTime();
        long deadline = waitNanos >= Long.MAX_VALUE - start ? Long.MAX_VALUE : start + waitNanos;
        while (true) {
            TaggedMessage m = takeQueued(s, source);
            if (m != null) {
                return m;
            }
            if (s.recvResult != MpiErrors.SUCCESS) {
                throw new MpiException(s.recvResult, "rank " + source + " ended before sending a whole message ("
                        + MpiErrors.name(s.recvResult) + ")");
            }
            send.throwRefusalTo(source);
            long now = System.nanoTime();
            if (now >= deadline) {
                return null;
            }
            askIfDue(s, source, now);
            exchange.awaitData(Math.min(s.pullRto, deadline - now), source);
        }
    }

    /** @return the next whole message of the rank's queued fragments, or null (a partial one is kept) */
    private TaggedMessage takeQueued(Stream s, int source) {
        while (s.queued > 0) {
            int head = s.queueHead;
            if (s.assembly == null) {
                s.assembly = new MessageAssembly(s.queueType[head], s.queueTag[head]);
            }
            int bytes = s.queueLength[head] - s.headAt;
            s.assembly.append(s.queueType[head], s.queue, head * datagramSize + s.headAt, bytes);
            boolean end = s.queueEnd[head];
            s.queueHead = (s.queueHead + 1) % RECV_WINDOW;
            s.queued--;
            s.headAt = 0;
            s.pullLastProgress = System.nanoTime();
            s.pullRto = INITIAL_RTO_NANOS;
            if (end) {
                TaggedMessage m = s.assembly.message(source);
                s.assembly = null;
                return m;
            }
        }
        return null;
    }

    /** Asks the rank's proxy for its next fragments when no ask is out or the last one is overdue. */
    private void askIfDue(Stream s, int source, long now) {
        if (s.queued > 0) {
            return;
        }
        // the queue is empty here: a new window cannot overflow it
        boolean drained = s.pullAsked && drained(s);
        if (!s.pullAsked || s.recvNext >= s.recvEnd || drained || now - s.pullLastProgress >= s.pullRto) {
            if (s.pullAsked && s.recvNext < s.recvEnd && !drained) {
                s.pullRto = Math.min(s.pullRto * 2, MAX_RTO_NANOS);
            }
            ask(s, source);
            s.pullAsked = true;
            s.pullLastProgress = now;
        }
    }

    /** As {@link V2HostTransport#pollMessages(long, Consumer)}. */
    int pollMessages(long waitNanos, Consumer<TaggedMessage> sink) {
        int n = drainQueued(sink);
        if (n > 0) {
            return n;
        }
        long now = System.nanoTime();
        for (int r = 1; r < streams.length; r++) {
            if (streams[r].recvResult == MpiErrors.SUCCESS) {
                askIfDue(streams[r], r, now);
            }
        }
        if (waitNanos <= 0) {
            exchange.poll();
        } else {
            send.throwRefusalTo(V2Exchange.WATCH_RUNNING); // a wait for any rank
            exchange.awaitData(waitNanos, V2Exchange.WATCH_RUNNING);
        }
        return drainQueued(sink);
    }

    private int drainQueued(Consumer<TaggedMessage> sink) {
        int n = 0;
        for (int r = 1; r < streams.length; r++) {
            TaggedMessage m;
            while ((m = takeQueued(streams[r], r)) != null) {
                sink.accept(m);
                n++;
            }
        }
        return n;
    }

    /** As {@link V2HostTransport#takePartial(int)}. */
    TaggedMessage takePartial(int source) {
        MessageAssembly a = streams[source].assembly;
        streams[source].assembly = null;
        return a == null ? null : a.message(source);
    }

    /** The reply to a RECV: the next fragment of the rank's stream is queued, others are asked for again later. */
    void onData(int rank, int result, V2HeaderFlyweight inHeader, ByteBuffer in) {
        Stream s = streams[rank];
        if (inHeader.sequence() != s.recvNext || s.queued == RECV_WINDOW) {
            // a duplicate or one out of order: asked for again later
            return;
        }
        if (result == MpiErrors.SUCCESS && inHeader.argument() == 0) {
            // the empty answer: alive, nothing written yet
            return;
        }
        if (result != MpiErrors.SUCCESS) {
            s.recvResult = result;
            return;
        }
        int bytes = inHeader.payloadLength();
        if (s.queue == null) {
            s.queue = ByteBuffer.allocateDirect(RECV_WINDOW * datagramSize).order(ByteOrder.LITTLE_ENDIAN);
            s.queueType = new int[RECV_WINDOW];
            s.queueLength = new int[RECV_WINDOW];
            s.queueTag = new int[RECV_WINDOW];
            s.queueEnd = new boolean[RECV_WINDOW];
        }
        int slot = (s.queueHead + s.queued) % RECV_WINDOW;
        s.queue.put(slot * datagramSize, in, HEADER_LENGTH, bytes);
        s.queueType[slot] = inHeader.datatype();
        s.queueLength[slot] = bytes;
        s.queueTag[slot] = inHeader.tag();
        s.queueEnd[slot] = (inHeader.flags() & FLAG_END_OF_MESSAGE) != 0;
        s.queued++;
        s.recvNext++;
    }
}
