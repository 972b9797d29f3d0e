package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The neighbourhood collectives on a world of four ranks, blocking and non-blocking, each result
 * checked against the same exchange computed here from the topology alone: 2x2 grids periodic
 * (both neighbours along a dimension are one rank), not periodic ({@code MPI.PROC_NULL}
 * neighbours, whose blocks stay as they were) and mixed; a ring, a star and a graph with
 * repeated edges; a distributed graph with edges in and out that differ and a
 * {@code MPI.PROC_NULL}. The non-blocking forms complete while the ranks only call {@code test()};
 * and bad input fails with Open MPI's error classes.
 */
class NeighborCollectivesTest {

    static final int SIZE = 4;
    /** The ceiling of a loop of {@code test()} calls: only catches a hang. */
    static final long CEILING_NANOS = 60_000_000_000L;
    static final boolean[][] GRIDS = {{true, true}, {false, false}, {true, false}};
    static final int[][] MULTI = {{1, 1, 2}, {0, 0}, {0, 3}, {2}};

    /** Rank r's element k of an all-gather. */
    static int g(int r, int k) {
        return 100 * (r + 1) + k;
    }

    /** Rank r's element k of its block i of an all-to-all. */
    static int f(int r, int i, int k) {
        return 1000 * (r + 1) + 10 * i + k;
    }

    /** Elements rank s sends rank d in an all-to-allv. */
    static int pairCount(int s, int d) {
        return Math.floorMod(s + d, 3);
    }

    /** Elements rank s sends in an all-gatherv. */
    static int gathervCount(int s) {
        return Math.floorMod(s, 2) + 1;
    }

    /** @return displacements placing the last block first, a gap of one after each, and the length */
    static int[][] reversed(int[] counts) {
        int[] displs = new int[counts.length];
        int end = 0;
        for (int j = counts.length - 1; j >= 0; j--) {
            displs[j] = end;
            end += counts[j] + 1;
        }
        return new int[][] {displs, {end}};
    }

    static int[] filled(int length) {
        int[] a = new int[length];
        java.util.Arrays.fill(a, -1);
        return a;
    }

    static final class Programs {

        static int classOf(CommunicatorsTest.Programs.Call c) {
            return CommunicatorsTest.Programs.classOf(c);
        }

        /** @return {sources, destinations} as the topology's own calls give them */
        static int[][] around(Comm comm) throws MPIException {
            if (comm instanceof CartComm cart) {
                int dims = cart.getTopo().getDimCount();
                int[] both = new int[2 * dims];
                for (int d = 0; d < dims; d++) {
                    ShiftParms s = cart.shift(d, 1);
                    both[2 * d] = s.getRankSource();
                    both[2 * d + 1] = s.getRankDest();
                }
                return new int[][] {both, both};
            }
            GraphComm graph = (GraphComm) comm;
            if (graph.getTopology() == MPI.GRAPH) {
                int[] both = graph.getNeighbors(graph.getRank());
                return new int[][] {both, both};
            }
            DistGraphNeighbors n = graph.getDistGraphNeighbors();
            int[][] r = {new int[n.getInDegree()], new int[n.getOutDegree()]};
            for (int i = 0; i < r[0].length; i++) {
                r[0][i] = n.getSource(i);
            }
            for (int i = 0; i < r[1].length; i++) {
                r[1][i] = n.getDestination(i);
            }
            return r;
        }

