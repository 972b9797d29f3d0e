import java.nio.ByteBuffer;
import java.nio.DoubleBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import mpi.Datatype;
import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Op;
import mpi.Request;
import mpi.Status;

/**
 * Checks the mpi package from a program's side, against sequential computations: a ring, every
 * pair of ranks, non-blocking requests, every collective with every operation on every type it
 * applies to, split and dup, and errors a program can catch. Rank 0 prints
 * {@code mpi checks of N ranks: K ok}; a failed check ends the rank with status 1.
 * <p>
 * With one argument it misbehaves on purpose instead: {@code never} (rank 0 waits for a message
 * nobody sends), {@code mismatch} (rank 0 broadcasts while the others all-reduce), {@code early}
 * (rank 1 sends one message to rank 2, then exits without finalizing; rank 2 waits for a second).
 */
public class MpiChecks {

    static int rank;
    static int size;
    static int checks;

    static void check(boolean ok, String what) {
        checks++;
        if (!ok) {
            throw new AssertionError("rank " + rank + " of " + size + ": " + what);
        }
    }

    public static void main(String[] args) throws Exception {
        String[] own = MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        rank = world.getRank();
        size = world.getSize();
        if (own.length > 0) {
            misbehave(world, own[0]);
            return;
        }
        try {
            ring(world, 1000);
            pairs(world);
            requests(world);
            reductions(world);
            movement(world);
            communicators(world);
            errors(world);
            world.barrier();
        } catch (Throwable t) {
            System.err.println("rank " + rank + ": " + t);
            t.printStackTrace();
            System.exit(1);
        }
        int[] all = {checks};
        world.allReduce(all, 1, MPI.INT, MPI.SUM);
        if (rank == 0) {
            System.out.println("mpi checks of " + size + " ranks: " + all[0] + " ok");
        }
        MPI.Finalize();
    }

    static void ring(Intracomm w, int rounds) throws MPIException {
        int[] token = new int[1];
        for (int i = 0; i < rounds; i++) {
            if (rank == 0) {
                w.send(token, 1, MPI.INT, (rank + 1) % size, 7);
                Status s = w.recv(token, 1, MPI.INT, size - 1, 7);
                check(s.getSource() == size - 1 && s.getTag() == 7 && s.getCount(MPI.INT) == 1, "ring status " + s);
            } else {
                w.recv(token, 1, MPI.INT, rank - 1, 7);
                token[0]++;
                w.send(token, 1, MPI.INT, (rank + 1) % size, 7);
            }
        }
        if (rank == 0) {
            check(token[0] == rounds * (size - 1), "ring token " + token[0]);
        }
    }

    /** Every rank sends to every rank, every receive posted before any send. */
    static void pairs(Intracomm w) throws MPIException {
        IntBuffer[] got = new IntBuffer[size];
        Request[] recvs = new Request[size];
        for (int p = 0; p < size; p++) {
            got[p] = MPI.newIntBuffer(3);
            recvs[p] = w.iRecv(got[p], 3, MPI.INT, p, 100 + p);
        }
        Request[] sends = new Request[size];
        for (int p = 0; p < size; p++) {
            IntBuffer b = MPI.newIntBuffer(3);
            b.put(0, rank).put(1, p).put(2, rank * 1000 + p);
            sends[p] = w.iSend(b, 3, MPI.INT, p, 100 + rank);
        }
        Status[] statuses = Request.waitAllStatus(recvs);
        Request.waitAll(sends);
        for (int p = 0; p < size; p++) {
            check(got[p].get(0) == p && got[p].get(1) == rank && got[p].get(2) == p * 1000 + rank,
                    "pair from " + p);
            check(statuses[p].getSource() == p && statuses[p].getTag() == 100 + p, "pair status " + statuses[p]);
        }
        // sendRecv with both neighbours, doubles
        double[] out = {rank + 0.5};
        double[] in = new double[1];
        w.sendRecv(out, 1, MPI.DOUBLE, (rank + 1) % size, 3, in, 1, MPI.DOUBLE, (rank - 1 + size) % size, 3);
        check(in[0] == (rank - 1 + size) % size + 0.5, "sendRecv got " + in[0]);
    }

