package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The non-blocking collectives on a world of five ranks (not a power of two, so the trees and
 * the recursive doubling take their uneven paths), each result checked against the same
 * computation done here in sequence: reductions, data movement with uneven counts and
 * displacements, the in-place forms, several collectives outstanding at once, a barrier that
 * waits for its last rank, and progress: a collective completes while its ranks only call
 * {@code test()} between their own work, and while a rank is inside another, blocking call.
 */
class NonBlockingCollectivesTest {

    static final int SIZE = 5;
    /** The ceiling of a loop of {@code test()} calls: only catches a hang. */
    static final long CEILING_NANOS = 60_000_000_000L;

    /** Rank r's element i. */
    static int f(int r, int i) {
        return (r + 1) * 100 + i * (r % 3 + 1) - 50;
    }

    static int[] ints(IntBuffer b) {
        int[] a = new int[b.capacity()];
        for (int i = 0; i < a.length; i++) {
            a[i] = b.get(i);
        }
        return a;
    }

    static IntBuffer filled(int length, int value) {
        IntBuffer b = IntBuffer.allocate(length);
        for (int i = 0; i < length; i++) {
            b.put(i, value);
        }
        return b;
    }

    static IntBuffer ofRank(int r, int count) {
        IntBuffer b = IntBuffer.allocate(count);
        for (int i = 0; i < count; i++) {
            b.put(i, f(r, i));
        }
        return b;
    }

    /** Counts of an uneven layout, and displacements placing rank n-1 first and a gap of one after each. */
    static int[][] uneven(int n, java.util.function.IntUnaryOperator count) {
        int[] counts = new int[n];
        int[] displs = new int[n];
        for (int r = 0; r < n; r++) {
            counts[r] = count.applyAsInt(r);
        }
        for (int r = n - 2; r >= 0; r--) {
            displs[r] = displs[r + 1] + counts[r + 1] + 1;
        }
        return new int[][] {counts, displs, {displs[0] + counts[0] + 1}};
    }

    static final class Programs {

        static Object reductions(Intracomm world) throws MPIException {
            int r = world.getRank();
            int n = world.getSize();
            List<Object> out = new ArrayList<>();
            IntBuffer sum = IntBuffer.allocate(4);
            Request q = world.iAllReduce(ofRank(r, 4), sum, 4, MPI.INT, MPI.SUM);
            q.waitFor();
            out.add(ints(sum));
            DoubleBuffer max = ByteBuffer.allocateDirect(24).order(ByteOrder.nativeOrder()).asDoubleBuffer();
            for (int i = 0; i < 3; i++) {
                max.put(i, r * 1.5 - i * r);
            }
            world.iAllReduce(max, 3, MPI.DOUBLE, MPI.MAX).waitFor();
            out.add(new double[] {max.get(0), max.get(1), max.get(2)});
            IntBuffer atRoot = filled(3, -1);
            world.iReduce(ofRank(r, 3), atRoot, 3, MPI.INT, MPI.SUM, 3).waitFor();
            out.add(ints(atRoot));
            IntBuffer inPlace = ofRank(r, 2);
            world.iReduce(inPlace, 2, MPI.INT, MPI.MIN, 1).waitFor();
            out.add(ints(inPlace));
            IntBuffer scan = IntBuffer.allocate(3);
            world.iScan(ofRank(r, 3), scan, 3, MPI.INT, MPI.SUM).waitFor();
            out.add(ints(scan));
            IntBuffer exScan = filled(3, -9);
            world.iExScan(ofRank(r, 3), exScan, 3, MPI.INT, MPI.SUM).waitFor();
            out.add(ints(exScan));
            IntBuffer scanInPlace = ofRank(r, 2);
            world.iScan(scanInPlace, 2, MPI.INT, MPI.MAX).waitFor();
            out.add(ints(scanInPlace));
            int[][] layout = uneven(n, i -> i % 3 + 1);
            int total = Arrays.stream(layout[0]).sum();
            IntBuffer part = filled(layout[0][r], -1);
            world.iReduceScatter(ofRank(r, total), part, layout[0], MPI.INT, MPI.SUM).waitFor();
            out.add(ints(part));
            IntBuffer block = ofRank(r, 2 * n);
            world.iReduceScatterBlock(block, 2, MPI.INT, MPI.SUM).waitFor();
            out.add(Arrays.copyOf(ints(block), 2));
            return out;
        }