        /** The four collectives blocking on arrays, then non-blocking on buffers completed by test() alone. */
        static List<int[]> exchanges(Comm comm) throws MPIException {
            int r = comm.getRank();
            int[][] nb = around(comm);
            int[] from = nb[0];
            int[] to = nb[1];
            List<int[]> out = new ArrayList<>();
            int[] mine = {g(r, 0), g(r, 1)};
            int[] blocks = new int[2 * to.length];
            for (int i = 0; i < to.length; i++) {
                blocks[2 * i] = f(r, i, 0);
                blocks[2 * i + 1] = f(r, i, 1);
            }
            int[] gvIn = new int[from.length];
            for (int j = 0; j < from.length; j++) {
                gvIn[j] = gathervCount(from[j]);
            }
            int[][] gvLayout = reversed(gvIn);
            int[] vOut = new int[to.length];
            int[] vOutAt = new int[to.length];
            int total = 0;
            for (int i = 0; i < to.length; i++) {
                vOut[i] = pairCount(r, to[i]);
                vOutAt[i] = total;
                total += vOut[i];
            }
            int[] vSend = new int[total];
            for (int i = 0; i < to.length; i++) {
                for (int k = 0; k < vOut[i]; k++) {
                    vSend[vOutAt[i] + k] = f(r, i, k);
                }
            }
            int[] vIn = new int[from.length];
            for (int j = 0; j < from.length; j++) {
                vIn[j] = pairCount(from[j], r);
            }
            int[][] vLayout = reversed(vIn);

            int[] ag = filled(2 * from.length);
            comm.neighborAllGather(mine, 2, MPI.INT, ag, 2, MPI.INT);
            out.add(ag);
            int[] a2a = filled(2 * from.length);
            comm.neighborAllToAll(blocks, 2, MPI.INT, a2a, 2, MPI.INT);
            out.add(a2a);
            int[] agv = filled(gvLayout[1][0]);
            comm.neighborAllGatherv(mine, gathervCount(r), MPI.INT, agv, gvIn, gvLayout[0], MPI.INT);
            out.add(agv);
            int[] a2av = filled(vLayout[1][0]);
            comm.neighborAllToAllv(vSend, vOut, vOutAt, MPI.INT, a2av, vIn, vLayout[0], MPI.INT);
            out.add(a2av);

            IntBuffer iag = IntBuffer.wrap(filled(2 * from.length));
            IntBuffer ia2a = IntBuffer.wrap(filled(2 * from.length));
            IntBuffer iagv = IntBuffer.wrap(filled(gvLayout[1][0]));
            IntBuffer ia2av = IntBuffer.wrap(filled(vLayout[1][0]));
            Request[] requests = {
                comm.iNeighborAllGather(IntBuffer.wrap(mine.clone()), 2, MPI.INT, iag, 2, MPI.INT),
                comm.iNeighborAllToAll(IntBuffer.wrap(blocks.clone()), 2, MPI.INT, ia2a, 2, MPI.INT),
                comm.iNeighborAllGatherv(IntBuffer.wrap(mine.clone()), gathervCount(r), MPI.INT, iagv, gvIn,
                        gvLayout[0], MPI.INT),
                comm.iNeighborAllToAllv(IntBuffer.wrap(vSend.clone()), vOut, vOutAt, MPI.INT, ia2av, vIn,
                        vLayout[0], MPI.INT)};
            for (Request q : requests) {
                testUntilDone(q, r);
            }
            out.add(iag.array());
            out.add(ia2a.array());
            out.add(iagv.array());
            out.add(ia2av.array());
            return out;
        }

        static void testUntilDone(Request q, int r) throws MPIException {
            long start = System.nanoTime();
            while (!q.test()) {
                if (System.nanoTime() - start > CEILING_NANOS) {
                    throw new AssertionError("rank " + r + ": a neighbourhood collective is not complete");
                }
            }
        }

        /** The three 2x2 grids. */
        static Object grids(Intracomm world) throws MPIException {
            List<Object> r = new ArrayList<>();
            for (boolean[] periods : GRIDS) {
                r.add(exchanges(world.createCart(new int[] {2, 2}, periods, false)));
            }
            return r;
        }

        /** The ring, the star, the graph with repeated edges and the distributed graph. */
        static Object graphs(Intracomm world) throws MPIException {
            int r = world.getRank();
            List<Object> out = new ArrayList<>();
            for (int[][] nb : new int[][][] {GraphCommTest.ring(), GraphCommTest.star(), MULTI}) {
                int[][] ie = GraphCommTest.indexAndEdges(nb);
                out.add(exchanges(world.createGraph(ie[0], ie[1], false)));
            }
            int[][] dist = dist(r);
            out.add(exchanges(world.createDistGraphAdjacent(dist[0], dist[1], MPI.INFO_NULL, false)));
            return out;
        }

