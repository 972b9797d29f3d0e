package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.protocol.MpiErrors;

/**
 * The collectives of a {@link Communicator}, on packed little-endian elements, with algorithms
 * whose depth grows with log2 of the group: dissemination barrier, binomial-tree broadcast,
 * reduce, gather and scatter, recursive-doubling all-reduce and scan (the reductions in
 * {@link Reductions}), ring all-gather, pairwise all-to-all; the {@code v} variants of gather and
 * scatter go straight between the root and each rank, since only the root knows the counts.
 * <p>
 * Every message of a collective travels in the communicator's second context, its tag naming the
 * call, the operation and the root; a rank receives from a given peer in the order that peer
 * sends, so a rank that calls another collective, or the same one with another root, operation or
 * count, makes its peer fail with a message naming both ranks and both calls instead of waiting
 * for ever.
 */
public final class Collectives {

    /** MPI's error class for an invalid root ({@code MPI_ERR_ROOT}). */
    public static final int ERR_ROOT = 8;

    /** The collectives, as their tags name them. */
    enum Call {
        BARRIER("barrier"), BCAST("bcast"), REDUCE("reduce"), ALLREDUCE("allReduce"), GATHER("gather"),
        GATHERV("gatherv"), SCATTER("scatter"), SCATTERV("scatterv"), ALLGATHER("allGather"),
        ALLGATHERV("allGatherv"), ALLTOALL("allToAll"), ALLTOALLV("allToAllv"), SCAN("scan"), EXSCAN("exScan");

        final String text;

        Call(String text) {
            this.text = text;
        }
    }

    private Collectives() {
    }

    /** Waits until every rank of the group has called it. */
    public static void barrier(Communicator c) {
        Step s = new Step(c, Call.BARRIER, null, 0, Kind.BYTE);
        int n = c.size();
        int r = c.rank();
        ByteBuffer none = ByteBuffer.allocate(0);
        for (int k = 1; k < n; k <<= 1) {
            s.exchange((r + k) % n, none, 0, 0, (r - k + n) % n, none, 0, 0);
        }
    }

