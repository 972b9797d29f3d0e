package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.channel.shm.BackoffIdler;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Point-to-point messages between the ranks of one world, with MPI's matching rules: a receive
 * takes the first message, in arrival order, whose context, source and tag it names
 * ({@link #ANY_SOURCE}, {@link #ANY_TAG} match every one); two messages from one source in one
 * context never overtake each other, because a link keeps their order and so do the queues here.
 * Messages that arrive before their receive wait in the unexpected queue; a receive into a
 * smaller buffer ends with {@code MPI_ERR_TRUNCATE}.
 * <p>
 * Progress happens only inside calls ({@link #test}, {@link #await} and the posting calls): every
 * call moves queued sends out, polls the fabric and moves the non-blocking collectives under way
 * on ({@link Schedule}). One thread at a time: the {@code mpi} layer serialises calls.
 */
public final class Engine implements AutoCloseable {

    /** Matches a message from any source. */
    public static final int ANY_SOURCE = -1;
    /** Matches a message with any tag. */
    public static final int ANY_TAG = -1;
    /** Largest tag a program may use. */
    public static final int TAG_UB = Integer.MAX_VALUE;

    private final int rank;
    private final int size;
    private final Fabric fabric;
    private final long timeoutNanos;
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Operation.Send>[] outbox;
    /** Destinations with queued sends, in the order they got their first. */
    private final int[] sending;
    private int sendingCount;
    private final List<Operation.Recv> posted = new ArrayList<>();
    private final List<Arrived> unexpected = new ArrayList<>();
    private final BackoffIdler idler = new BackoffIdler();
    private final Link.Sink sink = this::arrive;
    /** The non-blocking collectives under way, moved on by every {@link #progress}. */
    final Schedule.Active schedules = new Schedule.Active();
    private boolean closed;
    /** The context the next new communicator may take at the least ({@link Communicator}). */
    int nextContext = 2;
    private long messagesIn;
    private long messagesOut;

    /**
     * @param rank         this process's rank in the world
     * @param size         ranks in the world
     * @param fabric       the links to the others; closed with the engine
     * @param timeoutNanos longest wait of one call, 0 for none
     */
    @SuppressWarnings("unchecked")
    public Engine(int rank, int size, Fabric fabric, long timeoutNanos) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException("rank " + rank + " of " + size);
        }
        this.rank = rank;
        this.size = size;
        this.fabric = fabric;
        this.timeoutNanos = timeoutNanos;
        this.outbox = new ArrayDeque[size];
        this.sending = new int[size];
    }

    /** @return this process's rank in the world */
    public int rank() {
        return rank;
    }

    /** @return ranks in the world */
    public int size() {
        return size;
    }

    /** @return messages received and sent since the start: {in, out} */
    public long[] counts() {
        return new long[] {messagesIn, messagesOut};
    }

    /**
     * @param payloadBytes bytes of elements
     * @return a little-endian buffer for one message, its position after the envelope
     */
    public static ByteBuffer newMessage(int payloadBytes) {
        ByteBuffer b = ByteBuffer.allocate(Envelope.LENGTH + payloadBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.position(Envelope.LENGTH);
        return b;
    }

    /**
     * Starts a send: the message goes out as far as its link takes it now, the rest in later calls.
     *
     * @param context the communicator's context
     * @param dest    the destination's world rank
     * @param tag     the tag
     * @param kind    the elements' kind
     * @param message from {@link #newMessage}, elements written after the envelope
     * @return the send, done once every byte is out (the message buffer is then the engine's no more)
     */
    public Operation.Send isend(int context, int dest, int tag, Kind kind, ByteBuffer message) {
        checkOpen();
        if (dest < 0 || dest >= size) {
            throw new CommFailure(MpiErrors.ERR_RANK, "rank " + dest + " does not exist (the world has " + size + ")");
        }
        Envelope.write(message, 0, context, rank, dest, tag, kind);
        message.limit(message.capacity()).position(0);
        Operation.Send send = new Operation.Send(kind, message, dest, tag);
        messagesOut++;
        if (dest == rank) {
            arrive(message, message.limit());
            send.done = true;
            return send;
        }
        ArrayDeque<Operation.Send> q = outbox[dest];
        if ((q == null || q.isEmpty()) && fabric.link(dest).offer(message)) {
            send.done = true;
            return send;
        }
        if (q == null) {
            q = outbox[dest] = new ArrayDeque<>();
        }
        if (q.isEmpty()) {
            sending[sendingCount++] = dest;
        }
        q.add(send);
        return send;
    }

    /**
     * Posts a receive: matched at once against the messages waiting, else when one arrives.
     *
     * @param context  the communicator's context
     * @param source   the source's world rank or {@link #ANY_SOURCE}
     * @param tag      the tag or {@link #ANY_TAG}
     * @param kind     the kind expected
     * @param capacity bytes the target takes at most
     * @param target   where the elements go
     * @return the receive
     */
    public Operation.Recv irecv(int context, int source, int tag, Kind kind, int capacity, Operation.Unpacker target) {
        checkOpen();
        if (source != ANY_SOURCE && (source < 0 || source >= size)) {
            throw new CommFailure(MpiErrors.ERR_RANK, "rank " + source + " does not exist (the world has " + size + ")");
        }
        Operation.Recv recv = new Operation.Recv(context, source, tag, kind, capacity, target);
        for (int i = 0; i < unexpected.size(); i++) {
            Arrived a = unexpected.get(i);
            if (recv.matches(a.context, a.source, a.tag)) {
                unexpected.remove(i);
                complete(recv, a.data, 0, a.data.limit(), a.source, a.tag, a.kind);
                return recv;
            }
        }
        if (source != rank) {
            fabric.listen(source == ANY_SOURCE ? Fabric.EVERY_PEER : source);
        }
        posted.add(recv);
        progress();
        return recv;
    }

    /**
     * Looks for a waiting message without receiving it.
     *
     * @return the message's facts (source, tag, kind, bytes), or {@code null} when none matches yet
     */
    public Arrived iprobe(int context, int source, int tag) {
        checkOpen();
        if (source != rank) {
            fabric.listen(source == ANY_SOURCE ? Fabric.EVERY_PEER : source);
        }
        Arrived a = findUnexpected(context, source, tag);
        if (a == null && progress()) {
            a = findUnexpected(context, source, tag);
        }
        return a;
    }

    /** Waits for a matching message without receiving it. */
    public Arrived probe(int context, int source, int tag) {
        long start = System.nanoTime();
        while (true) {
            Arrived a = iprobe(context, source, tag);
            if (a != null) {
                idler.reset();
                return a;
            }
            int awaited = source == ANY_SOURCE ? Fabric.EVERY_PEER : source;
            idle(start, awaited, () -> Pending.noMessage(source, tag));
        }
    }

    private Arrived findUnexpected(int context, int source, int tag) {
        for (Arrived a : unexpected) {
            if (a.context == context && (source == ANY_SOURCE || source == a.source) && (tag == ANY_TAG || tag == a.tag)) {
                return a;
            }
        }
        return null;
    }

    /**
     * Moves the calls on once.
     *
     * @param op the operation
     * @return whether it is done
     */
    public boolean test(Operation op) {
        if (!op.done) {
            progress();
        }
        return op.done;
    }

    /**
     * Waits until the operation is done.
     *
     * @throws CommFailure when the wait times out or a peer is gone; the operation stays pending
     */
    public void await(Operation op) {
        if (op.done) {
            return;
        }
        long start = System.nanoTime();
        while (true) {
            progress();
            if (op.done) {
                idler.reset();
                return;
            }
            idle(start, Pending.awaited(op), () -> Pending.describe(op));
        }
    }

    /** Waits until every operation is done. */
    public void awaitAll(Operation[] ops) {
        long start = System.nanoTime();
        int from = 0;
        while (true) {
            while (from < ops.length && (ops[from] == null || ops[from].done)) {
                from++;
            }
            if (from == ops.length) {
                idler.reset();
                return;
            }
            if (!progress()) {
                final int at = from;
                idle(start, Pending.awaited(ops[at]), () -> Pending.describe(ops[at]));
            }
        }
    }

    /**
     * Waits until one operation is done.
     *
     * @return its index, or -1 when every element is {@code null}
     */
    public int awaitAny(Operation[] ops) {
        long start = System.nanoTime();
        while (true) {
            boolean any = false;
            for (int i = 0; i < ops.length; i++) {
                if (ops[i] != null) {
                    any = true;
                    if (ops[i].done) {
                        idler.reset();
                        return i;
                    }
                }
            }
            if (!any) {
                return -1;
            }
            if (!progress()) {
                idle(start, Fabric.EVERY_PEER, () -> "none of " + ops.length + " requests completed");
            }
        }
    }

    /**
     * Cancels a receive that has not matched yet, or a send none of whose bytes has left this
     * process (one still queued for its link).
     *
     * @return whether it was cancelled (a matched receive, a send on its way complete as usual)
     */
    public boolean cancel(Operation op) {
        if (op instanceof Operation.Recv r && !r.done && posted.remove(r)) {
            r.cancelled = true;
            r.done = true;
            return true;
        }
        if (op instanceof Operation.Send s && !s.done && s.message.position() == 0 && outbox[s.dest].remove(s)) {
            if (outbox[s.dest].isEmpty()) {
                for (int i = 0; i < sendingCount; i++) {
                    if (sending[i] == s.dest) {
                        sending[i] = sending[--sendingCount];
                        break;
                    }
                }
            }
            messagesOut--;
            s.cancelled = true;
            s.done = true;
            return true;
        }
        return false;
    }

    /**
     * Takes a waiting message out of the matching ({@code MPI_MPROBE}): no receive or probe
     * finds it any more; {@link #receive} receives it.
     *
     * @param a from {@link #iprobe} or {@link #probe}, in this same call
     */
    public void claim(Arrived a) {
        unexpected.remove(a);
    }

    /** @return the receive of a claimed message, completed at once ({@code MPI_MRECV}) */
    public Operation.Recv receive(Arrived a, Kind kind, int capacity, Operation.Unpacker target) {
        Operation.Recv r = new Operation.Recv(a.context, a.source, a.tag, kind, capacity, target);
        complete(r, a.data, 0, a.data.limit(), a.source, a.tag, a.kind);
        return r;
    }

    /**
     * Moves queued sends out and polls every link once.
     *
     * @return whether anything moved
     */
    public boolean progress() {
        boolean moved = false;
        for (int i = 0; i < sendingCount; ) {
            int dest = sending[i];
            ArrayDeque<Operation.Send> q = outbox[dest];
            Link link = fabric.link(dest);
            Operation.Send s;
            while ((s = q.peek()) != null && link.offer(s.message)) {
                q.poll();
                s.done = true;
                moved = true;
            }
            if (q.isEmpty()) {
                sending[i] = sending[--sendingCount];
            } else {
                i++;
            }
        }
        if (fabric.poll(sink) > 0) {
            moved = true;
        }
        return schedules.advance() || moved;
    }

    /** @return whether sends are still queued */
    public boolean sending() {
        return sendingCount > 0;
    }

    /** @return messages that arrived and were never received */
    public int unexpectedCount() {
        return unexpected.size();
    }

    /** @param awaited the rank whose message the wait needs, or {@link Fabric#EVERY_PEER} ({@link Fabric#idle}) */
    private void idle(long start, int awaited, java.util.function.Supplier<String> what) {
        long waited = System.nanoTime() - start;
        if (timeoutNanos > 0 && waited > timeoutNanos) {
            throw new CommFailure(MpiErrors.ERR_OTHER, "rank " + rank + ": " + what.get() + " within "
                    + java.util.concurrent.TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " s");
        }
        fabric.idle(waited, awaited);
        idler.idle(0);
    }

    private void arrive(ByteBuffer m, int length) {
        if (length < Envelope.LENGTH) {
            throw new CommFailure(MpiErrors.ERR_INTERN, "rank " + rank + ": a message of " + length
                    + " bytes is shorter than its envelope");
        }
        int context = Envelope.context(m, 0);
        int source = Envelope.source(m, 0);
        int tag = Envelope.tag(m, 0);
        Kind kind = Kind.ofCode(Envelope.kindCode(m, 0));
        if (kind == null || source < 0 || source >= size) {
            throw new CommFailure(MpiErrors.ERR_INTERN, "rank " + rank + ": a message with a bad envelope (source "
                    + source + ", kind " + Envelope.kindCode(m, 0) + ")");
        }
        messagesIn++;
        int bytes = length - Envelope.LENGTH;
        for (int i = 0; i < posted.size(); i++) {
            Operation.Recv r = posted.get(i);
            if (r.matches(context, source, tag)) {
                posted.remove(i);
                complete(r, m, Envelope.LENGTH, bytes, source, tag, kind);
                return;
            }
        }
        ByteBuffer copy = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(0, m, Envelope.LENGTH, bytes);
        unexpected.add(new Arrived(context, source, tag, kind, copy));
    }

    private void complete(Operation.Recv r, ByteBuffer src, int at, int bytes, int source, int tag, Kind kind) {
        r.source = source;
        r.tag = tag;
        r.kind = kind;
        if (!compatible(r.wantKind, kind)) {
            r.bytes = 0;
            r.fail(MpiErrors.ERR_TYPE, "rank " + source + " sent " + bytes / kind.size() + " elements of MPI." + kind
                    + ", rank " + rank + " received MPI." + r.wantKind);
            return;
        }
        int n = Math.min(bytes, r.capacity);
        r.bytes = n;
        if (n > 0) {
            r.target.unpack(src, at, n);
        }
        if (bytes > r.capacity) {
            r.fail(MpiErrors.ERR_TRUNCATE, "rank " + source + " sent " + bytes + " bytes with tag " + tag + ", rank "
                    + rank + " received into room for " + r.capacity);
            return;
        }
        r.done = true;
    }

    private static boolean compatible(Kind expected, Kind sent) {
        return expected == sent || expected == Kind.BYTE || expected == Kind.PACKED || sent == Kind.PACKED;
    }

    private void checkOpen() {
        if (closed) {
            throw new CommFailure(MpiErrors.ERR_OTHER, "MPI was finalized");
        }
    }

    /**
     * Moves every queued send out (waiting as long as that takes), then closes the fabric.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            long start = System.nanoTime();
            while (sendingCount > 0) {
                if (!progress()) {
                    idle(start, Fabric.EVERY_PEER, () -> sendingCount + " ranks did not take their messages");
                }
            }
        } finally {
            closed = true;
            fabric.close();
        }
    }
}