        /**
         * Overlap: every rank but the last starts an iNeighborAllToAll on the ring, then only
         * works and calls {@code test()}; the last starts it once rank 0, its neighbour, has
         * seen it pending and sent word.
         */
        static Object overlap(Intracomm world) throws MPIException {
            int r = world.getRank();
            int last = SIZE - 1;
            int[][] ie = GraphCommTest.indexAndEdges(GraphCommTest.ring());
            GraphComm ring = world.createGraph(ie[0], ie[1], false);
            if (r == last) {
                world.recv(new int[1], 1, MPI.INT, 0, 9);
            }
            IntBuffer in = IntBuffer.wrap(filled(2));
            Request q = ring.iNeighborAllToAll(IntBuffer.wrap(new int[] {f(r, 0, 0), f(r, 1, 0)}), 1, MPI.INT, in, 1,
                    MPI.INT);
            boolean pendingAtFirst = false;
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
                    throw new AssertionError("rank " + r + ": iNeighborAllToAll not complete after " + tests
                            + " tests");
                }
            }
            return List.of(in.array(), pendingAtFirst, q.isNull(), work > 0);
        }

        /** Bad input under MPI.ERRORS_RETURN, then different counts on the ring. */
        static Object bad(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            CartComm grid = world.createCart(new int[] {2, 2}, new boolean[] {false, true}, false);
            int[][] ie = GraphCommTest.indexAndEdges(GraphCommTest.ring());
            GraphComm ring = world.createGraph(ie[0], ie[1], false);
            int[] one = {1};
            List<Integer> out = new ArrayList<>();
            out.add(classOf(() -> world.neighborAllGather(one, 1, MPI.INT, new int[SIZE], 1, MPI.INT)));
            out.add(classOf(() -> world.iNeighborAllToAll(IntBuffer.wrap(one), 1, MPI.INT, IntBuffer.allocate(1), 1,
                    MPI.INT)));
            out.add(classOf(() -> grid.neighborAllGather(one, 1, MPI.INT, new int[3], 1, MPI.INT)));
            out.add(classOf(() -> grid.neighborAllToAll(new int[4], 1, MPI.INT, new int[8], 2, MPI.INT)));
            out.add(classOf(() -> grid.neighborAllGather(one, 1, null, new int[4], 1, MPI.INT)));
            out.add(classOf(() -> grid.neighborAllGatherv(one, 1, MPI.INT, new int[4], new int[2], new int[2],
                    MPI.INT)));
            out.add(classOf(() -> ring.neighborAllToAllv(one, null, null, MPI.INT, new int[2], new int[] {1, 1},
                    new int[] {0, 1}, MPI.INT)));
            // rank 0 sends two elements where its neighbours (1 and 3) make room for one
            int r = world.getRank();
            out.add(classOf(() -> ring.neighborAllGatherv(new int[] {r, r}, r == 0 ? 2 : 1, MPI.INT, new int[2],
                    new int[] {1, 1}, new int[] {0, 1}, MPI.INT)));
            world.barrier();
            return out;
        }
    }

    /** The distributed graph: edges out to r + 1, r + 2 and nobody; in from r - 1, nobody and r - 2. */
    static int[][] dist(int r) {
        return new int[][] {{(r + SIZE - 1) % SIZE, MPI.PROC_NULL, (r + SIZE - 2) % SIZE},
            {(r + 1) % SIZE, (r + 2) % SIZE, MPI.PROC_NULL}};
    }

    /** A grid rank's neighbours: per dimension below and above, MPI.PROC_NULL beyond an edge that does not wrap. */
    static int[] gridNeighbours(int rank, boolean[] periods) {
        int[] c = {rank / 2, rank % 2};
        int[] nb = new int[4];
        for (int d = 0; d < 2; d++) {
            for (int step = -1; step <= 1; step += 2) {
                int[] at = c.clone();
                at[d] += step;
                boolean outside = at[d] < 0 || at[d] > 1;
                nb[2 * d + (step + 1) / 2] = outside && !periods[d] ? MPI.PROC_NULL
                        : Math.floorMod(at[0], 2) * 2 + Math.floorMod(at[1], 2);
            }
        }
        return nb;
    }

    /**
     * Checks one topology's eight results.
     *
     * @param grid  whether block j comes from the block its source sends the other way along the
     *              dimension (j ^ 1); else from the source's k-th edge to this rank for this
     *              rank's k-th edge from it
     */
    private static void check(List<?> got, int[][] from, int[][] to, boolean grid, String what) {
        for (int me = 0; me < SIZE; me++) {
            @SuppressWarnings("unchecked")
            List<int[]> results = (List<int[]>) got.get(me);
            int[] in = from[me];
            int[] ag = filled(2 * in.length);
            int[] a2a = filled(2 * in.length);
            int[] gvCounts = new int[in.length];
            int[] vCounts = new int[in.length];
            for (int j = 0; j < in.length; j++) {
                gvCounts[j] = gathervCount(in[j]);
                vCounts[j] = pairCount(in[j], me);
            }
            int[][] gvLayout = reversed(gvCounts);
            int[][] vLayout = reversed(vCounts);
            int[] agv = filled(gvLayout[1][0]);
            int[] a2av = filled(vLayout[1][0]);
            for (int j = 0; j < in.length; j++) {
                int s = in[j];
                if (s == MPI.PROC_NULL) {
                    continue;
                }
                int i = grid ? j ^ 1 : blockFor(in, j, to[s], me);
                for (int k = 0; k < 2; k++) {
                    ag[2 * j + k] = g(s, k);
                    a2a[2 * j + k] = f(s, i, k);
                }
                for (int k = 0; k < gvCounts[j]; k++) {
                    agv[gvLayout[0][j] + k] = g(s, k);
                }
                for (int k = 0; k < vCounts[j]; k++) {
                    a2av[vLayout[0][j] + k] = f(s, i, k);
                }
            }
            int[][] expected = {ag, a2a, agv, a2av, ag, a2a, agv, a2av};
            String[] names = {"neighborAllGather", "neighborAllToAll", "neighborAllGatherv", "neighborAllToAllv",
                "iNeighborAllGather", "iNeighborAllToAll", "iNeighborAllGatherv", "iNeighborAllToAllv"};
            for (int x = 0; x < expected.length; x++) {
                assertArrayEquals(expected[x], results.get(x), what + ", rank " + me + ": " + names[x]);
            }
        }
    }

    /** @return the block the source's k-th edge to {@code me} carries, for {@code me}'s k-th edge from it (block j) */
    private static int blockFor(int[] in, int j, int[] sourceOut, int me) {
        int k = 0;
        for (int x = 0; x < j; x++) {
            k += in[x] == in[j] ? 1 : 0;
        }
        for (int i = 0; i < sourceOut.length; i++) {
            if (sourceOut[i] == me && k-- == 0) {
                return i;
            }
        }
        throw new AssertionError("rank " + in[j] + " has no edge " + k + " to rank " + me);
    }

    /** @return one topology's results of every rank, as {@link #check} takes them */
    private static List<Object> part(List<Object> ranks, int t) {
        List<Object> part = new ArrayList<>();
        for (Object rank : ranks) {
            part.add(((List<?>) rank).get(t));
        }
        return part;
    }

    @Test
    void shouldExchangeWithTheGridNeighboursInDimensionOrderKeepingProcNullBlocks() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "grids");

        int procNulls = 0;
        for (int t = 0; t < GRIDS.length; t++) {
            int[][] nb = new int[SIZE][];
            for (int r = 0; r < SIZE; r++) {
                nb[r] = gridNeighbours(r, GRIDS[t]);
                for (int n : nb[r]) {
                    procNulls += n == MPI.PROC_NULL ? 1 : 0;
                }
            }
            check(part(ranks, t), nb, nb, true, "grid " + java.util.Arrays.toString(GRIDS[t]));
        }
        assertTrue(procNulls > 0, "the grids that do not wrap have edges");
    }

    @Test
    void shouldExchangeAlongTheEdgesOfGraphsAndDistributedGraphs() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "graphs");

        int[][][] graphs = {GraphCommTest.ring(), GraphCommTest.star(), MULTI};
        String[] names = {"ring", "star", "repeated edges"};
        for (int t = 0; t < graphs.length; t++) {
            check(part(ranks, t), graphs[t], graphs[t], false, names[t]);
        }
        int[][] from = new int[SIZE][];
        int[][] to = new int[SIZE][];
        for (int r = 0; r < SIZE; r++) {
            from[r] = dist(r)[0];
            to[r] = dist(r)[1];
        }
        check(part(ranks, graphs.length), from, to, false, "distributed graph");
    }

    @Test
    void shouldCompleteWhileTheRanksOnlyComputeAndTest() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "overlap");

        for (int r = 0; r < SIZE; r++) {
            List<?> got = (List<?>) ranks.get(r);
            int next = (r + 1) % SIZE;
            int before = (r + SIZE - 1) % SIZE;
            // block 0 goes to the next rank, which takes it from its rank before (its block 1), and back
            assertArrayEquals(new int[] {f(next, 1, 0), f(before, 0, 0)}, (int[]) got.get(0), "rank " + r);
            assertEquals(List.of(r == 0, true, true), got.subList(1, 4),
                    "rank " + r + ": pending while its neighbour had not started, complete by test() alone");
        }
    }

    @Test
    void shouldRefuseBadInputWithOpenMpisErrorClasses() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "bad");

        for (int r = 0; r < SIZE; r++) {
            int different = r == 1 || r == 3 ? MPI.ERR_TRUNCATE : MPI.SUCCESS;
            assertEquals(List.of(MPI.ERR_TOPOLOGY, MPI.ERR_TOPOLOGY, MPI.ERR_BUFFER, MPI.ERR_COUNT, MPI.ERR_TYPE,
                    MPI.ERR_ARG, MPI.ERR_ARG, different), ranks.get(r), "rank " + r);
        }
    }
}