    /** ANY_SOURCE, ANY_TAG, probe, waitAny, test, order of one pair's messages. */
    static void requests(Intracomm w) throws MPIException {
        if (rank == 0) {
            int[] one = new int[1];
            int seenOthers = 0;
            for (int i = 0; i < (size - 1) * 20; i++) {
                Status p = w.probe(MPI.ANY_SOURCE, MPI.ANY_TAG);
                Status s = w.recv(one, 1, MPI.INT, p.getSource(), MPI.ANY_TAG);
                check(s.getSource() == p.getSource() && s.getTag() == p.getTag(), "probe then recv");
                seenOthers++;
            }
            check(seenOthers == (size - 1) * 20, "all messages");
            check(w.iProbe(MPI.ANY_SOURCE, MPI.ANY_TAG) == null, "nothing left");
        } else {
            for (int i = 0; i < 20; i++) {
                w.send(new int[] {i}, 1, MPI.INT, 0, i);
            }
        }
        w.barrier();
        // non-overtaking: ANY_TAG receives of one source come in send order
        if (size > 1) {
            if (rank == 1) {
                for (int i = 0; i < 50; i++) {
                    w.send(new long[] {i}, 1, MPI.LONG, 0, i % 3);
                }
            } else if (rank == 0) {
                long[] v = new long[1];
                for (int i = 0; i < 50; i++) {
                    Status s = w.recv(v, 1, MPI.LONG, 1, MPI.ANY_TAG);
                    check(v[0] == i && s.getTag() == i % 3, "order " + v[0] + " at " + i);
                }
            }
        }
        // waitAny over receives from every other rank
        if (size > 1) {
            Request[] r = new Request[size];
            DoubleBuffer[] b = new DoubleBuffer[size];
            for (int p = 0; p < size; p++) {
                if (p != rank) {
                    b[p] = MPI.newDoubleBuffer(1);
                    r[p] = w.iRecv(b[p], 1, MPI.DOUBLE, p, 55);
                }
            }
            for (int p = 0; p < size; p++) {
                if (p != rank) {
                    w.send(new double[] {rank * 2.0}, 1, MPI.DOUBLE, p, 55);
                }
            }
            int done = 0;
            while (done < size - 1) {
                int i = Request.waitAny(r);
                check(i != MPI.UNDEFINED && b[i].get(0) == i * 2.0, "waitAny " + i);
                done++;
            }
            check(Request.waitAny(r) == MPI.UNDEFINED, "every request done");
        }
        w.barrier();
    }

    // ---- reductions against the sequential result ----

    static final Datatype[] NUMERIC = {MPI.BYTE, MPI.CHAR, MPI.SHORT, MPI.INT, MPI.LONG, MPI.FLOAT, MPI.DOUBLE};
    static final Datatype[] LOGICAL = {MPI.BYTE, MPI.CHAR, MPI.SHORT, MPI.INT, MPI.LONG, MPI.BOOLEAN};
    static final Datatype[] BITWISE = {MPI.BYTE, MPI.CHAR, MPI.SHORT, MPI.INT, MPI.LONG};
    static final Datatype[] PAIRS = {MPI.INT2, MPI.SHORT_INT, MPI.LONG_INT, MPI.FLOAT_INT, MPI.DOUBLE_INT};
    static final int N = 3;

    static double value(Datatype t, int r, int i) {
        if (t == MPI.BOOLEAN) {
            return (r + i) % 3 == 0 ? 1 : 0;
        }
        if (t == MPI.CHAR) {
            return (r * 7919 + i * 31 + 60000) % 65536;
        }
        if (t == MPI.FLOAT || t == MPI.DOUBLE) {
            return (((r * 37 + i * 11) % 5) - 2) * 0.5;
        }
        if (isPair(t)) {
            return (r * 13 + i * 7) % 5 - 2;
        }
        return ((r * 37 + i * 11) % 23) - 11;
    }

    static boolean isPair(Datatype t) {
        return Arrays.asList(PAIRS).contains(t);
    }

    static int extent(Datatype t) {
        return t == MPI.LONG_INT || t == MPI.DOUBLE_INT ? 16 : 8;
    }

    /** Rank r's contribution: a Java array of the type, pairs as int[] (INT2) or a C-layout ByteBuffer. */
    static Object contribution(Datatype t, int r) {
        Object a = newBuffer(t);
        for (int i = 0; i < N; i++) {
            set(a, t, i, (long) value(t, r, i), value(t, r, i), r);
        }
        return a;
    }

