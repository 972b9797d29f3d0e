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
 * Cartesian topologies on a world of six ranks: a 2x3 grid periodic and not (coordinates and
 * ranks both ways, shifts against a computation of their own, a halo exchange with
 * {@code sendRecv}), {@code sub} into rows and columns, {@code map}, {@code createDims} as the
 * standard's examples say, the error classes of bad input under the communicator's handler, and
 * a program written for Open MPI's bindings that uses them compiling against these classes.
 */
class CartCommTest {

    static final int SIZE = 6;
    static final int ROWS = 2;
    static final int COLS = 3;

    static final class Programs {

        @FunctionalInterface
        interface Call {
            void run() throws MPIException;
        }

        static int classOf(Call c) {
            try {
                c.run();
                return MPI.SUCCESS;
            } catch (MPIException e) {
                return e.getErrorClass();
            }
        }

        /** Per grid (periodic, not, mixed): topology, getTopo, every rank's coordinates and back. */
        static Object coords(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> r = new ArrayList<>();
            r.add(world.getTopology());
            for (boolean[] periods : new boolean[][] {{true, true}, {false, false}, {false, true}}) {
                CartComm cart = world.createCart(new int[] {ROWS, COLS}, periods, true);
                CartParms p = cart.getTopo();
                int[][] coordsOf = new int[SIZE][];
                int[] back = new int[SIZE];
                for (int rank = 0; rank < SIZE; rank++) {
                    coordsOf[rank] = cart.getCoords(rank);
                    back[rank] = cart.getRank(coordsOf[rank]);
                }
                CartComm copy = cart.dup();
                CartComm clone = cart.clone();
                CartParms q = clone.getTopo();
                r.add(List.of(cart.getTopology(), cart.getSize(), cart.getRank(),
                        new int[] {p.getDimCount(), p.getDim(0), p.getDim(1), p.getCoord(0), p.getCoord(1)},
                        List.of(p.getPeriod(0), p.getPeriod(1)), coordsOf, back,
                        List.of(copy.getTopology(), Comm.compare(copy, cart), Arrays.toString(copy.getCoords(4)),
                                q.getDim(1), q.getPeriod(1), q.getCoord(1)),
                        cart.split(0, 0).getTopology()));
            }
            return r;
        }

        /** Every shift this rank asks for, source and destination, periodic grid then the other. */
        static Object shifts(Intracomm world) throws MPIException {
            List<int[]> r = new ArrayList<>();
            for (boolean periodic : new boolean[] {true, false}) {
                CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {periodic, periodic}, false);
                for (int direction = 0; direction < 2; direction++) {
                    for (int disp : new int[] {1, -1, 2, 0, 4}) {
                        ShiftParms s = cart.shift(direction, disp);
                        r.add(new int[] {s.getRankSource(), s.getRankDest()});
                    }
                }
            }
            return r;
        }