        static Object movement(Intracomm world) throws MPIException {
            int r = world.getRank();
            int n = world.getSize();
            List<Object> out = new ArrayList<>();
            IntBuffer bcast = r == 2 ? ofRank(2, 5) : filled(5, -1);
            world.iBcast(bcast, 5, MPI.INT, 2).waitFor();
            out.add(ints(bcast));
            IntBuffer gathered = filled(2 * n, -1);
            world.iGather(ofRank(r, 2), 2, MPI.INT, gathered, 2, MPI.INT, 4).waitFor();
            out.add(ints(gathered));
            IntBuffer gatherInPlace = r == 0 ? filled(2 * n, -1) : ofRank(r, 2);
            if (r == 0) {
                gatherInPlace.put(0, f(0, 0)).put(1, f(0, 1));
            }
            world.iGather(gatherInPlace, 2, MPI.INT, 0).waitFor();
            out.add(ints(gatherInPlace));
            int[][] g = uneven(n, i -> i + 1);
            IntBuffer gv = filled(g[2][0], -1);
            world.iGatherv(ofRank(r, r + 1), r + 1, MPI.INT, gv, g[0], g[1], MPI.INT, 1).waitFor();
            out.add(ints(gv));
            IntBuffer gvInPlace = r == 3 ? filled(g[2][0], -1) : ofRank(r, r + 1);
            if (r == 3) {
                for (int i = 0; i <= 3; i++) {
                    gvInPlace.put(g[1][3] + i, f(3, i));
                }
                world.iGatherv(gvInPlace, g[0], g[1], MPI.INT, 3).waitFor();
            } else {
                world.iGatherv(gvInPlace, r + 1, MPI.INT, 3).waitFor();
            }
            out.add(ints(gvInPlace));
            IntBuffer scattered = filled(2, -1);
            world.iScatter(r == 1 ? ofRank(1, 2 * n) : null, 2, MPI.INT, scattered, 2, MPI.INT, 1).waitFor();
            out.add(ints(scattered));
            int[][] s = uneven(n, i -> (i * 2) % 3 + 1);
            IntBuffer sv = filled(s[0][r], -1);
            if (r == 2) {
                world.iScatterv(ofRank(2, s[2][0]), s[0], s[1], MPI.INT, sv, s[0][r], MPI.INT, 2).waitFor();
            } else {
                world.iScatterv(sv, s[0][r], MPI.INT, 2).waitFor();
            }
            out.add(ints(sv));
            IntBuffer all = filled(3 * n, -1);
            for (int i = 0; i < 3; i++) {
                all.put(3 * r + i, f(r, i));
            }
            world.iAllGather(all, 3, MPI.INT).waitFor();
            out.add(ints(all));
            IntBuffer allv = filled(g[2][0], -1);
            world.iAllGatherv(ofRank(r, r + 1), r + 1, MPI.INT, allv, g[0], g[1], MPI.INT).waitFor();
            out.add(ints(allv));
            IntBuffer a2a = filled(2 * n, -1);
            IntBuffer mine = IntBuffer.allocate(2 * n);
            for (int q = 0; q < n; q++) {
                mine.put(2 * q, 1000 * r + 10 * q).put(2 * q + 1, 1000 * r + 10 * q + 1);
            }
            world.iAllToAll(mine, 2, MPI.INT, a2a, 2, MPI.INT).waitFor();
            out.add(ints(a2a));
            out.add(ints(allToAllv(world, r, n)));
            return out;
        }

        /** Rank r sends (r + q) % 3 elements to rank q; rank q places them in reverse order of the senders. */
        static IntBuffer allToAllv(Intracomm world, int r, int n) throws MPIException {
            int[] sc = new int[n];
            int[] sd = new int[n];
            int at = 0;
            for (int q = 0; q < n; q++) {
                sc[q] = (r + q) % 3;
                sd[q] = at;
                at += sc[q];
            }
            IntBuffer send = IntBuffer.allocate(at);
            for (int q = 0; q < n; q++) {
                for (int k = 0; k < sc[q]; k++) {
                    send.put(sd[q] + k, 1000 * r + 10 * q + k);
                }
            }
            int[][] in = uneven(n, p -> (p + r) % 3);
            IntBuffer recv = filled(in[2][0], -1);
            world.iAllToAllv(send, sc, sd, MPI.INT, recv, in[0], in[1], MPI.INT).waitFor();
            return recv;
        }