    static Object newBuffer(Datatype t) {
        if (t == MPI.BYTE) return new byte[N];
        if (t == MPI.CHAR) return new char[N];
        if (t == MPI.SHORT) return new short[N];
        if (t == MPI.BOOLEAN) return new boolean[N];
        if (t == MPI.INT) return new int[N];
        if (t == MPI.LONG) return new long[N];
        if (t == MPI.FLOAT) return new float[N];
        if (t == MPI.DOUBLE) return new double[N];
        if (t == MPI.INT2) return new int[2 * N];
        return MPI.newByteBuffer(extent(t) * N);
    }

    static void set(Object a, Datatype t, int i, long l, double d, int index) {
        if (a instanceof byte[] x) x[i] = (byte) l;
        else if (a instanceof char[] x) x[i] = (char) l;
        else if (a instanceof short[] x) x[i] = (short) l;
        else if (a instanceof boolean[] x) x[i] = l != 0;
        else if (a instanceof long[] x) x[i] = l;
        else if (a instanceof float[] x) x[i] = (float) d;
        else if (a instanceof double[] x) x[i] = d;
        else if (a instanceof int[] x && t == MPI.INT2) { x[2 * i] = (int) l; x[2 * i + 1] = index; }
        else if (a instanceof int[] x) x[i] = (int) l;
        else {
            ByteBuffer b = (ByteBuffer) a;
            int at = i * extent(t);
            if (t == MPI.SHORT_INT) b.putShort(at, (short) l).putInt(at + 4, index);
            else if (t == MPI.LONG_INT) b.putLong(at, l).putInt(at + 8, index);
            else if (t == MPI.FLOAT_INT) b.putFloat(at, (float) d).putInt(at + 4, index);
            else b.putDouble(at, d).putInt(at + 8, index);
        }
    }

