package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.protocol.MpiErrors;

/**
 * One rank's part in a non-blocking collective: rounds of sends and receives, each round posted
 * once the one before has completed and its local step (a reduction, a copy) has run. It is an
 * {@link Operation}, so the {@code mpi} layer's requests test and wait for it as for a send.
 * <p>
 * The engine moves every schedule under way on in each {@link Engine#progress}: whatever call the
 * program makes (a {@code test}, a blocking receive, another collective's wait) also carries the
 * collective forward, with no thread of the library's own. Messages travel in the communicator's
 * non-blocking collective context ({@code context + 1 + 2^30}), tagged with the call's number on
 * the communicator: every rank numbers its non-blocking collectives in the order it starts them,
 * which MPI requires to be the same on every rank, so several outstanding ones never take each
 * other's messages, nor do the blocking collectives (whose receives take any tag in their own
 * context). Between two ranks, one schedule's messages are posted in the order the peer sends them.
 */
public final class Schedule extends Operation {

    /** Added to a communicator's collective context for its non-blocking collectives. */
    static final int NONBLOCKING = 1 << 30;

    private final Communicator c;
    private final String what;
    private final int context;
    private final int messageTag;
    private final List<Round> rounds = new ArrayList<>();
    private int current = -1;
    private Operation[] posted = new Operation[0];
    private Runnable onDone;

    /**
     * @param call the call's name in messages, {@code iAllReduce} and so on
     * @param op   the reduction, or {@code null}
     * @param root the root of a rooted call, else 0
     * @throws CommFailure ({@code MPI_ERR_ROOT}) when the root is no rank of the communicator
     */
    Schedule(Communicator c, String call, Combiner op, int root, boolean rooted, Kind kind) {
        super(kind);
        if (root < 0 || root >= c.size()) {
            throw new CommFailure(Collectives.ERR_ROOT, call + ": root " + root + " does not exist (the communicator has "
                    + c.size() + " ranks)");
        }
        if (op != null) {
            op.check(kind);
        }
        this.c = c;
        this.what = call + (op != null ? " with MPI." + op : "") + (rooted ? " (root " + root + ")" : "");
        this.context = c.context + 1 + NONBLOCKING;
        this.messageTag = c.nonBlockingCalls++ & Integer.MAX_VALUE;
        this.source = Engine.ANY_SOURCE;
        this.tag = Engine.ANY_TAG;
    }

    /** @return a new last round */
    Round round() {
        Round r = new Round();
        rounds.add(r);
        return r;
    }

    /**
     * Posts the first round and hands the schedule to the engine, which moves it on from now on.
     *
     * @param onDone runs once every round has completed, before the schedule is done (the
     *               {@code mpi} layer's copy of the results into the program's buffer)
     */
    public void start(Runnable onDone) {
        this.onDone = onDone;
        c.engine.schedules.start(this);
    }

    /**
     * Moves the schedule on as far as it goes now: rounds whose messages have all completed run
     * their step, and the next round is posted.
     *
     * @return whether anything moved
     */
    boolean advance() {
        boolean moved = false;
        while (!done) {
            for (Operation op : posted) {
                if (!op.done) {
                    return moved;
                }
            }
            moved = true;
            try {
                if (current >= 0) {
                    check(rounds.get(current));
                    if (done) {
                        return true;
                    }
                    Runnable then = rounds.get(current).then;
                    if (then != null) {
                        then.run();
                    }
                }
                current++;
                if (current == rounds.size()) {
                    if (onDone != null) {
                        onDone.run();
                    }
                    done = true;
                    return true;
                }
                post(rounds.get(current));
            } catch (CommFailure e) {
                abandon(e.errorClass(), e.getMessage());
            } catch (RuntimeException e) {
                abandon(MpiErrors.ERR_INTERN, e.toString());
            }
        }
        return moved;
    }