    /** Sends the root's {@code bytes} of {@code data} to every rank, into their {@code data}. */
    public static void bcast(Communicator c, ByteBuffer data, int bytes, Kind kind, int root) {
        Step s = new Step(c, Call.BCAST, null, root, kind);
        int n = c.size();
        int v = s.relative(c.rank());
        int mask = 1;
        while (mask < n) {
            if ((v & mask) != 0) {
                s.receive(s.absolute(v - mask), data, 0, bytes);
                break;
            }
            mask <<= 1;
        }
        Operation[] sends = new Operation[32];
        int k = 0;
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (v + mask < n) {
                sends[k++] = s.post(s.absolute(v + mask), data, 0, bytes);
            }
        }
        s.awaitAll(sends);
    }

    /**
     * Combines {@code count} elements of every rank's {@code send} with {@code op} into the
     * root's {@code recv} (ignored elsewhere), in rank order ({@link Reductions}).
     */
    public static void reduce(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind, Combiner op,
                              int root) {
        Reductions.reduce(new Step(c, Call.REDUCE, op, root, kind), send, recv, count, op);
    }

    /** Combines {@code count} elements of every rank's {@code send} into every rank's {@code recv}. */
    public static void allReduce(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind,
                                 Combiner op) {
        Reductions.allReduce(new Step(c, Call.ALLREDUCE, op, 0, kind), send, recv, count, op);
    }

    /** Every rank's {@code block} bytes of {@code send} into the root's {@code recv}, in rank order. */
    public static void gather(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind, int root) {
        Step s = new Step(c, Call.GATHER, null, root, kind);
        int n = c.size();
        int v = s.relative(c.rank());
        int subtree = Math.min(lowBit(v, n), n - v);
        ByteBuffer tmp = heap(subtree * block);
        tmp.put(0, send, 0, block);
        for (int mask = 1; mask < n; mask <<= 1) {
            if ((v & mask) == 0) {
                int child = v | mask;
                if (child < n) {
                    s.receive(s.absolute(child), tmp, mask * block, Math.min(mask, n - child) * block);
                }
            } else {
                s.send(s.absolute(v & ~mask), tmp, 0, Math.min(mask, n - v) * block);
                break;
            }
        }
        if (v == 0) {
            for (int i = 0; i < n; i++) {
                recv.put(s.absolute(i) * block, tmp, i * block, block);
            }
        }
    }

    /** Every rank's {@code sendBytes} into the root's {@code recv} at {@code displs[rank]}. */
    public static void gatherv(Communicator c, ByteBuffer send, int sendBytes, ByteBuffer recv, int[] counts,
                               int[] displs, Kind kind, int root) {
        Step s = new Step(c, Call.GATHERV, null, root, kind);
        int n = c.size();
        int r = c.rank();
        if (r != root) {
            s.send(root, send, 0, sendBytes);
            return;
        }
        Operation.Recv[] recvs = new Operation.Recv[n];
        for (int i = 0; i < n; i++) {
            if (i != r) {
                recvs[i] = s.expect(i, recv, displs[i], counts[i]);
            }
        }
        s.checkOwn(sendBytes, counts[r]);
        recv.put(displs[r], send, 0, sendBytes);
        for (int i = 0; i < n; i++) {
            if (i != r) {
                s.finish(recvs[i], i, counts[i]);
            }
        }
    }

    /** The root's {@code send}, {@code block} bytes per rank in rank order, into every rank's {@code recv}. */
    public static void scatter(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind, int root) {
        Step s = new Step(c, Call.SCATTER, null, root, kind);
        int n = c.size();
        int v = s.relative(c.rank());
        int low = lowBit(v, n);
        int subtree = Math.min(low, n - v);
        ByteBuffer tmp = heap(subtree * block);
        if (v == 0) {
            for (int i = 0; i < n; i++) {
                tmp.put(i * block, send, s.absolute(i) * block, block);
            }
        } else {
            s.receive(s.absolute(v - low), tmp, 0, subtree * block);
        }
        Operation[] sends = new Operation[32];
        int k = 0;
        for (int mask = low >> 1; mask > 0; mask >>= 1) {
            int child = v + mask;
            if (child < n) {
                sends[k++] = s.post(s.absolute(child), tmp, mask * block, Math.min(mask, n - child) * block);
            }
        }
        recv.put(0, tmp, 0, block);
        s.awaitAll(sends);
    }

    /** The root's {@code counts[i]} bytes at {@code displs[i]} into rank i's {@code recv}. */
    public static void scatterv(Communicator c, ByteBuffer send, int[] counts, int[] displs, ByteBuffer recv,
                                int recvBytes, Kind kind, int root) {
        Step s = new Step(c, Call.SCATTERV, null, root, kind);
        int n = c.size();
        int r = c.rank();
        if (r != root) {
            s.receive(root, recv, 0, recvBytes);
            return;
        }
        Operation[] sends = new Operation[n];
        for (int i = 0; i < n; i++) {
            if (i != r) {
                sends[i] = s.post(i, send, displs[i], counts[i]);
            }
        }
        s.checkOwn(counts[r], recvBytes);
        recv.put(0, send, displs[r], counts[r]);
        s.awaitAll(sends);
    }

    /** Every rank's {@code block} bytes of {@code send} into every rank's {@code recv}, in rank order. */
    public static void allGather(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind) {
        int[][] layout = uniform(c.size(), block);
        ring(new Step(c, Call.ALLGATHER, null, 0, kind), send, block, recv, layout[0], layout[1]);
    }

    /** Every rank's {@code sendBytes} into every rank's {@code recv} at {@code displs[rank]}. */
    public static void allGatherv(Communicator c, ByteBuffer send, int sendBytes, ByteBuffer recv, int[] counts,
                                  int[] displs, Kind kind) {
        ring(new Step(c, Call.ALLGATHERV, null, 0, kind), send, sendBytes, recv, counts, displs);
    }

    private static void ring(Step s, ByteBuffer send, int sendBytes, ByteBuffer recv, int[] counts, int[] displs) {
        int n = s.c.size();
        int r = s.c.rank();
        s.checkOwn(sendBytes, counts[r]);
        recv.put(displs[r], send, 0, sendBytes);
        int left = (r - 1 + n) % n;
        int right = (r + 1) % n;
        for (int step = 0; step < n - 1; step++) {
            int out = (r - step + n) % n;
            int in = (r - step - 1 + n) % n;
            s.exchange(right, recv, displs[out], counts[out], left, recv, displs[in], counts[in]);
        }
    }

    /** Block i of every rank's {@code send} ({@code block} bytes each) into block r of rank i's {@code recv}. */
    public static void allToAll(Communicator c, ByteBuffer send, int block, ByteBuffer recv, Kind kind) {
        int[][] layout = uniform(c.size(), block);
        pairwise(new Step(c, Call.ALLTOALL, null, 0, kind), send, layout[0], layout[1], recv, layout[0], layout[1]);
    }

    /** {@code sendCounts[i]} bytes at {@code sendDispls[i]} to rank i, into its {@code recv} at its displacement for this rank. */
    public static void allToAllv(Communicator c, ByteBuffer send, int[] sendCounts, int[] sendDispls, ByteBuffer recv,
                                 int[] recvCounts, int[] recvDispls, Kind kind) {
        pairwise(new Step(c, Call.ALLTOALLV, null, 0, kind), send, sendCounts, sendDispls, recv, recvCounts,
                recvDispls);
    }

    private static void pairwise(Step s, ByteBuffer send, int[] sendCounts, int[] sendDispls, ByteBuffer recv,
                                 int[] recvCounts, int[] recvDispls) {
        int n = s.c.size();
        int r = s.c.rank();
        s.checkOwn(sendCounts[r], recvCounts[r]);
        recv.put(recvDispls[r], send, sendDispls[r], sendCounts[r]);
        for (int step = 1; step < n; step++) {
            int to = (r + step) % n;
            int from = (r - step + n) % n;
            s.exchange(to, send, sendDispls[to], sendCounts[to], from, recv, recvDispls[from], recvCounts[from]);
        }
    }

    /** Rank r's {@code recv} = the combination of ranks 0..r's {@code send}. */
    public static void scan(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind, Combiner op) {
        Reductions.prefix(new Step(c, Call.SCAN, op, 0, kind), send, recv, count, op, true);
    }

    /** Rank r's {@code recv} = the combination of ranks 0..r-1's {@code send}; rank 0's stays as it is. */
    public static void exScan(Communicator c, ByteBuffer send, ByteBuffer recv, int count, Kind kind, Combiner op) {
        Reductions.prefix(new Step(c, Call.EXSCAN, op, 0, kind), send, recv, count, op, false);
    }

    /** @return {counts, displacements} of {@code n} blocks of {@code block} bytes each, in order */
    private static int[][] uniform(int n, int block) {
        int[] counts = new int[n];
        int[] displs = new int[n];
        for (int i = 0; i < n; i++) {
            counts[i] = block;
            displs[i] = i * block;
        }
        return new int[][] {counts, displs};
    }

    /** @return the lowest set bit of {@code v}, or for 0 the smallest power of two of at least {@code n} */
    private static int lowBit(int v, int n) {
        if (v != 0) {
            return Integer.lowestOneBit(v);
        }
        int p = Integer.highestOneBit(n);
        return p == n ? p : p << 1;
    }

    static ByteBuffer heap(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    static ByteBuffer copy(ByteBuffer src, int bytes) {
        ByteBuffer b = heap(bytes);
        b.put(0, src, 0, bytes);
        return b;
    }

    /** One rank's part in one collective call: its tag, its messages, its checks. */
    static final class Step {
        final Communicator c;
        final Call call;
        final Combiner op;
        final int root;
        final Kind kind;
        final int tag;
        final int context;

        Step(Communicator c, Call call, Combiner op, int root, Kind kind) {
            if (root < 0 || root >= c.size()) {
                throw new CommFailure(ERR_ROOT, call.text + ": root " + root + " does not exist (the communicator has "
                        + c.size() + " ranks)");
            }
            this.c = c;
            this.call = call;
            this.op = op;
            this.root = root;
            this.kind = kind;
            this.tag = (call.ordinal() + 1) << 20 | (op == null ? 0 : op.code()) << 16 | root;
            this.context = c.context + 1;
        }

        int relative(int r) {
            return (r - root + c.size()) % c.size();
        }

        int absolute(int v) {
            return (v + root) % c.size();
        }

        Operation.Send post(int dest, ByteBuffer data, int at, int bytes) {
            ByteBuffer m = Engine.newMessage(bytes);
            m.put(Envelope.LENGTH, data, at, bytes);
            return c.engine.isend(context, c.members[dest], tag, kind, m);
        }

        Operation.Recv expect(int source, ByteBuffer into, int at, int bytes) {
            return c.engine.irecv(context, c.members[source], Engine.ANY_TAG, kind, bytes,
                    (src, from, n) -> into.put(at, src, from, n));
        }

        void send(int dest, ByteBuffer data, int at, int bytes) {
            Operation.Send op = post(dest, data, at, bytes);
            await(op);
        }

        void receive(int source, ByteBuffer into, int at, int bytes) {
            finish(expect(source, into, at, bytes), source, bytes);
        }

        void exchange(int dest, ByteBuffer data, int at, int bytes, int source, ByteBuffer into, int intoAt,
                      int intoBytes) {
            Operation.Send out = post(dest, data, at, bytes);
            receive(source, into, intoAt, intoBytes);
            await(out);
        }

        void await(Operation op) {
            try {
                c.engine.await(op);
            } catch (CommFailure e) {
                throw new CommFailure(e.errorClass(), what() + ": " + e.getMessage());
            }
        }

        void awaitAll(Operation[] ops) {
            try {
                c.engine.awaitAll(ops);
            } catch (CommFailure e) {
                throw new CommFailure(e.errorClass(), what() + ": " + e.getMessage());
            }
        }

        void finish(Operation.Recv r, int source, int bytes) {
            await(r);
            if (r.tag != tag) {
                throw new CommFailure(MpiErrors.ERR_OTHER, what() + " met " + call(r.tag) + " of rank " + source
                        + " (every rank must call the same collectives in the same order, with the same root and"
                        + " operation)");
            }
            if (r.error == MpiErrors.ERR_TYPE) {
                throw new CommFailure(MpiErrors.ERR_TYPE, what() + ": " + r.errorText);
            }
            if (r.error == MpiErrors.ERR_TRUNCATE) {
                throw new CommFailure(MpiErrors.ERR_TRUNCATE, what() + ": rank " + source
                        + " sent more than the " + bytes + " bytes expected (the ranks passed different counts)");
            }
            if (r.error != 0) {
                throw new CommFailure(r.error, what() + ": " + r.errorText);
            }
            if (r.bytes != bytes) {
                throw new CommFailure(MpiErrors.ERR_COUNT, what() + ": rank " + source + " sent " + r.bytes
                        + " bytes, " + bytes + " expected (the ranks passed different counts)");
            }
        }

        void checkOwn(int sendBytes, int recvBytes) {
            if (sendBytes != recvBytes) {
                throw new CommFailure(MpiErrors.ERR_COUNT, what() + ": " + sendBytes + " bytes sent to itself, "
                        + recvBytes + " bytes of room for them");
            }
        }

        private String what() {
            return "rank " + c.rank() + ": " + describe(call, op, root) + " on " + c;
        }

        private static String describe(Call call, Combiner op, int root) {
            boolean rooted = call == Call.BCAST || call == Call.REDUCE || call == Call.GATHER || call == Call.GATHERV
                    || call == Call.SCATTER || call == Call.SCATTERV;
            return call.text + (op != null ? " with MPI." + op : "") + (rooted ? " (root " + root + ")" : "");
        }

        private static String call(int tag) {
            int callCode = (tag >>> 20) - 1;
            int opCode = ((tag >>> 16) & 0xf) - 1;
            if (callCode < 0 || callCode >= Call.values().length) {
                return "a message with tag " + tag;
            }
            return describe(Call.values()[callCode], opCode >= 0 && opCode < Reduction.values().length
                    ? Reduction.values()[opCode] : null, tag & 0xffff);
        }
    }
}
