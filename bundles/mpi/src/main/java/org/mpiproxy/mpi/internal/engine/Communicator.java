package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import org.mpiproxy.protocol.MpiErrors;

/**
 * A group of ranks of the world with a context of its own: point-to-point messages in ranks of
 * the group (context {@code c}), and the collectives ({@link Collectives}, context {@code c + 1},
 * so that they never match a program's own receives; the non-blocking ones, {@link Schedule},
 * context {@code c + 1 + 2^30}, so that no blocking collective's receive takes their messages). New communicators ({@link #split},
 * {@link #dup}) take the largest context any member would use next, agreed in one collective,
 * so no rank ever has two communicators with one context.
 * <p>
 * Elements travel packed and little-endian: the {@code mpi} layer packs a program's arrays and
 * buffers into messages and unpacks them from receives.
 */
public final class Communicator {

    /** A rank that is nobody: sends to it and receives from it complete at once, empty. */
    public static final int PROC_NULL = -2;
    /** {@link #split}'s colour for "in no new communicator". */
    public static final int UNDEFINED = -32766;

    final Engine engine;
    final int context;
    final int[] members;
    final int rank;
    /** Non-blocking collectives started on it: the next one's number, its messages' tag ({@link Schedule}). */
    int nonBlockingCalls;
    /** World rank to group rank, or {@code null} for the world (identity). */
    private final int[] ranksOfWorld;
    /** The communicator {@link #dup} made this one from, or {@code null}. */
    private Communicator original;

    private Communicator(Engine engine, int context, int[] members, int rank) {
        this.engine = engine;
        this.context = context;
        this.members = members;
        this.rank = rank;
        boolean identity = members.length == engine.size();
        for (int i = 0; identity && i < members.length; i++) {
            identity = members[i] == i;
        }
        if (identity) {
            this.ranksOfWorld = null;
        } else {
            this.ranksOfWorld = new int[engine.size()];
            Arrays.fill(ranksOfWorld, -1);
            for (int i = 0; i < members.length; i++) {
                ranksOfWorld[members[i]] = i;
            }
        }
    }

    /** @return every rank of the engine's world, context 0 */
    public static Communicator world(Engine engine) {
        int[] members = new int[engine.size()];
        for (int i = 0; i < members.length; i++) {
            members[i] = i;
        }
        return new Communicator(engine, 0, members, engine.rank());
    }

    /** @return this process alone, with a context of its own */
    public static Communicator self(Engine engine) {
        int c = engine.nextContext;
        engine.nextContext = c + 2;
        return new Communicator(engine, c, new int[] {engine.rank()}, 0);
    }

    /** @return this process's rank in the group */
    public int rank() {
        return rank;
    }

    /** @return ranks in the group */
    public int size() {
        return members.length;
    }

    /** @return the engine */
    public Engine engine() {
        return engine;
    }

    /** @return the point-to-point context (the collectives use the next one) */
    public int context() {
        return context;
    }

    /** @return the world rank of group rank {@code r} */
    public int worldRank(int r) {
        return members[r];
    }

    /** @return the group rank of world rank {@code w}, -1 when not a member */
    public int rankOf(int w) {
        return ranksOfWorld == null ? w : w >= 0 && w < ranksOfWorld.length ? ranksOfWorld[w] : -1;
    }

    /**
     * Starts a send.
     *
     * @param message from {@link Engine#newMessage}, elements after the envelope
     * @param dest    a group rank or {@link #PROC_NULL}
     * @param tag     0 or more
     */
    public Operation.Send isend(ByteBuffer message, Kind kind, int dest, int tag) {
        if (tag < 0) {
            throw new CommFailure(MpiErrors.ERR_TAG, "tag " + tag + " is negative (tags are 0.." + Engine.TAG_UB + ")");
        }
        if (dest == PROC_NULL) {
            Operation.Send s = new Operation.Send(kind, message, dest, tag);
            s.done = true;
            return s;
        }
        return engine.isend(context, world(dest), tag, kind, message);
    }