    private void post(Round round) {
        Operation[] ops = new Operation[round.posts.size()];
        for (int i = 0; i < ops.length; i++) {
            Post p = round.posts.get(i);
            if (p.send) {
                ByteBuffer m = Engine.newMessage(p.bytes);
                m.put(Envelope.LENGTH, p.data, p.at, p.bytes);
                ops[i] = c.engine.isend(context, c.members[p.peer], messageTag, kind, m);
            } else {
                ops[i] = c.engine.irecv(context, c.members[p.peer], messageTag, kind, p.bytes,
                        (src, from, n) -> p.data.put(p.at, src, from, n));
            }
        }
        posted = ops;
    }

    /** Fails the schedule when a receive of the round failed or brought another count. */
    private void check(Round round) {
        for (int i = 0; i < posted.length; i++) {
            Post p = round.posts.get(i);
            Operation op = posted[i];
            if (p.send) {
                continue;
            }
            if (op.error == MpiErrors.ERR_TRUNCATE) {
                abandon(MpiErrors.ERR_TRUNCATE, "rank " + p.peer + " sent more than the " + p.bytes
                        + " bytes expected (the ranks passed different counts)");
            } else if (op.error != 0) {
                abandon(op.error, op.errorText);
            } else if (op.bytes != p.bytes) {
                abandon(MpiErrors.ERR_COUNT, "rank " + p.peer + " sent " + op.bytes + " bytes, " + p.bytes
                        + " expected (the ranks passed different counts)");
            }
            if (done) {
                return;
            }
        }
    }

    /** Ends the schedule with an error; its receives still posted are cancelled. */
    private void abandon(int errorClass, String text) {
        for (Operation op : posted) {
            if (!op.done) {
                c.engine.cancel(op);
            }
        }
        posted = new Operation[0];
        fail(errorClass, "rank " + c.rank() + ": " + what + " on " + c + ": " + text);
    }

    /** @return what the schedule waits for, for a message when a wait times out */
    String describe() {
        StringBuilder b = new StringBuilder("rank " + c.rank() + ": " + what + " on " + c + " did not complete");
        if (current >= 0 && current < rounds.size()) {
            List<Post> posts = rounds.get(current).posts;
            for (int i = 0; i < posted.length; i++) {
                if (!posted[i].done) {
                    b.append(posts.get(i).send ? "; rank " + posts.get(i).peer + " did not take its message"
                            : "; no message from rank " + posts.get(i).peer + " arrived");
                    break;
                }
            }
        }
        return b.toString();
    }

    /** One message of a round: to or from a group rank, bytes of a buffer from an index. */
    private record Post(boolean send, int peer, ByteBuffer data, int at, int bytes) {
    }

    /** Messages posted together, then a local step once all completed. */
    static final class Round {
        final List<Post> posts = new ArrayList<>();
        Runnable then;

        /** Sends {@code bytes} of {@code data} from {@code at} (copied when the round is posted). */
        Round send(int peer, ByteBuffer data, int at, int bytes) {
            posts.add(new Post(true, peer, data, at, bytes));
            return this;
        }

        /** Receives exactly {@code bytes} into {@code data} at {@code at}. */
        Round recv(int peer, ByteBuffer data, int at, int bytes) {
            posts.add(new Post(false, peer, data, at, bytes));
            return this;
        }

        /** @param step runs once every message of the round has completed */
        Round then(Runnable step) {
            this.then = step;
            return this;
        }
    }

    /** The schedules of one engine under way. */
    static final class Active {
        private final List<Schedule> schedules = new ArrayList<>();
        private boolean advancing;

        /** Takes a new schedule and posts its first round (the engine's progress within leaves it be). */
        void start(Schedule s) {
            schedules.add(s);
            boolean outer = !advancing;
            advancing = true;
            try {
                s.advance();
            } finally {
                advancing = !outer;
            }
        }

        /** @return whether any schedule moved; a call from within a schedule's own posting does nothing */
        boolean advance() {
            if (advancing || schedules.isEmpty()) {
                return false;
            }
            advancing = true;
            boolean moved = false;
            try {
                for (int i = 0; i < schedules.size(); i++) {
                    Schedule s = schedules.get(i);
                    if (!s.done && s.advance()) {
                        moved = true;
                    }
                }
                schedules.removeIf(Operation::done);
            } finally {
                advancing = false;
            }
            return moved;
        }
    }
}