        /** Sends its rank along shift(d, 1) and receives from the source: the neighbours' ranks, -7 from none. */
        static Object halo(Intracomm world) throws MPIException {
            List<int[]> r = new ArrayList<>();
            for (boolean periodic : new boolean[] {true, false}) {
                CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {periodic, periodic}, false);
                for (int direction = 0; direction < 2; direction++) {
                    ShiftParms s = cart.shift(direction, 1);
                    int[] got = {-7};
                    Status st = cart.sendRecv(new int[] {cart.getRank()}, 1, MPI.INT, s.getRankDest(), 5, got, 1,
                            MPI.INT, s.getRankSource(), 5);
                    r.add(new int[] {got[0], st.getSource()});
                }
            }
            return r;
        }

        /** Rows (keep dimension 1), columns (keep 0), none: sizes, ranks, members and topology. */
        static Object sub(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {false, true}, false);
            List<Object> r = new ArrayList<>();
            for (boolean[] keep : new boolean[][] {{false, true}, {true, false}, {false, false}, {true, true}}) {
                CartComm part = cart.sub(keep);
                CartParms p = part.getTopo();
                int[] members = new int[part.getSize()];
                part.allGather(new int[] {world.getRank()}, 1, MPI.INT, members, 1, MPI.INT);
                int[] dims = new int[p.getDimCount()];
                boolean[] periods = new boolean[p.getDimCount()];
                int[] coords = new int[p.getDimCount()];
                for (int i = 0; i < dims.length; i++) {
                    dims[i] = p.getDim(i);
                    periods[i] = p.getPeriod(i);
                    coords[i] = p.getCoord(i);
                }
                r.add(List.of(part.getSize(), part.getRank(), members, dims, Arrays.toString(periods), coords,
                        part.getTopology()));
            }
            return r;
        }

        /** createDims for the standard's cases and the erroneous ones. */
        static Object dims(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> r = new ArrayList<>();
            int[][] cases = {{6, 0, 0}, {12, 0, 3, 0}, {7, 0, 0}, {6, 0, 3, 0}, {16, 0, 0, 0}, {1, 0, 0}, {6, 2, 3},
                {36, 0, 0, 0}, {7, 0, 3, 0}, {6, -1, 0}, {0, 0}, {6}, {12, 2, 4}, {6, 2, 2}};
            for (int[] c : cases) {
                int[] dims = Arrays.copyOfRange(c, 1, c.length);
                int cls = classOf(() -> CartComm.createDims(c[0], dims));
                r.add(cls == MPI.SUCCESS ? Arrays.toString(dims) : "class " + cls);
            }
            r.add(classOf(() -> CartComm.createDims(6, null)));
            return r;
        }

        /** map on a 2x3 grid for grids of 4, 6 and 1, and the bad ones. */
        static Object map(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {false, false}, false);
            return new int[] {cart.map(new int[] {2, 2}, new boolean[] {false, true}), cart.map(new int[] {3, 2},
                new boolean[] {true, true}), cart.map(new int[] {}, new boolean[] {}),
                classOf(() -> cart.map(new int[] {7}, new boolean[] {false})),
                classOf(() -> cart.map(new int[] {0, 2}, new boolean[] {false, false})),
                classOf(() -> cart.map(new int[] {-2, -3}, new boolean[] {false, false})),
                classOf(() -> cart.map(new int[] {2}, new boolean[] {false, false}))};
        }

        /** The error class of each bad call, under MPI.ERRORS_RETURN inherited from the world. */
        static Object bad(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {false, true}, false);
            CartComm small = world.createCart(new int[] {2, 2}, new boolean[] {false, false}, false);
            int[] classes = {
                classOf(() -> world.createCart(new int[] {3, 3}, new boolean[] {false, false}, false)),
                classOf(() -> world.createCart(new int[] {-1, 3}, new boolean[] {false, false}, false)),
                classOf(() -> world.createCart(new int[] {0, 3}, new boolean[] {false, false}, false)),
                classOf(() -> world.createCart(new int[] {2, 3}, new boolean[] {false}, false)),
                classOf(() -> world.createCart(null, new boolean[] {}, false)),
                classOf(() -> cart.getRank(new int[] {2, 0})),
                classOf(() -> cart.getRank(new int[] {-1, 0})),
                classOf(() -> cart.getRank(new int[] {0})),
                classOf(() -> cart.getRank(new int[] {1, 4})),
                classOf(() -> cart.getCoords(SIZE)),
                classOf(() -> cart.getCoords(-1)),
                classOf(() -> cart.shift(2, 1)),
                classOf(() -> cart.shift(-1, 1)),
                classOf(() -> cart.sub(new boolean[] {true})),
                small.isNull() ? 1 : 0,
                classOf(small::getTopology),
                classOf(() -> small.shift(0, 1)),
            };
            return List.of(classes, cart.getRank(new int[] {1, 4}), cart.getRank(new int[] {0, -1}));
        }

        /** A bad shift on a grid whose handler is MPI.ERRORS_ARE_FATAL while the world's returns. */
        static Object fatalOnTheGrid(Intracomm world) throws MPIException {
            CartComm cart = world.createCart(new int[] {ROWS, COLS}, new boolean[] {false, false}, false);
            cart.setName("the grid");
            world.setErrhandler(MPI.ERRORS_RETURN);
            cart.shift(0, 1);
            cart.shift(3, 1);
            return "not ended";
        }
    }

    private static int[] coordsOf(int rank) {
        return new int[] {rank / COLS, rank % COLS};
    }

    private static int rankAt(int row, int col, boolean periodic) {
        if (periodic) {
            return Math.floorMod(row, ROWS) * COLS + Math.floorMod(col, COLS);
        }
        return row < 0 || row >= ROWS || col < 0 || col >= COLS ? MPI.PROC_NULL : row * COLS + col;
    }

    @Test
    void shouldPlaceEveryRankInRowMajorOrderAndMapItsCoordinatesBack() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "coords");

        boolean[][] periods = {{true, true}, {false, false}, {false, true}};
        int[][] all = new int[SIZE][];
        int[] identity = new int[SIZE];
        for (int r = 0; r < SIZE; r++) {
            all[r] = coordsOf(r);
            identity[r] = r;
        }
        for (int rank = 0; rank < SIZE; rank++) {
            List<?> got = (List<?>) ranks.get(rank);
            assertEquals(MPI.UNDEFINED, got.get(0), "the world has no topology");
            for (int g = 0; g < periods.length; g++) {
                List<?> grid = (List<?>) got.get(g + 1);
                String at = "rank " + rank + ", grid " + g;
                assertEquals(MPI.CART, grid.get(0), at);
                assertEquals(SIZE, grid.get(1), at);
                assertEquals(rank, grid.get(2), at);
                int[] c = coordsOf(rank);
                assertArrayEquals(new int[] {2, ROWS, COLS, c[0], c[1]}, (int[]) grid.get(3), at);
                assertEquals(List.of(periods[g][0], periods[g][1]), grid.get(4), at);
                assertArrayEquals(all, (int[][]) grid.get(5), at);
                assertArrayEquals(identity, (int[]) grid.get(6), at);
                assertEquals(List.of(MPI.CART, MPI.CONGRUENT, "[1, 1]", COLS, periods[g][1], c[1]), grid.get(7),
                        at + ": dup and clone keep the grid");
                assertEquals(MPI.UNDEFINED, grid.get(8), at + ": split makes no grid");
            }
        }
    }

    @Test
    void shouldShiftAsAComputationOfTheGridSaysWithProcNullAtTheEdges() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "shifts");

        int procNulls = 0;
        for (int rank = 0; rank < SIZE; rank++) {
            @SuppressWarnings("unchecked")
            List<int[]> got = (List<int[]>) ranks.get(rank);
            int i = 0;
            for (boolean periodic : new boolean[] {true, false}) {
                for (int direction = 0; direction < 2; direction++) {
                    for (int disp : new int[] {1, -1, 2, 0, 4}) {
                        int[] c = coordsOf(rank);
                        int dr = direction == 0 ? disp : 0;
                        int dc = direction == 1 ? disp : 0;
                        int[] expected = {rankAt(c[0] - dr, c[1] - dc, periodic), rankAt(c[0] + dr, c[1] + dc, periodic)};
                        procNulls += (expected[0] == MPI.PROC_NULL ? 1 : 0) + (expected[1] == MPI.PROC_NULL ? 1 : 0);
                        assertArrayEquals(expected, got.get(i++), "rank " + rank + (periodic ? " periodic" : "")
                                + " shift(" + direction + ", " + disp + ")");
                    }
                }
            }
        }
        assertTrue(procNulls > 0, "the non-periodic grid has edges");
    }

    @Test
    void shouldExchangeAHaloWithTheNeighboursOfAShift() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "halo");

        for (int rank = 0; rank < SIZE; rank++) {
            @SuppressWarnings("unchecked")
            List<int[]> got = (List<int[]>) ranks.get(rank);
            int[] c = coordsOf(rank);
            int i = 0;
            for (boolean periodic : new boolean[] {true, false}) {
                for (int direction = 0; direction < 2; direction++) {
                    int source = direction == 0 ? rankAt(c[0] - 1, c[1], periodic) : rankAt(c[0], c[1] - 1, periodic);
                    int[] expected = source == MPI.PROC_NULL ? new int[] {-7, MPI.PROC_NULL} : new int[] {source, source};
                    assertArrayEquals(expected, got.get(i++), "rank " + rank + (periodic ? " periodic" : "")
                            + " direction " + direction);
                }
            }
        }
    }

    @Test
    void shouldSplitTheGridIntoRowsAndColumns() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "sub");

        for (int rank = 0; rank < SIZE; rank++) {
            List<?> got = (List<?>) ranks.get(rank);
            int[] c = coordsOf(rank);
            int[] row = {c[0] * COLS, c[0] * COLS + 1, c[0] * COLS + 2};
            int[] column = {c[1], COLS + c[1]};
            int[] all = {0, 1, 2, 3, 4, 5};
            Object[][] expected = {
                {COLS, c[1], row, new int[] {COLS}, "[true]", new int[] {c[1]}},
                {ROWS, c[0], column, new int[] {ROWS}, "[false]", new int[] {c[0]}},
                {1, 0, new int[] {rank}, new int[] {}, "[]", new int[] {}},
                {SIZE, rank, all, new int[] {ROWS, COLS}, "[false, true]", c},
            };
            for (int k = 0; k < expected.length; k++) {
                List<?> part = (List<?>) got.get(k);
                String at = "rank " + rank + ", sub " + k;
                assertEquals(expected[k][0], part.get(0), at + " size");
                assertEquals(expected[k][1], part.get(1), at + " rank");
                assertArrayEquals((int[]) expected[k][2], (int[]) part.get(2), at + " members");
                assertArrayEquals((int[]) expected[k][3], (int[]) part.get(3), at + " dims");
                assertEquals(expected[k][4], part.get(4), at + " periods");
                assertArrayEquals((int[]) expected[k][5], (int[]) part.get(5), at + " coords");
                assertEquals(MPI.CART, part.get(6), at);
            }
        }
    }

    @Test
    void shouldCreateDimsAsTheStandardSays() throws Exception {
        List<Object> got = World.values(1, Programs.class, "dims");

        assertEquals(List.of("[3, 2]", "[2, 3, 2]", "[7, 1]", "[2, 3, 1]", "[4, 2, 2]", "[1, 1]", "[2, 3]",
                "[4, 3, 3]", "class " + MPI.ERR_DIMS, "class " + MPI.ERR_DIMS, "class " + MPI.ERR_DIMS,
                "class " + MPI.ERR_DIMS, "class " + MPI.ERR_DIMS, "class " + MPI.ERR_DIMS, MPI.ERR_ARG), got.get(0));
    }

    @Test
    void shouldChooseTheMostBalancedFactorsOfEveryNumber() {
        for (int n = 1; n <= 130; n++) {
            for (int k = 1; k <= 4; k++) {
                int[] chosen = CartComm.balanced(n, k);
                int product = 1;
                for (int i = 0; i < k; i++) {
                    product *= chosen[i];
                    assertTrue(i == 0 || chosen[i] <= chosen[i - 1], n + " in " + k + ": " + Arrays.toString(chosen));
                }
                assertEquals(n, product, Arrays.toString(chosen));
                assertEquals(leastSpread(n, k, Integer.MAX_VALUE, Integer.MAX_VALUE), chosen[0] - chosen[k - 1],
                        n + " in " + k + ": " + Arrays.toString(chosen));
            }
        }
    }

    /** By brute force: the least largest-minus-smallest of k factors of n (each at most {@code max}). */
    private static int leastSpread(int n, int k, int first, int max) {
        if (k == 1) {
            return n <= max ? (first == Integer.MAX_VALUE ? 0 : first - n) : Integer.MAX_VALUE;
        }
        int best = Integer.MAX_VALUE;
        for (int f = 1; f <= Math.min(n, max); f++) {
            if (n % f == 0) {
                best = Math.min(best, leastSpread(n / f, k - 1, first == Integer.MAX_VALUE ? f : first, f));
            }
        }
        return best;
    }

    @Test
    void shouldMapTheFirstRanksOfAGridAndRefuseBadOnes() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "map");

        for (int rank = 0; rank < SIZE; rank++) {
            assertArrayEquals(new int[] {rank < 4 ? rank : MPI.UNDEFINED, rank, rank < 1 ? 0 : MPI.UNDEFINED,
                MPI.ERR_DIMS, MPI.ERR_DIMS, MPI.ERR_DIMS, MPI.ERR_ARG}, (int[]) ranks.get(rank), "rank " + rank);
        }
    }

    @Test
    void shouldReportTheErrorClassesOfOpenMpiForBadInput() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "bad");

        for (int rank = 0; rank < SIZE; rank++) {
            List<?> got = (List<?>) ranks.get(rank);
            boolean inSmall = rank < 4;
            assertArrayEquals(new int[] {MPI.ERR_ARG, MPI.ERR_OTHER, MPI.ERR_OTHER, MPI.ERR_ARG, MPI.ERR_ARG,
                MPI.ERR_ARG, MPI.ERR_ARG, MPI.ERR_ARG, MPI.SUCCESS, MPI.ERR_RANK, MPI.ERR_RANK, MPI.ERR_DIMS,
                MPI.ERR_DIMS, MPI.ERR_ARG, inSmall ? 0 : 1, inSmall ? MPI.SUCCESS : MPI.ERR_COMM,
                inSmall ? MPI.SUCCESS : MPI.ERR_COMM}, (int[]) got.get(0), "rank " + rank);
            assertEquals(List.of(4, 2), got.subList(1, 3), "rank " + rank + ": a periodic dimension wraps around");
        }
    }

    @Test
    void shouldHandABadCallToTheGridsHandler() throws Exception {
        for (World.Outcome o : World.run(SIZE, Programs.class, "fatalOnTheGrid")) {
            assertEquals(MPI.ERR_DIMS, o.endedStatus(), String.valueOf(o));
            assertTrue(o.endedMessage().startsWith("MPI_ERR_DIMS on the grid at rank "), o.endedMessage());
        }
    }

    private static final String PROGRAM = """
            import mpi.*;

            public class Grid {
                public static void main(String[] args) throws MPIException {
                    MPI.Init(args);
                    int[] dims = new int[2];
                    CartComm.createDims(MPI.COMM_WORLD.getSize(), dims);
                    CartComm cart = MPI.COMM_WORLD.createCart(dims, new boolean[] {true, false}, true);
                    if (!cart.isNull() && cart.getTopology() == MPI.CART) {
                        CartParms p = cart.getTopo();
                        int[] coords = cart.getCoords(cart.getRank());
                        int rank = cart.getRank(coords);
                        ShiftParms s = cart.shift(0, 1);
                        int[] in = new int[1];
                        cart.sendRecv(new int[] {rank}, 1, MPI.INT, s.getRankDest(), 0, in, 1, MPI.INT,
                                s.getRankSource(), 0);
                        CartComm row = cart.sub(new boolean[] {false, true});
                        CartComm copy = cart.clone();
                        CartComm dup = cart.dup();
                        int mapped = cart.map(new int[] {p.getDim(0)}, new boolean[] {p.getPeriod(0)});
                        System.out.println(p.getDimCount() + " " + p.getCoord(0) + " " + row.getSize() + " "
                                + mapped + " " + (copy.getTopology() == dup.getTopology()));
                    }
                    int kinds = MPI.GRAPH + MPI.DIST_GRAPH + MPI.CART;
                    MPI.Finalize();
                }
            }
            """;

    @TempDir
    Path dir;

    @Test
    void shouldCompileACartesianProgramWrittenForOpenMpisBindings() throws Exception {
        Path source = dir.resolve("Grid.java");
        Files.writeString(source, PROGRAM);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "a JDK's compiler");
        String classes = new File(MPI.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        StringWriter out = new StringWriter();

        Boolean ok = javac.getTask(out, null, null, List.of("-cp", classes, "-d", dir.toString(), "-proc:none"), null,
                javac.getStandardFileManager(null, null, null).getJavaFileObjects(source.toFile())).call();

        assertEquals(true, ok, out.toString());
        assertTrue(Files.exists(dir.resolve("Grid.class")));
    }
}