        /** An allReduce, an allGather and a bcast outstanding at once, completed in another order, a blocking allReduce between. */
        static Object outstanding(Intracomm world) throws MPIException {
            int r = world.getRank();
            int n = world.getSize();
            IntBuffer sum = IntBuffer.allocate(2);
            IntBuffer all = IntBuffer.allocate(n);
            IntBuffer bcast = r == 0 ? ofRank(0, 3) : filled(3, -1);
            Request[] requests = {world.iAllReduce(ofRank(r, 2), sum, 2, MPI.INT, MPI.SUM),
                world.iAllGather(IntBuffer.wrap(new int[] {r * r}), 1, MPI.INT, all, 1, MPI.INT),
                world.iBcast(bcast, 3, MPI.INT, 0)};
            int[] blocking = new int[1];
            world.allReduce(new int[] {r + 1}, blocking, 1, MPI.INT, MPI.PROD);
            requests[2].waitFor();
            int first = Request.waitAny(new Request[] {null, requests[1]});
            Request.waitAll(requests);
            return List.of(ints(sum), ints(all), ints(bcast), blocking[0], first);
        }

        /** The last rank starts the barrier only after rank 0 saw it incomplete. */
        static Object barrier(Intracomm world) throws MPIException {
            int r = world.getRank();
            int last = world.getSize() - 1;
            if (r == last) {
                world.recv(new int[1], 1, MPI.INT, 0, 5);
                world.iBarrier().waitFor();
                return true;
            }
            Request b = world.iBarrier();
            boolean before = b.test();
            if (r == 0) {
                world.send(new int[] {1}, 1, MPI.INT, last, 5);
            }
            b.waitFor();
            // only rank 0's test is sure to come before the last rank starts
            return r == 0 ? before : true;
        }

        /**
         * Overlap: every rank but the last starts an allReduce, then only works and calls
         * {@code test()}; the last starts it once rank 0 has seen it pending and sent word.
         */
        static Object overlap(Intracomm world) throws MPIException {
            int r = world.getRank();
            int last = world.getSize() - 1;
            DoubleBuffer sum = DoubleBuffer.allocate(2);
            DoubleBuffer mine = DoubleBuffer.wrap(new double[] {r, r * 0.5});
            boolean pendingAtFirst = false;
            if (r == last) {
                world.recv(new int[1], 1, MPI.INT, 0, 9);
            }
            Request q = world.iAllReduce(mine, sum, 2, MPI.DOUBLE, MPI.SUM);
            if (r == 0) {
                pendingAtFirst = !q.test();
                world.send(new int[] {1}, 1, MPI.INT, last, 9);
            }
            long start = System.nanoTime();
            long tests = 0;
            double work = 0;
            boolean done = false;
            while (!done) {
                for (int i = 0; i < 1000; i++) {
                    work += Math.sqrt(i + tests);
                }
                done = q.test();
                tests++;
                if (!done && System.nanoTime() - start > CEILING_NANOS) {
                    throw new AssertionError("rank " + r + ": iAllReduce not complete after " + tests + " tests");
                }
            }
            return List.of(sum.get(0), sum.get(1), pendingAtFirst, q.isNull(), work > 0);
        }

        /**
         * Progress inside a blocking call: rank 2 forwards the bcast of root 0 to rank 3 (binomial
         * tree), and sits in a blocking receive from rank 3, which sends only after its bcast
         * completed; the root's data reaches rank 2 only while it is inside that receive.
         */
        static Object forwarding(Intracomm world) throws MPIException {
            int r = world.getRank();
            IntBuffer data = r == 0 ? ofRank(0, 4) : filled(4, -1);
            if (r == 0) {
                // the root starts only once rank 2 has started: rank 2 is then sure to forward inside its receive
                world.recv(new int[1], 1, MPI.INT, 2, 2);
            }
            Request b = world.iBcast(data, 4, MPI.INT, 0);
            int[] word = {-1};
            if (r == 2) {
                world.send(new int[] {1}, 1, MPI.INT, 0, 2);
                world.recv(word, 1, MPI.INT, 3, 1);
            } else if (r == 3) {
                b.waitFor();
                world.send(new int[] {data.get(3)}, 1, MPI.INT, 2, 1);
            }
            b.waitFor();
            return List.of(ints(data), word[0]);
        }