    /** @return element i as text, to compare whole buffers */
    static String text(Object a, Datatype t) {
        if (a instanceof ByteBuffer b) {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < N; i++) {
                int at = i * extent(t);
                if (t == MPI.SHORT_INT) s.append(b.getShort(at)).append('@').append(b.getInt(at + 4));
                else if (t == MPI.LONG_INT) s.append(b.getLong(at)).append('@').append(b.getInt(at + 8));
                else if (t == MPI.FLOAT_INT) s.append(b.getFloat(at)).append('@').append(b.getInt(at + 4));
                else s.append(b.getDouble(at)).append('@').append(b.getInt(at + 8));
                s.append(' ');
            }
            return s.toString();
        }
        if (a instanceof byte[] x) return Arrays.toString(x);
        if (a instanceof char[] x) { int[] v = new int[x.length]; for (int i = 0; i < x.length; i++) v[i] = x[i]; return Arrays.toString(v); }
        if (a instanceof short[] x) return Arrays.toString(x);
        if (a instanceof boolean[] x) return Arrays.toString(x);
        if (a instanceof int[] x) return Arrays.toString(x);
        if (a instanceof long[] x) return Arrays.toString(x);
        if (a instanceof float[] x) return Arrays.toString(x);
        return Arrays.toString((double[]) a);
    }

    /** The sequential combination of ranks from..to-1. */
    static Object expected(Op op, Datatype t, int from, int to) {
        Object a = newBuffer(t);
        boolean floating = t == MPI.FLOAT || t == MPI.DOUBLE || isPair(t);
        for (int i = 0; i < N; i++) {
            double d = value(t, from, i);
            long l = (long) d;
            int index = from;
            for (int r = from + 1; r < to; r++) {
                double v = value(t, r, i);
                long x = (long) v;
                if (op == MPI.SUM) { d += v; l += x; }
                else if (op == MPI.PROD) { d *= v; l *= x; }
                else if (op == MPI.MAX) { d = Math.max(d, v); l = Math.max(l, x); }
                else if (op == MPI.MIN) { d = Math.min(d, v); l = Math.min(l, x); }
                else if (op == MPI.LAND) l = l != 0 && x != 0 ? 1 : 0;
                else if (op == MPI.LOR) l = l != 0 || x != 0 ? 1 : 0;
                else if (op == MPI.LXOR) l = (l != 0) != (x != 0) ? 1 : 0;
                else if (op == MPI.BAND) l &= x;
                else if (op == MPI.BOR) l |= x;
                else if (op == MPI.BXOR) l ^= x;
                else if (op == MPI.MINLOC) { if (v < d) { d = v; index = r; } }
                else if (op == MPI.MAXLOC) { if (v > d) { d = v; index = r; } }
            }
            set(a, t, i, floating ? (long) d : l, floating ? d : l, index);
        }
        return a;
    }

    static void reductions(Intracomm w) throws MPIException {
        List<Object[]> cases = new ArrayList<>();
        for (Op op : new Op[] {MPI.SUM, MPI.PROD, MPI.MAX, MPI.MIN}) {
            for (Datatype t : NUMERIC) cases.add(new Object[] {op, t});
        }
        for (Op op : new Op[] {MPI.LAND, MPI.LOR, MPI.LXOR}) {
            for (Datatype t : LOGICAL) cases.add(new Object[] {op, t});
        }
        for (Op op : new Op[] {MPI.BAND, MPI.BOR, MPI.BXOR}) {
            for (Datatype t : BITWISE) cases.add(new Object[] {op, t});
        }
        for (Op op : new Op[] {MPI.MINLOC, MPI.MAXLOC}) {
            for (Datatype t : PAIRS) cases.add(new Object[] {op, t});
        }
        check(cases.size() == 71, "cases " + cases.size());
        for (Object[] c : cases) {
            Op op = (Op) c[0];
            Datatype t = (Datatype) c[1];
            String what = op + " on " + t;
            Object mine = contribution(t, rank);
            Object all = newBuffer(t);
            w.allReduce(mine, all, N, t, op);
            check(text(all, t).equals(text(expected(op, t, 0, size), t)), "allReduce " + what + ": " + text(all, t));
            Object inPlace = contribution(t, rank);
            w.allReduce(inPlace, N, t, op);
            check(text(inPlace, t).equals(text(all, t)), "allReduce in place " + what);
            Object atRoot = newBuffer(t);
            w.reduce(mine, atRoot, N, t, op, size - 1);
            if (rank == size - 1) {
                check(text(atRoot, t).equals(text(all, t)), "reduce " + what);
            }
            Object prefix = newBuffer(t);
            w.scan(mine, prefix, N, t, op);
            check(text(prefix, t).equals(text(expected(op, t, 0, rank + 1), t)), "scan " + what);
            Object before = newBuffer(t);
            w.exScan(mine, before, N, t, op);
            if (rank > 0) {
                check(text(before, t).equals(text(expected(op, t, 0, rank), t)), "exScan " + what);
            }
        }
        // reduceScatterBlock: rank r gets element r of the sum of every rank's size elements
        int[] many = new int[size];
        for (int i = 0; i < size; i++) {
            many[i] = rank * 10 + i;
        }
        int[] mineOfSum = new int[1];
        w.reduceScatterBlock(many, mineOfSum, 1, MPI.INT, MPI.SUM);
        check(mineOfSum[0] == 10 * size * (size - 1) / 2 + size * rank, "reduceScatterBlock " + mineOfSum[0]);
    }

    static int cell(int r, int d, int i) {
        return r * 1_000_000 + d * 1000 + i;
    }

    static void movement(Intracomm w) throws MPIException {
        int b = 4;
        for (int root : new int[] {0, size - 1, size / 2}) {
            // bcast of every basic type
            for (Datatype t : NUMERIC) {
                Object data = rank == root ? contribution(t, root) : newBuffer(t);
                w.bcast(data, N, t, root);
                check(text(data, t).equals(text(contribution(t, root), t)), "bcast " + t + " root " + root);
            }
            boolean[] flags = rank == root ? new boolean[] {true, false, true} : new boolean[3];
            w.bcast(flags, 3, MPI.BOOLEAN, root);
            check(flags[0] && !flags[1] && flags[2], "bcast boolean");
            // gather and scatter, int arrays
            int[] mine = new int[b];
            for (int i = 0; i < b; i++) {
                mine[i] = cell(rank, root, i);
            }
            int[] all = new int[b * size];
            w.gather(mine, b, MPI.INT, all, b, MPI.INT, root);
            if (rank == root) {
                for (int q = 0; q < size; q++) {
                    for (int i = 0; i < b; i++) {
                        check(all[q * b + i] == cell(q, root, i), "gather from " + q);
                    }
                }
            }
            int[] part = new int[b];
            w.scatter(all, b, MPI.INT, part, b, MPI.INT, root);
            check(Arrays.equals(part, mine), "scatter back " + Arrays.toString(part));
            // gatherv and scatterv, double buffers: rank q has q + 1 elements, backwards, gaps between
            int[] counts = new int[size];
            int[] displs = new int[size];
            int at = 0;
            for (int q = size - 1; q >= 0; q--) {
                counts[q] = q + 1;
                displs[q] = at;
                at += counts[q] + 1;
            }
            DoubleBuffer ragged = MPI.newDoubleBuffer(rank + 1);
            for (int i = 0; i <= rank; i++) {
                ragged.put(i, cell(rank, 9, i) + 0.25);
            }
            DoubleBuffer v = MPI.newDoubleBuffer(at);
            for (int i = 0; i < at; i++) {
                v.put(i, -1);
            }
            w.gatherv(ragged, rank + 1, MPI.DOUBLE, v, counts, displs, MPI.DOUBLE, root);
            if (rank == root) {
                for (int q = 0; q < size; q++) {
                    for (int i = 0; i <= q; i++) {
                        check(v.get(displs[q] + i) == cell(q, 9, i) + 0.25, "gatherv from " + q);
                    }
                    check(displs[q] == 0 || v.get(displs[q] - 1) == -1, "gatherv kept the gap before " + q);
                }
            }
            DoubleBuffer back = MPI.newDoubleBuffer(rank + 1);
            w.scatterv(v, counts, displs, MPI.DOUBLE, back, rank + 1, MPI.DOUBLE, root);
            for (int i = 0; i <= rank; i++) {
                check(back.get(i) == cell(rank, 9, i) + 0.25, "scatterv to " + rank);
            }
        }
        // allGather, in place too
        int[] everyone = new int[2 * size];
        w.allGather(new int[] {rank, -rank}, 2, MPI.INT, everyone, 2, MPI.INT);
        int[] inPlace = new int[2 * size];
        inPlace[2 * rank] = rank;
        inPlace[2 * rank + 1] = -rank;
        w.allGather(inPlace, 2, MPI.INT);
        for (int q = 0; q < size; q++) {
            check(everyone[2 * q] == q && everyone[2 * q + 1] == -q, "allGather of " + q);
        }
        check(Arrays.equals(everyone, inPlace), "allGather in place");
        // allGatherv: rank q gives q % 3 + 1 longs
        int[] counts = new int[size];
        int[] displs = new int[size];
        int total = 0;
        for (int q = 0; q < size; q++) {
            counts[q] = q % 3 + 1;
            displs[q] = total;
            total += counts[q];
        }
        long[] mine = new long[rank % 3 + 1];
        Arrays.fill(mine, 1000L * rank);
        long[] gathered = new long[total];
        w.allGatherv(mine, mine.length, MPI.LONG, gathered, counts, displs, MPI.LONG);
        for (int q = 0; q < size; q++) {
            for (int i = 0; i < counts[q]; i++) {
                check(gathered[displs[q] + i] == 1000L * q, "allGatherv of " + q);
            }
        }
        // allToAll and allToAllv
        int[] out = new int[2 * size];
        for (int d = 0; d < size; d++) {
            out[2 * d] = cell(rank, d, 0);
            out[2 * d + 1] = cell(rank, d, 1);
        }
        int[] in = new int[2 * size];
        w.allToAll(out, 2, MPI.INT, in, 2, MPI.INT);
        for (int q = 0; q < size; q++) {
            check(in[2 * q] == cell(q, rank, 0) && in[2 * q + 1] == cell(q, rank, 1), "allToAll from " + q);
        }
        int[] sc = new int[size];
        int[] sd = new int[size];
        int[] rc = new int[size];
        int[] rd = new int[size];
        int sTotal = 0;
        int rTotal = 0;
        for (int q = 0; q < size; q++) {
            sc[q] = q + 1;
            sd[q] = sTotal;
            sTotal += sc[q];
            rc[q] = rank + 1;
            rd[q] = rTotal;
            rTotal += rc[q];
        }
        short[] vs = new short[sTotal];
        for (int d = 0; d < size; d++) {
            for (int i = 0; i <= d; i++) {
                vs[sd[d] + i] = (short) (rank * 100 + d);
            }
        }
        short[] vr = new short[rTotal];
        w.allToAllv(vs, sc, sd, MPI.SHORT, vr, rc, rd, MPI.SHORT);
        for (int q = 0; q < size; q++) {
            for (int i = 0; i <= rank; i++) {
                check(vr[rd[q] + i] == q * 100 + rank, "allToAllv from " + q);
            }
        }
    }

    static void communicators(Intracomm w) throws MPIException {
        Intracomm half = w.split(rank % 2, -rank);
        int[] members = new int[half.getSize()];
        half.allGather(new int[] {rank}, 1, MPI.INT, members, 1, MPI.INT);
        for (int i = 1; i < members.length; i++) {
            check(members[i] < members[i - 1] && members[i] % 2 == rank % 2, "split order " + Arrays.toString(members));
        }
        int[] sum = new int[1];
        half.allReduce(new int[] {rank}, sum, 1, MPI.INT, MPI.SUM);
        int expected = 0;
        for (int q = rank % 2; q < size; q += 2) {
            expected += q;
        }
        check(sum[0] == expected, "split allReduce " + sum[0]);
        Intracomm copy = w.dup();
        check(copy.getRank() == rank && copy.getSize() == size, "dup");
        // a message on the copy never matches a receive on the world
        if (size > 1) {
            int[] a = new int[1];
            if (rank == 0) {
                IntBuffer b = MPI.newIntBuffer(1);
                Request onWorld = w.iRecv(b, 1, MPI.INT, 1, 0);
                copy.recv(a, 1, MPI.INT, 1, 0);
                check(a[0] == 11, "dup message " + a[0]);
                onWorld.waitFor();
                check(b.get(0) == 22, "world message " + b.get(0));
            } else if (rank == 1) {
                copy.send(new int[] {11}, 1, MPI.INT, 0, 0);
                w.send(new int[] {22}, 1, MPI.INT, 0, 0);
            }
        }
        check(w.split(MPI.UNDEFINED, 0).isNull(), "split UNDEFINED gives MPI.COMM_NULL");
        copy.free();
        w.barrier();
    }

    static void errors(Intracomm w) throws MPIException {
        // errors are fatal by default, as in Open MPI: these checks want them back as exceptions
        w.setErrhandler(MPI.ERRORS_RETURN);
        try {
            w.send(new int[1], 1, MPI.INT, size, 0);
            check(false, "a send to rank " + size);
        } catch (MPIException e) {
            check(e.getErrorClass() == MPI.ERR_RANK && e.getMessage().contains("rank " + size + " does not exist"),
                    e.getMessage());
        }
        try {
            w.send(new double[1], 1, MPI.INT, 0, 0);
            check(false, "a double[] as MPI.INT");
        } catch (MPIException e) {
            check(e.getErrorClass() == MPI.ERR_TYPE, e.getMessage());
        }
        try {
            w.allReduce(new double[1], new double[1], 1, MPI.DOUBLE, MPI.BAND);
            check(false, "BAND on doubles");
        } catch (MPIException e) {
            check(e.getErrorClass() == MPI.ERR_OP, e.getMessage());
        }
        if (size > 1) {
            if (rank == 1) {
                w.send(new int[] {1, 2, 3, 4}, 4, MPI.INT, 0, 9);
            } else if (rank == 0) {
                int[] two = new int[2];
                try {
                    w.recv(two, 2, MPI.INT, 1, 9);
                    check(false, "a receive of 4 ints into 2");
                } catch (MPIException e) {
                    check(e.getErrorClass() == MPI.ERR_TRUNCATE && e.getMessage().contains("16 bytes"), e.getMessage());
                }
            }
        }
        w.barrier();
        w.setErrhandler(MPI.ERRORS_ARE_FATAL);
    }

    static void misbehave(Intracomm w, String how) throws MPIException {
        switch (how) {
            case "never" -> {
                if (rank == 0) {
                    w.recv(new int[1], 1, MPI.INT, 1, 99);
                }
            }
            case "mismatch" -> {
                int[] d = new int[2];
                if (rank == 0) {
                    w.bcast(d, 2, MPI.INT, 0);
                } else {
                    w.allReduce(d, new int[2], 2, MPI.INT, MPI.SUM);
                }
            }
            case "early" -> {
                if (rank == 1) {
                    w.send(new int[] {5}, 1, MPI.INT, 2, 1);
                    System.out.flush();
                    Runtime.getRuntime().halt(0);
                } else if (rank == 2) {
                    int[] got = new int[1];
                    w.recv(got, 1, MPI.INT, 1, 1);
                    System.out.println("rank 2 got " + got[0] + " from rank 1");
                    w.recv(got, 1, MPI.INT, 1, 1);
                }
            }
            default -> throw new IllegalArgumentException(how);
        }
        MPI.Finalize();
    }
}
