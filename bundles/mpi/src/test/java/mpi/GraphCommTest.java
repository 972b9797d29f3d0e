package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Graph and distributed-graph topologies on a world of four ranks: a ring, a star and a graph of
 * three nodes ({@code getDims}, every rank's neighbours, {@code map}, {@code dup}); distributed
 * graphs with weights whose edges other ranks give ({@code createDistGraph}), without weights,
 * and given by their two ends ({@code createDistGraphAdjacent}, with {@code MPI.PROC_NULL});
 * each checked against a computation of its own here; the error classes of bad input; and a
 * program written for Open MPI's bindings that uses them compiling against these classes.
 */
class GraphCommTest {

    static final int SIZE = 4;

    /** Node i's neighbours in a ring: the next and the one before. */
    static int[][] ring() {
        int[][] nb = new int[SIZE][];
        for (int i = 0; i < SIZE; i++) {
            nb[i] = new int[] {(i + 1) % SIZE, (i + SIZE - 1) % SIZE};
        }
        return nb;
    }

    /** Node 0 in the centre, the others its leaves. */
    static int[][] star() {
        int[][] nb = new int[SIZE][];
        nb[0] = new int[SIZE - 1];
        for (int i = 1; i < SIZE; i++) {
            nb[0][i - 1] = i;
            nb[i] = new int[] {0};
        }
        return nb;
    }

    /** @return {index, edges} of a graph given as each node's neighbours */
    static int[][] indexAndEdges(int[][] nb) {
        int[] index = new int[nb.length];
        List<Integer> edges = new ArrayList<>();
        for (int i = 0; i < nb.length; i++) {
            for (int n : nb[i]) {
                edges.add(n);
            }
            index[i] = edges.size();
        }
        return new int[][] {index, edges.stream().mapToInt(Integer::intValue).toArray()};
    }

    /** Edges rank r gives to createDistGraph: from (r + 1) % 4 to r and to (r + 2) % 4, weighing 100 * from + to. */
    static int[][] given(int r) {
        int s = (r + 1) % SIZE;
        return new int[][] {{s}, {2}, {r, (r + 2) % SIZE}, {100 * s + r, 100 * s + (r + 2) % SIZE}};
    }

    static final class Programs {

        static int classOf(CommunicatorsTest.Programs.Call c) {
            return CommunicatorsTest.Programs.classOf(c);
        }

        /** Per graph: topology, size, rank, index, edges, every rank's neighbours, map, dup and clone. */
        static Object graphs(Intracomm world) throws MPIException {
            List<Object> r = new ArrayList<>();
            for (int[][] g : new int[][][] {indexAndEdges(ring()), indexAndEdges(star()), {{1, 2, 3}, {1, 2, 0}}}) {
                GraphComm graph = world.createGraph(g[0], g[1], true);
                if (graph.isNull()) {
                    r.add("null");
                    continue;
                }
                GraphParms p = graph.getDims();
                int[] index = new int[p.getIndexCount()];
                for (int i = 0; i < index.length; i++) {
                    index[i] = p.getIndex(i);
                }
                int[] edges = new int[p.getEdgeCount()];
                for (int i = 0; i < edges.length; i++) {
                    edges[i] = p.getEdge(i);
                }
                int[][] neighbours = new int[graph.getSize()][];
                for (int rank = 0; rank < neighbours.length; rank++) {
                    neighbours[rank] = graph.getNeighbors(rank);
                }
                GraphComm copy = graph.dup();
                GraphComm clone = graph.clone();
                r.add(List.of(graph.getTopology(), graph.getSize(), graph.getRank(), index, edges, neighbours,
                        graph.map(new int[] {1, 2}, new int[] {1, 0}), copy.getTopology(), copy.getNeighbors(1),
                        Comm.compare(copy, graph), clone.getDims().getEdgeCount()));
            }
            r.add(world.createGraph(new int[0], new int[0], false).isNull());
            return r;
        }

        static List<Object> dist(GraphComm g) throws MPIException {
            DistGraphNeighbors n = g.getDistGraphNeighbors();
            int[][] in = new int[2][n.getInDegree()];
            for (int i = 0; i < in[0].length; i++) {
                in[0][i] = n.getSource(i);
                in[1][i] = n.getSourceWeight(i);
            }
            int[][] out = new int[2][n.getOutDegree()];
            for (int i = 0; i < out[0].length; i++) {
                out[0][i] = n.getDestination(i);
                out[1][i] = n.getDestinationWeight(i);
            }
            return List.of(g.getTopology(), g.getSize(), g.getRank(), n.isWeighted(), in, out);
        }

        /** createDistGraph with weights and without, createDistGraphAdjacent with weights and without. */
        static Object distGraphs(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int r = world.getRank();
            int[][] e = given(r);
            List<Object> out = new ArrayList<>();
            GraphComm weighted = world.createDistGraph(e[0], e[1], e[2], e[3], MPI.INFO_NULL, true);
            out.add(dist(weighted));
            out.add(dist(world.createDistGraph(e[0], e[1], e[2], new Info(), false)));
            int before = (r + SIZE - 1) % SIZE;
            int after = (r + 1) % SIZE;
            GraphComm adjacent = world.createDistGraphAdjacent(new int[] {before, MPI.PROC_NULL},
                    new int[] {10 * before + r, 5}, new int[] {after}, new int[] {10 * r + after}, null, false);
            out.add(dist(adjacent));
            out.add(dist(world.createDistGraphAdjacent(new int[] {after, after}, new int[] {before, before},
                    MPI.INFO_NULL, true)));
            out.add(dist(adjacent.dup()));
            out.add(List.of(classOf(adjacent::getDims), classOf(() -> adjacent.getNeighbors(0)),
                    classOf(() -> world.createGraph(new int[] {1, 2}, new int[] {1, 0}, false).getDistGraphNeighbors()),
                    adjacent.map(new int[] {1, 2, 3}, new int[] {1, 2, 0})));
            return out;
        }

        /** The error class of each bad call, under MPI.ERRORS_RETURN. */
        static Object bad(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            GraphComm ring = world.createGraph(indexAndEdges(ring())[0], indexAndEdges(ring())[1], false);
            int[] one = {1};
            return new int[] {
                classOf(() -> world.createGraph(new int[] {1, 2, 3, 4, 5}, new int[] {1, 2, 3, 4, 0}, false)),
                classOf(() -> world.createGraph(new int[] {2, 1}, new int[] {1, 0}, false)),
                classOf(() -> world.createGraph(new int[] {-1, 1}, new int[] {1, 0}, false)),
                classOf(() -> world.createGraph(new int[] {1, 2}, new int[] {1, 2}, false)),
                classOf(() -> world.createGraph(new int[] {1, 2}, new int[] {-1, 0}, false)),
                classOf(() -> world.createGraph(new int[] {1, 3}, new int[] {1, 0}, false)),
                classOf(() -> world.createGraph(null, one, false)),
                classOf(() -> ring.getNeighbors(SIZE)),
                classOf(() -> ring.getNeighbors(-1)),
                classOf(() -> ring.map(new int[0], new int[0])),
                classOf(() -> ring.map(new int[] {1, 2, 3, 4, 5}, new int[] {1, 2, 3, 4, 0})),
                classOf(() -> world.createDistGraph(new int[] {0}, new int[] {-1}, new int[0], MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraph(new int[] {0}, new int[] {1}, new int[] {1}, new int[] {-3},
                        MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraph(new int[] {0}, new int[] {1}, new int[] {SIZE}, MPI.INFO_NULL,
                        false)),
                classOf(() -> world.createDistGraph(new int[] {0, 1}, new int[] {1}, new int[] {1}, MPI.INFO_NULL,
                        false)),
                classOf(() -> world.createDistGraph(new int[] {0}, new int[] {2}, new int[] {1}, MPI.INFO_NULL,
                        false)),
                classOf(() -> world.createDistGraph(new int[] {0}, new int[] {1}, new int[] {1}, new int[0],
                        MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraphAdjacent(new int[] {0}, new int[] {-1}, new int[] {0},
                        new int[] {1}, MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraphAdjacent(new int[] {-5}, new int[] {0}, MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraphAdjacent(new int[] {0, 1}, new int[] {1}, new int[] {0},
                        new int[] {1}, MPI.INFO_NULL, false)),
                classOf(() -> world.createDistGraphAdjacent(null, new int[] {0}, MPI.INFO_NULL, false)),
            };
        }
    }

    @Test
    void shouldKeepEveryGraphAndGiveEachNodesNeighboursInEdgeOrder() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "graphs");

        int[][][] graphs = {ring(), star(), {{1}, {2}, {0}}};
        for (int rank = 0; rank < SIZE; rank++) {
            List<?> got = (List<?>) ranks.get(rank);
            for (int g = 0; g < graphs.length; g++) {
                String at = "rank " + rank + ", graph " + g;
                int nodes = graphs[g].length;
                if (rank >= nodes) {
                    assertEquals("null", got.get(g), at + ": beyond the graph");
                    continue;
                }
                List<?> graph = (List<?>) got.get(g);
                int[][] ie = indexAndEdges(graphs[g]);
                assertEquals(List.of(MPI.GRAPH, nodes, rank), graph.subList(0, 3), at);
                assertArrayEquals(ie[0], (int[]) graph.get(3), at + " index");
                assertArrayEquals(ie[1], (int[]) graph.get(4), at + " edges");
                assertArrayEquals(graphs[g], (int[][]) graph.get(5), at + " neighbours");
                assertEquals(rank < 2 ? rank : MPI.UNDEFINED, graph.get(6), at + " map to 2 nodes");
                assertEquals(MPI.GRAPH, graph.get(7), at + " dup");
                assertArrayEquals(graphs[g][1], (int[]) graph.get(8), at + " dup's neighbours");
                assertEquals(MPI.CONGRUENT, graph.get(9), at);
                assertEquals(ie[1].length, graph.get(10), at + " clone");
            }
            assertEquals(true, got.get(graphs.length), "rank " + rank + ": a graph of no node");
        }
    }

    @Test
    void shouldGiveEachRankTheEdgesOfItsDistributedGraphWithTheirWeights() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "distGraphs");

        // createDistGraph: every rank's edges, in the order of the ranks that gave them
        List<int[]> edges = new ArrayList<>();
        for (int giver = 0; giver < SIZE; giver++) {
            int[][] e = given(giver);
            for (int k = 0; k < e[2].length; k++) {
                edges.add(new int[] {e[0][0], e[2][k], e[3][k]});
            }
        }
        for (int rank = 0; rank < SIZE; rank++) {
            List<?> got = (List<?>) ranks.get(rank);
            String at = "rank " + rank;
            List<Integer> inRanks = new ArrayList<>();
            List<Integer> inWeights = new ArrayList<>();
            List<Integer> outRanks = new ArrayList<>();
            List<Integer> outWeights = new ArrayList<>();
            for (int[] e : edges) {
                if (e[0] == rank) {
                    outRanks.add(e[1]);
                    outWeights.add(e[2]);
                }
                if (e[1] == rank) {
                    inRanks.add(e[0]);
                    inWeights.add(e[2]);
                }
            }
            int[] ones = new int[2];
            Arrays.fill(ones, 1);
            assertDist(got.get(0), rank, true, ints(inRanks), ints(inWeights), ints(outRanks), ints(outWeights),
                    at + " weighted");
            assertDist(got.get(1), rank, false, ints(inRanks), ones, ints(outRanks), ones, at + " unweighted");
            int before = (rank + SIZE - 1) % SIZE;
            int after = (rank + 1) % SIZE;
            assertDist(got.get(2), rank, true, new int[] {before, MPI.PROC_NULL}, new int[] {10 * before + rank, 5},
                    new int[] {after}, new int[] {10 * rank + after}, at + " adjacent");
            assertDist(got.get(3), rank, false, new int[] {after, after}, new int[] {1, 1}, new int[] {before, before},
                    new int[] {1, 1}, at + " adjacent unweighted");
            assertDist(got.get(4), rank, true, new int[] {before, MPI.PROC_NULL}, new int[] {10 * before + rank, 5},
                    new int[] {after}, new int[] {10 * rank + after}, at + " dup");
            assertEquals(List.of(MPI.ERR_TOPOLOGY, MPI.ERR_TOPOLOGY, rank < 2 ? MPI.ERR_TOPOLOGY : MPI.ERR_COMM,
                    rank < 3 ? rank : MPI.UNDEFINED), got.get(5), at + ": the calls of the other kind");
        }
    }

    private static int[] ints(List<Integer> l) {
        return l.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void assertDist(Object o, int rank, boolean weighted, int[] in, int[] inWeights, int[] out,
                                   int[] outWeights, String at) {
        List<?> got = (List<?>) o;
        assertEquals(List.of(MPI.DIST_GRAPH, SIZE, rank, weighted), got.subList(0, 4), at);
        int[][] gotIn = (int[][]) got.get(4);
        int[][] gotOut = (int[][]) got.get(5);
        assertArrayEquals(in, gotIn[0], at + " sources");
        assertArrayEquals(inWeights, gotIn[1], at + " source weights");
        assertArrayEquals(out, gotOut[0], at + " destinations");
        assertArrayEquals(outWeights, gotOut[1], at + " destination weights");
    }

    @Test
    void shouldRefuseBadGraphsWithTheirErrorClasses() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "bad");

        int[] expected = new int[21];
        Arrays.fill(expected, MPI.ERR_ARG);
        expected[7] = MPI.ERR_RANK;
        expected[8] = MPI.ERR_RANK;
        for (int rank = 0; rank < SIZE; rank++) {
            assertArrayEquals(expected, (int[]) ranks.get(rank), "rank " + rank);
        }
    }

    private static final String PROGRAM = """
            import java.nio.IntBuffer;
            import mpi.*;

            public class Graphs {
                public static void main(String[] args) throws MPIException {
                    MPI.Init(args);
                    int n = MPI.COMM_WORLD.getSize();
                    int rank = MPI.COMM_WORLD.getRank();
                    int[] index = new int[n];
                    int[] edges = new int[n];
                    for (int i = 0; i < n; i++) {
                        index[i] = i + 1;
                        edges[i] = (i + 1) % n;
                    }
                    GraphComm graph = MPI.COMM_WORLD.createGraph(index, edges, false);
                    GraphParms p = graph.getDims();
                    int[] around = graph.getNeighbors(rank);
                    int mapped = graph.map(index, edges);
                    GraphComm copy = graph.clone();
                    GraphComm dup = graph.dup();
                    int[] in = new int[around.length];
                    graph.neighborAllGather(new int[] {rank}, 1, MPI.INT, in, 1, MPI.INT);
                    graph.neighborAllGatherv(new int[] {rank}, 1, MPI.INT, in, new int[] {1}, new int[] {0}, MPI.INT);
                    graph.neighborAllToAll(new int[] {rank}, 1, MPI.INT, in, 1, MPI.INT);
                    graph.neighborAllToAllv(new int[] {rank}, new int[] {1}, new int[] {0}, MPI.INT, in,
                            new int[] {1}, new int[] {0}, MPI.INT);
                    IntBuffer b = IntBuffer.allocate(1);
                    Request[] r = {graph.iNeighborAllGather(IntBuffer.wrap(new int[] {rank}), 1, MPI.INT, b, 1,
                            MPI.INT),
                        graph.iNeighborAllGatherv(b, 1, MPI.INT, b, new int[] {1}, new int[] {0}, MPI.INT),
                        graph.iNeighborAllToAll(b, 1, MPI.INT, b, 1, MPI.INT),
                        graph.iNeighborAllToAllv(b, new int[] {1}, new int[] {0}, MPI.INT, b, new int[] {1},
                                new int[] {0}, MPI.INT)};
                    Request.waitAll(r);
                    GraphComm dist = MPI.COMM_WORLD.createDistGraph(new int[] {rank}, new int[] {1},
                            new int[] {(rank + 1) % n}, new int[] {5}, MPI.INFO_NULL, true);
                    GraphComm plain = MPI.COMM_WORLD.createDistGraph(new int[] {rank}, new int[] {1},
                            new int[] {(rank + 1) % n}, MPI.INFO_NULL, false);
                    GraphComm adjacent = MPI.COMM_WORLD.createDistGraphAdjacent(new int[] {(rank + n - 1) % n},
                            new int[] {1}, new int[] {(rank + 1) % n}, new int[] {1}, new Info(), false);
                    GraphComm adjacentPlain = MPI.COMM_WORLD.createDistGraphAdjacent(new int[] {(rank + n - 1) % n},
                            new int[] {(rank + 1) % n}, MPI.INFO_NULL, false);
                    DistGraphNeighbors d = dist.getDistGraphNeighbors();
                    boolean kinds = dist.getTopology() == MPI.DIST_GRAPH && graph.getTopology() == MPI.GRAPH;
                    System.out.println(p.getIndexCount() + " " + p.getIndex(0) + " " + p.getEdgeCount() + " "
                            + p.getEdge(0) + " " + mapped + " " + d.getInDegree() + " " + d.getOutDegree() + " "
                            + d.isWeighted() + " " + d.getSource(0) + " " + d.getSourceWeight(0) + " "
                            + d.getDestination(0) + " " + d.getDestinationWeight(0) + " " + kinds);
                    MPI.Finalize();
                }
            }
            """;

    @TempDir
    Path dir;

    @Test
    void shouldCompileAGraphProgramWrittenForOpenMpisBindings() throws Exception {
        Path source = dir.resolve("Graphs.java");
        Files.writeString(source, PROGRAM);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler");
        String classes = new File(MPI.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        StringWriter out = new StringWriter();

        Boolean ok = javac.getTask(out, null, null, List.of("-cp", classes, "-d", dir.toString(), "-proc:none"), null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(source.toFile())).call();

        assertEquals(true, ok, out.toString());
        assertTrue(Files.exists(dir.resolve("Graphs.class")));
    }
}