        static int classOf(CommunicatorsTest.Programs.Call c) {
            return CommunicatorsTest.Programs.classOf(c);
        }

        /** Bad input on two ranks, under MPI.ERRORS_RETURN. */
        static Object errors(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int r = world.getRank();
            IntBuffer two = IntBuffer.allocate(2);
            List<Integer> out = new ArrayList<>();
            out.add(classOf(() -> world.iBcast(two, 2, MPI.INT, 7)));
            out.add(classOf(() -> world.iAllReduce(IntBuffer.allocate(1), two, 2, MPI.INT, MPI.SUM)));
            out.add(classOf(() -> world.iAllReduce(DoubleBuffer.allocate(2), DoubleBuffer.allocate(2), 2,
                    MPI.DOUBLE, MPI.BAND)));
            out.add(classOf(() -> world.iAllGatherv(two, new int[] {1}, new int[] {0}, MPI.INT)));
            // different counts: the request completes with the error instead of hanging
            out.add(classOf(() -> world.iAllReduce(IntBuffer.allocate(2), two, r == 0 ? 1 : 2, MPI.INT, MPI.SUM)
                    .waitFor()));
            world.barrier();
            return out;
        }

        /** The blocking reduceScatter, reduceScatterBlock and reduceLocal. */
        static Object blockingReductions(Intracomm world) throws MPIException {
            int r = world.getRank();
            int n = world.getSize();
            int[][] layout = uneven(n, i -> i % 3 + 1);
            int total = Arrays.stream(layout[0]).sum();
            int[] part = new int[layout[0][r]];
            world.reduceScatter(ints(ofRank(r, total)), part, layout[0], MPI.INT, MPI.SUM);
            int[] block = new int[2];
            world.reduceScatterBlock(ints(ofRank(r, 2 * n)), block, 2, MPI.INT, MPI.MAX);
            int[] inOut = {r, -r, 7};
            Comm.reduceLocal(new int[] {10, 20, 30}, inOut, 3, MPI.INT, MPI.PROD);
            return List.of(part, block, inOut);
        }
    }

    static int sumOf(int i) {
        int s = 0;
        for (int r = 0; r < SIZE; r++) {
            s += f(r, i);
        }
        return s;
    }