    /**
     * Posts a receive; the status's source is then a world rank ({@link #rankOf} gives the group's).
     *
     * @param source a group rank, {@link Engine#ANY_SOURCE} or {@link #PROC_NULL}
     * @param tag    0 or more, or {@link Engine#ANY_TAG}
     */
    public Operation.Recv irecv(int source, int tag, Kind kind, int capacity, Operation.Unpacker target) {
        if (tag < 0 && tag != Engine.ANY_TAG) {
            throw new CommFailure(MpiErrors.ERR_TAG, "tag " + tag + " is negative (tags are 0.." + Engine.TAG_UB
                    + ", or MPI.ANY_TAG)");
        }
        if (source == PROC_NULL) {
            Operation.Recv r = new Operation.Recv(context, source, tag, kind, capacity, target);
            r.source = PROC_NULL;
            r.tag = Engine.ANY_TAG;
            r.done = true;
            return r;
        }
        return engine.irecv(context, source == Engine.ANY_SOURCE ? Engine.ANY_SOURCE : world(source), tag, kind,
                capacity, target);
    }

    /** @return a waiting message's facts (source as a world rank), or {@code null} */
    public Arrived iprobe(int source, int tag) {
        return engine.iprobe(context, source == Engine.ANY_SOURCE ? Engine.ANY_SOURCE : world(source), tag);
    }

    /** Waits for a matching message without receiving it. */
    public Arrived probe(int source, int tag) {
        return engine.probe(context, source == Engine.ANY_SOURCE ? Engine.ANY_SOURCE : world(source), tag);
    }

    int world(int r) {
        if (r < 0 || r >= members.length) {
            throw new CommFailure(MpiErrors.ERR_RANK, "rank " + r + " does not exist (the communicator has "
                    + members.length + ")");
        }
        return members[r];
    }

    /** @return a communicator of the same ranks with a context of its own (collective) */
    public Communicator dup() {
        ByteBuffer mine = ints(engine.nextContext);
        ByteBuffer agreed = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        Collectives.allReduce(this, mine, agreed, 1, Kind.INT, Reduction.MAX);
        int c = agreed.getInt(0);
        engine.nextContext = c + 2;
        Communicator d = new Communicator(engine, c, members, rank);
        d.original = this;
        return d;
    }

    /** @return the communicator {@link #dup} made this one from, {@code null} when another call made it */
    public Communicator original() {
        return original;
    }

    /**
     * Splits the group by colour, ordering each part by key, then by rank (collective).
     *
     * @return this process's part, or {@code null} when its colour is {@link #UNDEFINED}
     */
    public Communicator split(int color, int key) {
        if (color < 0 && color != UNDEFINED) {
            throw new CommFailure(MpiErrors.ERR_ARG, "split colour " + color + " is negative (and not MPI.UNDEFINED)");
        }
        int n = members.length;
        ByteBuffer all = ByteBuffer.allocate(12 * n).order(ByteOrder.LITTLE_ENDIAN);
        Collectives.allGather(this, ints(color, key, engine.nextContext), 12, all, Kind.INT);
        int c = 0;
        for (int i = 0; i < n; i++) {
            c = Math.max(c, all.getInt(12 * i + 8));
        }
        engine.nextContext = c + 2;
        if (color == UNDEFINED) {
            return null;
        }
        long[] order = new long[n];
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (all.getInt(12 * i) == color) {
                // key in the high half (signed order), rank in the low half
                order[count++] = ((long) all.getInt(12 * i + 4) << 32) | i;
            }
        }
        long[] part = Arrays.copyOf(order, count);
        Arrays.sort(part);
        int[] world = new int[count];
        int mine = -1;
        for (int i = 0; i < count; i++) {
            int r = (int) part[i];
            world[i] = members[r];
            if (r == rank) {
                mine = i;
            }
        }
        return new Communicator(engine, c, world, mine);
    }

    static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            b.putInt(4 * i, values[i]);
        }
        return b;
    }

    @Override
    public String toString() {
        return "communicator of " + members.length + " ranks (context " + context + ")";
    }
}
