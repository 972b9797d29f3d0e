package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.Status;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * MPI message matching over a {@link TaggedTransport}: a receive takes the first message, in
 * the order its source sent them, whose source and tag match (wildcards {@link #ANY_SOURCE}
 * and {@link #ANY_TAG}). Messages that arrive while looking and do not match are kept, in
 * order, for later receives, so nothing is lost and messages of one source and tag never
 * overtake each other. Receives by elements ({@link #recvElements}) take the kept messages of
 * their source first. Not thread-safe.
 */
public final class TagMatcher {

    /** Matches any tag. */
    public static final int ANY_TAG = -1;
    /** Matches any source. */
    public static final int ANY_SOURCE = -1;
    /** For {@link #recvMessage}: a message of any datatype matches. */
    private static final int ANY_DATATYPE = -1;

    /** How long one source is waited for while a receive from any source goes round them. */
    private static final long ROUND_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** How long a receive from one source waits per call into the transport (it loops). */
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final TaggedTransport transport;
    private final Map<Integer, ArrayDeque<TaggedMessage>> kept = new HashMap<>();
    private int nextSource;

    /** @param transport the transport that keeps message boundaries */
    public TagMatcher(TaggedTransport transport) {
        this.transport = transport;
    }

    /** @return messages received and kept for later receives, all sources */
    public int keptMessages() {
        int n = 0;
        for (ArrayDeque<TaggedMessage> q : kept.values()) {
            n += q.size();
        }
        return n;
    }

    /**
     * Receives one message ({@code MPI_Recv} with a tag).
     *
     * @param datatype MPI datatype code expected
     * @param dst      where the elements go
     * @param offset   byte index in {@code dst} of the first element
     * @param count    most elements the receive takes
     * @param source   the sending rank, or {@link #ANY_SOURCE}
     * @param tag      the tag, or {@link #ANY_TAG}
     * @return the matched message's source, tag and element count
     * @throws MpiException {@code MPI_ERR_TYPE} when the matched message has another datatype
     *                      (it stays kept), {@code MPI_ERR_TRUNCATE} when it has more than
     *                      {@code count} elements (it is consumed), or the transport's errors
     */
    public Status recv(int datatype, ByteBuffer dst, int offset, int count, int source, int tag) {
        return deliver(match(source, tag, datatype), datatype, dst, offset, count);
    }

    /**
     * Receives one whole message whatever its datatype and size: the first, in the order its
     * source sent them, whose source and tag match.
     *
     * @param source the sending rank, or {@link #ANY_SOURCE}
     * @param tag    the tag, or {@link #ANY_TAG}
     * @return the message; its data runs from the buffer's position to its limit (the part a
     *         receive by elements has not taken)
     * @throws MpiException the transport's errors
     */
    public TaggedMessage recvMessage(int source, int tag) {
        return match(source, tag, ANY_DATATYPE);
    }

    /** The first matching message, kept or arriving; {@code datatype} {@link #ANY_DATATYPE} matches any. */
    private TaggedMessage match(int source, int tag, int datatype) {
        TaggedMessage m = takeKept(source, tag, datatype);
        java.util.Set<Integer> ended = new java.util.HashSet<>();
        while (m == null) {
            if (source == ANY_SOURCE) {
                int[] sources = transport.sources();
                int s = sources[Math.floorMod(nextSource++, sources.length)];
                if (ended.contains(s)) {
                    continue;
                }
                try {
                    m = matchOrKeep(transport.nextMessage(s, ROUND_NANOS), tag);
                } catch (MpiException e) {
                    // a rank that ended sends nothing more; the others may still match
                    if (e.errorCode() != MpiErrors.ERR_TRUNCATE) {
                        throw e;
                    }
                    ended.add(s);
                    if (ended.size() == sources.length) {
                        throw new MpiException(MpiErrors.ERR_TRUNCATE, "every rank ended before sending a message"
                                + (tag == ANY_TAG ? "" : " with tag " + tag), e);
                    }
                }
            } else {
                m = matchOrKeep(transport.nextMessage(source, WAIT_NANOS), tag);
            }
        }
        return m;
    }

    /**
     * Receives exactly {@code count} elements from one source regardless of message boundaries
     * and tags: first from the messages kept for that source, then from the transport.
     *
     * @param datatype MPI datatype code expected
     * @param dst      where the elements go
     * @param offset   byte index in {@code dst} of the first element
     * @param count    number of elements, &gt;= 1
     * @param source   the sending rank
     */
    public void recvElements(int datatype, ByteBuffer dst, int offset, int count, int source) {
        ArrayDeque<TaggedMessage> q = kept.get(source);
        TaggedMessage partial = transport.takePartial(source);
        if (partial != null) {
            q = kept.computeIfAbsent(source, k -> new ArrayDeque<>());
            q.addLast(partial);
        }
        int size = MpiDatatype.sizeOf(datatype);
        int got = 0;
        while (q != null && !q.isEmpty() && got < count) {
            TaggedMessage head = q.peekFirst();
            if (head.datatype() != datatype) {
                throw typeMismatch(head, datatype);
            }
            int n = Math.min(count - got, head.elements());
            ByteBuffer data = head.data();
            dst.put(offset + got * size, data, data.position(), n * size);
            data.position(data.position() + n * size);
            got += n;
            if (!data.hasRemaining()) {
                q.removeFirst();
            }
        }
        if (got < count) {
            transport.recv(datatype, dst, offset + got * size, count - got, source);
        }
    }

    private TaggedMessage matchOrKeep(TaggedMessage m, int tag) {
        if (m == null) {
            return null;
        }
        if (tag == ANY_TAG || m.tag() == tag) {
            return m;
        }
        kept.computeIfAbsent(m.source(), k -> new ArrayDeque<>()).addLast(m);
        return null;
    }

    private TaggedMessage takeKept(int source, int tag, int datatype) {
        if (source != ANY_SOURCE) {
            return takeKept(kept.get(source), tag, datatype);
        }
        for (ArrayDeque<TaggedMessage> q : kept.values()) {
            TaggedMessage m = takeKept(q, tag, datatype);
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    private static TaggedMessage takeKept(ArrayDeque<TaggedMessage> q, int tag, int datatype) {
        if (q == null) {
            return null;
        }
        for (Iterator<TaggedMessage> it = q.iterator(); it.hasNext(); ) {
            TaggedMessage m = it.next();
            if (tag == ANY_TAG || m.tag() == tag) {
                if (datatype != ANY_DATATYPE && m.datatype() != datatype) {
                    // stays kept where it is
                    throw typeMismatch(m, datatype);
                }
                it.remove();
                return m;
            }
        }
        return null;
    }

    private Status deliver(TaggedMessage m, int datatype, ByteBuffer dst, int offset, int count) {
        if (m.datatype() != datatype) {
            // just arrived, so the newest of its source: kept last
            kept.computeIfAbsent(m.source(), k -> new ArrayDeque<>()).addLast(m);
            throw typeMismatch(m, datatype);
        }
        int elements = m.elements();
        if (elements > count) {
            throw new MpiException(MpiErrors.ERR_TRUNCATE, "rank " + m.source() + " sent a message of " + elements
                    + " elements with tag " + m.tag() + "; the receive takes at most " + count);
        }
        int size = MpiDatatype.sizeOf(datatype);
        ByteBuffer data = m.data();
        dst.put(offset, data, data.position(), elements * size);
        return new Status(m.source(), m.tag(), elements);
    }

    private static MpiException typeMismatch(TaggedMessage m, int datatype) {
        return new MpiException(MpiErrors.ERR_TYPE, "rank " + m.source() + " sent MPI_"
                + MpiDatatype.ofCode(m.datatype()) + " elements with tag " + m.tag() + ", expected MPI_"
                + MpiDatatype.ofCode(datatype));
    }
}
