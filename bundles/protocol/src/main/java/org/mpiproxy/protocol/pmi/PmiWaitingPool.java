package org.mpiproxy.protocol.pmi;

import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.IntToLongFunction;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The connections of a PMI server that have not named their rank yet, shared fairly among the uids
 * that own them. Any connection gets in while fewer than the capacity wait, so a large job's ranks
 * may all connect at once. When the pool is full, the uids of the waiting connections and of the
 * newcomer are looked up in the kernel's table of loopback sockets ({@code /proc/net/tcp}, read once
 * per batch of connections accepted, at most twice): a newcomer whose uid holds at least two fewer
 * waiting connections than the uid holding the most takes the place of that uid's oldest connection
 * that has not named any id yet; any other newcomer is closed. So no uid can keep another out: the
 * pool tends to equal shares among the uids that want it, and one uid alone may fill it. A socket the
 * table does not list counts for uid -1, as one more user: without the table (not Linux) the pool is
 * shared as before, first come, first served. PMI thread only; each kind of close is logged at most
 * once per {@code logEveryNanos}.
 */
final class PmiWaitingPool {

    /** {@link PmiConnection#peerUid} not looked up yet. */
    static final long NOT_LOOKED_UP = Long.MIN_VALUE;

    /** The uids of the clients' sockets, by client port, read from the kernel's table when first needed. */
    static final class Owners {
        private final Supplier<Map<Integer, Long>> read;
        private final IntToLongFunction one;
        private Map<Integer, Long> table;
        private boolean readAgain;

        /**
         * @param read one reading of the kernel's table: owner uid by client port; {@code null} when there is none
         * @param one  the owner of one client port, -1 when unknown: without a table
         */
        Owners(Supplier<Map<Integer, Long>> read, IntToLongFunction one) {
            this.read = read;
            this.one = one;
        }

        /** @return the uid owning the client socket of that port, -1 when the table does not list it */
        long uid(int clientPort) {
            if (table == null && !readAgain) {
                table = read.get();
                readAgain = table == null;
            }
            if (table == null) {
                return one.applyAsLong(clientPort);
            }
            if (!table.containsKey(clientPort) && !readAgain) {
                // connected after the table was read: once per batch, read it again
                readAgain = true;
                table = read.get();
            }
            return table.getOrDefault(clientPort, -1L);
        }
    }

    private final int capacity;
    private final Consumer<String> problems;
    private final LongSupplier clock;
    private final long logEveryNanos;
    private long refused;
    private long refusedLogged;
    private long displaced;
    private long displacedLogged;

    /**
     * @param capacity      most connections that wait at once
     * @param problems      gets the lines
     * @param clock         nanoseconds
     * @param logEveryNanos at most one line of each kind this often
     */
    PmiWaitingPool(int capacity, Consumer<String> problems, LongSupplier clock, long logEveryNanos) {
        this.capacity = capacity;
        this.problems = problems;
        this.clock = clock;
        this.logEveryNanos = logEveryNanos;
    }

    /**
     * @param waiting     the open connections that have not completed their handshake
     * @param newcomer    the connection just accepted, not among them
     * @param owners      the kernel's table of this batch
     * @param close       closes a waiting connection that makes room
     * @return whether the newcomer may wait; when not, the caller closes it
     */
    boolean admit(List<PmiConnection> waiting, PmiConnection newcomer, Owners owners,
                  Consumer<PmiConnection> close) {
        if (waiting.size() < capacity) {
            return true;
        }
        // the newcomer first: it is the one that may have connected after the table was read
        long uid = uidOf(newcomer, owners);
        Map<Long, Integer> held = new HashMap<>();
        for (PmiConnection c : waiting) {
            held.merge(uidOf(c, owners), 1, Integer::sum);
        }
        long most = uid;
        for (Map.Entry<Long, Integer> e : held.entrySet()) {
            if (e.getValue() > held.getOrDefault(most, 0)) {
                most = e.getKey();
            }
        }
        int mine = held.getOrDefault(uid, 0);
        int theirs = held.getOrDefault(most, 0);
        PmiConnection oldest = null;
        if (mine + 2 <= theirs) {
            long hog = most;
            oldest = waiting.stream().filter(c -> c.peerUid == hog && c.who == null)
                    .min(Comparator.comparingLong(c -> c.accepted)).orElse(null);
        }
        long now = clock.getAsLong();
        if (oldest == null) {
            refused++;
            if (refused == 1 || now - refusedLogged > logEveryNanos) {
                problems.accept("PMI: " + capacity + " connections have not named their rank yet; refused "
                        + refused + " more, the last of uid " + uid + ", which has " + mine + " of them waiting");
                refusedLogged = now;
            }
            return false;
        }
        close.accept(oldest);
        displaced++;
        if (displaced == 1 || now - displacedLogged > logEveryNanos) {
            problems.accept("PMI: " + capacity + " connections have not named their rank yet, " + theirs
                    + " of them of uid " + most + ": closed its oldest for one of uid " + uid + " (" + mine
                    + " waiting); " + displaced + " so far");
            displacedLogged = now;
        }
        return true;
    }

    private static long uidOf(PmiConnection c, Owners owners) {
        if (c.peerUid == NOT_LOOKED_UP) {
            c.peerUid = owners.uid(c.peerPort);
        }
        return c.peerUid;
    }
}