    @Test
    void shouldReduceAsTheSequentialComputation() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "reductions");

        int[][] layout = uneven(SIZE, i -> i % 3 + 1);
        for (int r = 0; r < SIZE; r++) {
            @SuppressWarnings("unchecked")
            List<Object> got = (List<Object>) ranks.get(r);
            String at = "rank " + r;
            assertArrayEquals(new int[] {sumOf(0), sumOf(1), sumOf(2), sumOf(3)}, (int[]) got.get(0), at);
            double[] max = new double[3];
            for (int i = 0; i < 3; i++) {
                max[i] = Double.NEGATIVE_INFINITY;
                for (int q = 0; q < SIZE; q++) {
                    max[i] = Math.max(max[i], q * 1.5 - i * q);
                }
            }
            assertArrayEquals(max, (double[]) got.get(1), at);
            assertArrayEquals(r == 3 ? new int[] {sumOf(0), sumOf(1), sumOf(2)} : new int[] {-1, -1, -1},
                    (int[]) got.get(2), at);
            if (r == 1) {
                int[] min = {Integer.MAX_VALUE, Integer.MAX_VALUE};
                for (int q = 0; q < SIZE; q++) {
                    min[0] = Math.min(min[0], f(q, 0));
                    min[1] = Math.min(min[1], f(q, 1));
                }
                assertArrayEquals(min, (int[]) got.get(3), at);
            }
            int[] scan = new int[3];
            int[] exScan = {-9, -9, -9};
            int[] max2 = {Integer.MIN_VALUE, Integer.MIN_VALUE};
            for (int q = 0; q <= r; q++) {
                for (int i = 0; i < 3; i++) {
                    scan[i] += f(q, i);
                    if (q < r) {
                        exScan[i] = (q == 0 ? 0 : exScan[i]) + f(q, i);
                    }
                }
                max2[0] = Math.max(max2[0], f(q, 0));
                max2[1] = Math.max(max2[1], f(q, 1));
            }
            assertArrayEquals(scan, (int[]) got.get(4), at + " scan");
            assertArrayEquals(exScan, (int[]) got.get(5), at + " exScan");
            assertArrayEquals(max2, (int[]) got.get(6), at + " scan in place");
            int offset = 0;
            for (int q = 0; q < r; q++) {
                offset += layout[0][q];
            }
            int[] part = new int[layout[0][r]];
            for (int k = 0; k < part.length; k++) {
                part[k] = sumOf(offset + k);
            }
            assertArrayEquals(part, (int[]) got.get(7), at + " reduceScatter");
            assertArrayEquals(new int[] {sumOf(2 * r), sumOf(2 * r + 1)}, (int[]) got.get(8),
                    at + " reduceScatterBlock in place");
        }
    }

    @Test
    void shouldMoveDataAsTheSequentialComputation() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "movement");

        int[][] g = uneven(SIZE, i -> i + 1);
        int[] gathered = new int[g[2][0]];
        Arrays.fill(gathered, -1);
        for (int q = 0; q < SIZE; q++) {
            for (int i = 0; i <= q; i++) {
                gathered[g[1][q] + i] = f(q, i);
            }
        }
        int[][] s = uneven(SIZE, i -> (i * 2) % 3 + 1);
        int[] blocks = new int[2 * SIZE];
        int[] blocks3 = new int[3 * SIZE];
        for (int q = 0; q < SIZE; q++) {
            blocks[2 * q] = f(q, 0);
            blocks[2 * q + 1] = f(q, 1);
            for (int i = 0; i < 3; i++) {
                blocks3[3 * q + i] = f(q, i);
            }
        }
        for (int r = 0; r < SIZE; r++) {
            @SuppressWarnings("unchecked")
            List<Object> got = (List<Object>) ranks.get(r);
            String at = "rank " + r;
            assertArrayEquals(ints(ofRank(2, 5)), (int[]) got.get(0), at + " bcast");
            int[] none = new int[2 * SIZE];
            Arrays.fill(none, -1);
            assertArrayEquals(r == 4 ? blocks : none, (int[]) got.get(1), at + " gather");
            assertArrayEquals(r == 0 ? blocks : ints(ofRank(r, 2)), (int[]) got.get(2), at + " gather in place");
            int[] noGv = new int[g[2][0]];
            Arrays.fill(noGv, -1);
            assertArrayEquals(r == 1 ? gathered : noGv, (int[]) got.get(3), at + " gatherv");
            assertArrayEquals(r == 3 ? gathered : ints(ofRank(r, r + 1)), (int[]) got.get(4), at + " gatherv in place");
            assertArrayEquals(new int[] {f(1, 2 * r), f(1, 2 * r + 1)}, (int[]) got.get(5), at + " scatter");
            int[] sv = new int[s[0][r]];
            for (int k = 0; k < sv.length; k++) {
                sv[k] = f(2, s[1][r] + k);
            }
            assertArrayEquals(sv, (int[]) got.get(6), at + " scatterv");
            assertArrayEquals(blocks3, (int[]) got.get(7), at + " allGather in place");
            assertArrayEquals(gathered, (int[]) got.get(8), at + " allGatherv");
            int[] a2a = new int[2 * SIZE];
            for (int q = 0; q < SIZE; q++) {
                a2a[2 * q] = 1000 * q + 10 * r;
                a2a[2 * q + 1] = 1000 * q + 10 * r + 1;
            }
            assertArrayEquals(a2a, (int[]) got.get(9), at + " allToAll");
            int self = r;
            int[][] in = uneven(SIZE, p -> (p + self) % 3);
            int[] a2av = new int[in[2][0]];
            Arrays.fill(a2av, -1);
            for (int q = 0; q < SIZE; q++) {
                for (int k = 0; k < in[0][q]; k++) {
                    a2av[in[1][q] + k] = 1000 * q + 10 * r + k;
                }
            }
            assertArrayEquals(a2av, (int[]) got.get(10), at + " allToAllv");
        }
    }

    @Test
    void shouldCompleteSeveralOutstandingCollectivesOnOneCommunicator() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "outstanding");

        int[] squares = new int[SIZE];
        int product = 1;
        for (int q = 0; q < SIZE; q++) {
            squares[q] = q * q;
            product *= q + 1;
        }
        for (int r = 0; r < SIZE; r++) {
            List<?> got = (List<?>) ranks.get(r);
            String at = "rank " + r;
            assertArrayEquals(new int[] {sumOf(0), sumOf(1)}, (int[]) got.get(0), at);
            assertArrayEquals(squares, (int[]) got.get(1), at);
            assertArrayEquals(ints(ofRank(0, 3)), (int[]) got.get(2), at);
            assertEquals(product, got.get(3), at);
            assertEquals(1, got.get(4), at);
        }
    }

    @Test
    void shouldNotCompleteABarrierBeforeEveryRankStartedIt() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "barrier");

        assertEquals(false, ranks.get(0), "rank 0 tested its barrier before the last rank could start one");
        for (int r = 1; r < SIZE; r++) {
            assertEquals(true, ranks.get(r), "rank " + r);
        }
    }

    @Test
    void shouldCompleteWhileTheRanksOnlyComputeAndTest() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "overlap");

        double sum = 0;
        for (int q = 0; q < SIZE; q++) {
            sum += q;
        }
        for (int r = 0; r < SIZE; r++) {
            List<?> got = (List<?>) ranks.get(r);
            assertEquals(List.of(sum, sum * 0.5, r == 0, true, true), got, "rank " + r);
        }
    }

    @Test
    void shouldMoveACollectiveOnInsideAnotherBlockingCall() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "forwarding");

        for (int r = 0; r < SIZE; r++) {
            List<?> got = (List<?>) ranks.get(r);
            assertArrayEquals(ints(ofRank(0, 4)), (int[]) got.get(0), "rank " + r);
            assertEquals(r == 2 ? f(0, 3) : -1, got.get(1), "rank " + r);
        }
    }

    @Test
    void shouldRefuseBadInputWithOpenMpisErrorClasses() throws Exception {
        List<Object> ranks = World.values(2, Programs.class, "errors");

        assertEquals(List.of(MPI.ERR_ROOT, MPI.ERR_BUFFER, MPI.ERR_OP, MPI.ERR_ARG, MPI.ERR_TRUNCATE), ranks.get(0));
        assertEquals(List.of(MPI.ERR_ROOT, MPI.ERR_BUFFER, MPI.ERR_OP, MPI.ERR_ARG, MPI.ERR_COUNT), ranks.get(1));
    }

    @Test
    void shouldReduceScatterAndReduceLocallyAsTheSequentialComputation() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "blockingReductions");

        int[][] layout = uneven(SIZE, i -> i % 3 + 1);
        int offset = 0;
        for (int r = 0; r < SIZE; r++) {
            List<?> got = (List<?>) ranks.get(r);
            String at = "rank " + r;
            int[] part = new int[layout[0][r]];
            for (int k = 0; k < part.length; k++) {
                part[k] = sumOf(offset + k);
            }
            offset += part.length;
            assertArrayEquals(part, (int[]) got.get(0), at + " reduceScatter");
            int[] max = {Integer.MIN_VALUE, Integer.MIN_VALUE};
            for (int q = 0; q < SIZE; q++) {
                max[0] = Math.max(max[0], f(q, 2 * r));
                max[1] = Math.max(max[1], f(q, 2 * r + 1));
            }
            assertArrayEquals(max, (int[]) got.get(1), at + " reduceScatterBlock");
            assertArrayEquals(new int[] {10 * r, -20 * r, 210}, (int[]) got.get(2), at + " reduceLocal");
        }
        assertTrue(offset > SIZE);
    }
}
