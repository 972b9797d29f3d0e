package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * The non-blocking collectives as {@link Schedule}s, on packed little-endian elements, with the
 * algorithms of {@link Collectives} cut into rounds: dissemination barrier, binomial-tree
 * broadcast, reduce, gather and scatter, recursive-doubling all-reduce and scan, ring all-gather;
 * the {@code v} variants of gather and scatter, the all-to-alls and the neighbourhood
 * exchange post every message in one round. Each method checks its arguments, builds the schedule and returns it unstarted: the
 * caller starts it with what to do when it completes ({@link Schedule#start}). Buffers given for
 * results are written only by the schedule, until it is done.
 */
public final class NonBlockingCollectives {

    private static final ByteBuffer NONE = ByteBuffer.allocate(0);

    private NonBlockingCollectives() {
    }

    /** Completes once every rank of the group has started it. */
    public static Schedule barrier(Communicator c) {
        Schedule s = new Schedule(c, "iBarrier", null, 0, false, Kind.BYTE);
        int n = c.size();
        int r = c.rank();
        for (int k = 1; k < n; k <<= 1) {
            s.round().send((r + k) % n, NONE, 0, 0).recv((r - k + n) % n, NONE, 0, 0);
        }
        return s;
    }

    /** The root's {@code bytes} of {@code data} into every rank's {@code data}. */
    public static Schedule bcast(Communicator c, ByteBuffer data, int bytes, Kind kind, int root) {
        Schedule s = new Schedule(c, "iBcast", null, root, true, kind);
        int n = c.size();
        int v = relative(c, root, c.rank());
        int mask = 1;
        while (mask < n) {
            if ((v & mask) != 0) {
                s.round().recv(absolute(c, root, v - mask), data, 0, bytes);
                break;
            }
            mask <<= 1;
        }
        Schedule.Round children = s.round();
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (v + mask < n) {
                children.send(absolute(c, root, v + mask), data, 0, bytes);
            }
        }
        return s;
    }

    /** {@code count} elements of every rank's {@code send} combined into the root's {@code recv}. */
    public static Schedule reduce(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind,
                                  Combiner op, int root) {
        Schedule s = new Schedule(c, "iReduce", op, root, true, kind);
        reduceRounds(s, c, send, recv, count, kind, op, root);
        return s;
    }

    /**
     * Up the root's binomial tree for a commutative operation; for another up rank 0's, whose
     * subtrees are runs of consecutive ranks (so the lower ranks stay on the left), rank 0 then
     * sending the result to the root.
     */
    private static void reduceRounds(Schedule s, Communicator c, ByteBuffer send, ByteBuffer recv, int count,
                                     Kind kind, Combiner op, int root) {
        int n = c.size();
        int bytes = count * kind.size();
        int top = op.commutative() ? root : 0;
        int v = relative(c, top, c.rank());
        ByteBuffer acc = copy(send, bytes);
        ByteBuffer tmp = Collectives.heap(bytes);
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((v & mask) == 0) {
                if ((v | mask) < n) {
                    s.round().recv(absolute(c, top, v | mask), tmp, 0, bytes)
                            .then(() -> op.apply(kind, count, acc, 0, tmp, 0));
                }
            } else {
                s.round().send(absolute(c, top, v & ~mask), acc, 0, bytes);
                break;
            }
        }
        if (top != root && v == 0) {
            s.round().send(root, acc, 0, bytes);
        } else if (top != root && c.rank() == root) {
            s.round().recv(top, recv, 0, bytes);
        } else if (v == 0) {
            s.round().then(() -> recv.put(0, acc, 0, bytes));
        }
    }

    /** {@code count} elements of every rank's {@code send} combined into every rank's {@code recv}. */
    public static Schedule allReduce(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind,
                                     Combiner op) {
        Schedule s = new Schedule(c, "iAllReduce", op, 0, false, kind);
        int n = c.size();
        int r = c.rank();
        int bytes = count * kind.size();
        ByteBuffer acc = copy(send, bytes);
        ByteBuffer tmp = Collectives.heap(bytes);
        Runnable combine = () -> op.apply(kind, count, acc, 0, tmp, 0);
        Runnable combineBefore = () -> op.applyBefore(kind, count, acc, 0, tmp, 0);
        int pof2 = Integer.highestOneBit(n);
        int rem = n - pof2;
        // the first 2*rem ranks pair up so that a power of two takes part in the doubling
        int mine = r - rem;
        if (r < 2 * rem) {
            if ((r & 1) == 0) {
                s.round().send(r + 1, acc, 0, bytes);
                mine = -1;
            } else {
                s.round().recv(r - 1, tmp, 0, bytes).then(combineBefore);
                mine = r / 2;
            }
        }
        if (mine >= 0) {
            for (int mask = 1; mask < pof2; mask <<= 1) {
                int other = mine ^ mask;
                int peer = other < rem ? other * 2 + 1 : other + rem;
                s.round().send(peer, acc, 0, bytes).recv(peer, tmp, 0, bytes)
                        .then(other < mine ? combineBefore : combine);
            }
        }
        if (r < 2 * rem) {
            if ((r & 1) == 1) {
                s.round().send(r - 1, acc, 0, bytes);
            } else {
                s.round().recv(r + 1, acc, 0, bytes);
            }
        }
        s.round().then(() -> recv.put(0, acc, 0, bytes));
        return s;
    }

    /** Every rank's {@code block} bytes of {@code send} into the root's {@code recv}, in rank order. */
    public static Schedule gather(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind, int root) {
        Schedule s = new Schedule(c, "iGather", null, root, true, kind);
        int n = c.size();
        int v = relative(c, root, c.rank());
        int subtree = Math.min(lowBit(v, n), n - v);
        ByteBuffer tmp = Collectives.heap(subtree * block);
        tmp.put(0, send, 0, block);
        Schedule.Round children = s.round();
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((v & mask) == 0) {
                int child = v | mask;
                if (child < n) {
                    children.recv(absolute(c, root, child), tmp, mask * block, Math.min(mask, n - child) * block);
                }
            } else {
                s.round().send(absolute(c, root, v & ~mask), tmp, 0, Math.min(mask, n - v) * block);
                break;
            }
        }
        if (v == 0) {
            s.round().then(() -> {
                for (int i = 0; i < n; i++) {
                    recv.put(absolute(c, root, i) * block, tmp, i * block, block);
                }
            });
        }
        return s;
    }

    /** Every rank's {@code sendBytes} into the root's {@code recv}: {@code counts[i]} bytes at {@code displs[i]}. */
    public static Schedule gatherv(Communicator c, ByteBuffer send, int sendBytes, ByteBuffer recv, int[] counts,
                                   int[] displs, Kind kind, int root) {
        Schedule s = new Schedule(c, "iGatherv", null, root, true, kind);
        int r = c.rank();
        if (r != root) {
            s.round().send(root, send, 0, sendBytes);
            return s;
        }
        checkOwn(s, sendBytes, counts[r]);
        recv.put(displs[r], send, 0, sendBytes);
        Schedule.Round all = s.round();
        for (int i = 0; i < c.size(); i++) {
            if (i != r) {
                all.recv(i, recv, displs[i], counts[i]);
            }
        }
        return s;
    }

    /** The root's {@code send}, {@code block} bytes per rank in rank order, into every rank's {@code recv}. */
    public static Schedule scatter(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind, int root) {
        Schedule s = new Schedule(c, "iScatter", null, root, true, kind);
        int n = c.size();
        int v = relative(c, root, c.rank());
        int low = lowBit(v, n);
        int subtree = Math.min(low, n - v);
        ByteBuffer tmp = Collectives.heap(subtree * block);
        if (v == 0) {
            for (int i = 0; i < n; i++) {
                tmp.put(i * block, send, absolute(c, root, i) * block, block);
            }
        } else {
            s.round().recv(absolute(c, root, v - low), tmp, 0, subtree * block);
        }
        Schedule.Round children = s.round().then(() -> recv.put(0, tmp, 0, block));
        for (int mask = low >> 1; mask > 0; mask >>= 1) {
            int child = v + mask;
            if (child < n) {
                children.send(absolute(c, root, child), tmp, mask * block, Math.min(mask, n - child) * block);
            }
        }
        return s;
    }

    /** The root's {@code counts[i]} bytes at {@code displs[i]} into rank i's {@code recv}. */
    public static Schedule scatterv(Communicator c, ByteBuffer send, int[] counts, int[] displs, ByteBuffer recv,
                                    int recvBytes, Kind kind, int root) {
        Schedule s = new Schedule(c, "iScatterv", null, root, true, kind);
        scattervRounds(s, c, send, counts, displs, recv, recvBytes, root);
        return s;
    }

    private static void scattervRounds(Schedule s, Communicator c, ByteBuffer send, int[] counts, int[] displs,
                                       ByteBuffer recv, int recvBytes, int root) {
        int r = c.rank();
        if (r != root) {
            s.round().recv(root, recv, 0, recvBytes);
            return;
        }
        checkOwn(s, counts[r], recvBytes);
        Schedule.Round all = s.round().then(() -> recv.put(0, send, displs[r], counts[r]));
        for (int i = 0; i < c.size(); i++) {
            if (i != r) {
                all.send(i, send, displs[i], counts[i]);
            }
        }
    }

    /**
     * Every rank's {@code sendBytes} into every rank's {@code recv}: rank i's {@code counts[i]}
     * bytes at {@code displs[i]}, around a ring.
     */
    public static Schedule allGatherv(Communicator c, String call, ByteBuffer send, int sendBytes, ByteBuffer recv,
                                      int[] counts, int[] displs, Kind kind) {
        Schedule s = new Schedule(c, call, null, 0, false, kind);
        int n = c.size();
        int r = c.rank();
        checkOwn(s, sendBytes, counts[r]);
        recv.put(displs[r], send, 0, sendBytes);
        int left = (r - 1 + n) % n;
        int right = (r + 1) % n;
        for (int step = 0; step < n - 1; step++) {
            int out = (r - step + n) % n;
            int in = (r - step - 1 + n) % n;
            s.round().send(right, recv, displs[out], counts[out]).recv(left, recv, displs[in], counts[in]);
        }
        return s;
    }

    /**
     * {@code sendCounts[i]} bytes at {@code sendDispls[i]} to rank i, into its {@code recv} at its
     * displacement for this rank: every message in one round.
     */
    public static Schedule allToAllv(Communicator c, String call, ByteBuffer send, int[] sendCounts,
                                     int[] sendDispls, ByteBuffer recv, int[] recvCounts, int[] recvDispls,
                                     Kind kind) {
        Schedule s = new Schedule(c, call, null, 0, false, kind);
        int n = c.size();
        int r = c.rank();
        checkOwn(s, sendCounts[r], recvCounts[r]);
        recv.put(recvDispls[r], send, sendDispls[r], sendCounts[r]);
        Schedule.Round all = s.round();
        for (int step = 1; step < n; step++) {
            int to = (r + step) % n;
            int from = (r - step + n) % n;
            all.send(to, send, sendDispls[to], sendCounts[to]).recv(from, recv, recvDispls[from], recvCounts[from]);
        }
        return s;
    }

    /**
     * A neighbourhood exchange: {@code sendCounts[i]} bytes of {@code send} at
     * {@code sendDispls[i]} to group rank {@code to[i]}, and {@code recvCounts[j]} bytes from
     * group rank {@code from[j]} into {@code recv} at {@code recvDispls[j]}, every message in one
     * round. Sends are posted in the order of {@code to}, receives in the order of {@code from}:
     * between two ranks the k-th message one sends the other is the k-th the other receives
     * from it. A {@link Communicator#PROC_NULL} neighbour is skipped, its part of {@code recv}
     * left as it is.
     */
    public static Schedule neighbours(Communicator c, String call, int[] to, ByteBuffer send, int[] sendCounts,
                                      int[] sendDispls, int[] from, ByteBuffer recv, int[] recvCounts,
                                      int[] recvDispls, Kind kind) {
        Schedule s = new Schedule(c, call, null, 0, false, kind);
        Schedule.Round all = s.round();
        for (int i = 0; i < to.length; i++) {
            if (to[i] != Communicator.PROC_NULL) {
                all.send(to[i], send, sendDispls[i], sendCounts[i]);
            }
        }
        for (int j = 0; j < from.length; j++) {
            if (from[j] != Communicator.PROC_NULL) {
                all.recv(from[j], recv, recvDispls[j], recvCounts[j]);
            }
        }
        return s;
    }

    /**
     * Every rank's {@code send} ({@code count} elements) combined; rank i's {@code recv} gets
     * {@code counts[i]} bytes from {@code displs[i]} of the result (a reduce to rank 0, then its
     * scatter).
     */
    public static Schedule reduceScatter(Communicator c, String call, ByteBuffer send, int count, int[] counts,
                                         int[] displs, ByteBuffer recv, Kind kind, Combiner op) {
        Schedule s = new Schedule(c, call, op, 0, false, kind);
        ByteBuffer sum = Collectives.heap(count * kind.size());
        reduceRounds(s, c, send, sum, count, kind, op, 0);
        scattervRounds(s, c, sum, counts, displs, recv, counts[c.rank()], 0);
        return s;
    }

    /**
     * Rank r's {@code recv} = the combination of ranks 0..r's {@code send} (inclusive) or 0..r-1's
     * (exclusive: rank 0's {@code recv} is left as it is).
     */
    public static Schedule scan(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind, Combiner op,
                                boolean inclusive) {
        Schedule s = new Schedule(c, inclusive ? "iScan" : "iExScan", op, 0, false, kind);
        int n = c.size();
        int r = c.rank();
        int bytes = count * kind.size();
        ByteBuffer partial = copy(send, bytes);
        ByteBuffer result = inclusive ? copy(send, bytes) : Collectives.heap(bytes);
        ByteBuffer tmp = Collectives.heap(bytes);
        boolean[] have = {inclusive};
        for (int mask = 1; mask < n; mask <<= 1) {
            int peer = r ^ mask;
            if (peer < n) {
                s.round().send(peer, partial, 0, bytes).recv(peer, tmp, 0, bytes).then(() -> {
                    if (peer > r) {
                        op.apply(kind, count, partial, 0, tmp, 0);
                    } else {
                        op.applyBefore(kind, count, partial, 0, tmp, 0);
                        if (have[0]) {
                            op.applyBefore(kind, count, result, 0, tmp, 0);
                        } else {
                            result.put(0, tmp, 0, bytes);
                            have[0] = true;
                        }
                    }
                });
            }
        }
        s.round().then(() -> {
            if (have[0]) {
                recv.put(0, result, 0, bytes);
            }
        });
        return s;
    }

    private static void checkOwn(Schedule s, int sendBytes, int recvBytes) {
        if (sendBytes != recvBytes) {
            throw new CommFailure(org.mpiproxy.protocol.MpiErrors.ERR_COUNT, s.describe().replace(" did not complete",
                    "") + ": " + sendBytes + " bytes sent to itself, " + recvBytes + " bytes of room for them");
        }
    }

    private static int relative(Communicator c, int root, int r) {
        return (r - root + c.size()) % c.size();
    }

    private static int absolute(Communicator c, int root, int v) {
        return (v + root) % c.size();
    }

    /** @return the lowest set bit of {@code v}, or for 0 the smallest power of two of at least {@code n} */
    private static int lowBit(int v, int n) {
        if (v != 0) {
            return Integer.lowestOneBit(v);
        }
        int p = Integer.highestOneBit(n);
        return p == n ? p : p << 1;
    }

    private static ByteBuffer copy(ByteBuffer src, int bytes) {
        ByteBuffer b = Collectives.heap(bytes);
        b.put(0, src, 0, bytes);
        return b;
    }
}
