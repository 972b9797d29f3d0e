package mpi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.mpiproxy.mpi.internal.engine.Communicator;

/**
 * An intra-communicator whose ranks form a Cartesian grid ({@link Intracomm#createCart}): rank r
 * sits at the coordinates of r in row-major order (the last dimension varies fastest), as MPI
 * numbers them. A dimension that is periodic wraps around; a shift across the edge of one that is
 * not gives {@link MPI#PROC_NULL}. The grid is this process's own: no call but {@code createCart},
 * {@code dup} and {@code sub} (collective, as MPI says) talks to other ranks.
 */
public final class CartComm extends Intracomm {

    private final int[] dims;
    private final boolean[] periods;

    private CartComm(Communicator comm, String name, int[] dims, boolean[] periods) {
        super(comm, name);
        this.dims = dims;
        this.periods = periods;
    }

    /**
     * The body of {@link Intracomm#createCart}: the first {@code product(dims)} ranks of
     * {@code parent}, in their order ({@code reorder} changes nothing here).
     *
     * @return the grid, or a null communicator ({@link #isNull}) for a rank beyond it
     */
    static CartComm create(Intracomm parent, Communicator c, int[] dims, boolean[] periods) throws MPIException {
        String call = "createCart on " + parent.getName();
        if (dims == null || periods == null) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + (dims == null ? "dims" : "periods") + " is null");
        }
        if (periods.length != dims.length) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + dims.length + " dimensions but " + periods.length
                    + " periods");
        }
        long product = 1;
        for (int d : dims) {
            product *= d;
        }
        // Open MPI's order: a grid larger than the communicator first, then a dimension not positive
        if (product > c.size()) {
            throw new MPIException(MPI.ERR_ARG, call + ": a grid of " + product + " processes "
                    + Arrays.toString(dims) + " on " + c.size() + " ranks");
        }
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] <= 0) {
                throw new MPIException(MPI.ERR_OTHER, call + ": dimension " + i + " has " + dims[i]
                        + " processes " + Arrays.toString(dims));
            }
        }
        int rank = c.rank();
        Communicator grid = c.split(rank < product ? 0 : MPI.UNDEFINED, rank);
        if (grid == null) {
            return new CartComm(null, "MPI_COMM_NULL", new int[0], new boolean[0]);
        }
        return parent.inheriting(new CartComm(grid, parent.getName() + " (cart " + shape(dims) + ")",
                dims.clone(), periods.clone()));
    }

    private static String shape(int[] dims) {
        StringBuilder s = new StringBuilder();
        for (int d : dims) {
            s.append(s.length() == 0 ? "" : "x").append(d);
        }
        return s.toString();
    }

    @Override
    int topology() {
        return MPI.CART;
    }

    /** @return a communicator of the same grid whose messages never meet this one's (collective) */
    @Override
    public CartComm dup() throws MPIException {
        return call(c -> inheriting(new CartComm(c.dup(), getName() + " (dup)", dims, periods)));
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public CartComm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /** @return the grid's dimensions and periods, and this process's coordinates in it */
    public CartParms getTopo() throws MPIException {
        return call(c -> new CartParms(dims.clone(), periods.clone(), coordsOf(c.rank())));
    }

    /**
     * @param coords a coordinate per dimension; one beyond a periodic dimension wraps around
     * @return the rank at {@code coords}
     * @throws MPIException {@code MPI.ERR_ARG} for a wrong number of coordinates or one outside a
     *                      dimension that is not periodic
     */
    public int getRank(int[] coords) throws MPIException {
        return call(c -> {
            if (coords == null || coords.length != dims.length) {
                throw new MPIException(MPI.ERR_ARG, "getRank on " + getName() + ": "
                        + (coords == null ? "no" : String.valueOf(coords.length)) + " coordinates for a grid of "
                        + dims.length + " dimensions");
            }
            int rank = 0;
            for (int i = 0; i < dims.length; i++) {
                int at = coords[i];
                if (at < 0 || at >= dims[i]) {
                    if (!periods[i]) {
                        throw new MPIException(MPI.ERR_ARG, "getRank on " + getName() + ": coordinate " + at
                                + " of dimension " + i + " (not periodic) is outside 0.." + (dims[i] - 1));
                    }
                    at = Math.floorMod(at, dims[i]);
                }
                rank = rank * dims[i] + at;
            }
            return rank;
        });
    }

    /**
     * @param rank a rank of this communicator
     * @return its coordinates
     * @throws MPIException {@code MPI.ERR_RANK} for no rank of it
     */
    public int[] getCoords(int rank) throws MPIException {
        return call(c -> {
            if (rank < 0 || rank >= c.size()) {
                throw new MPIException(MPI.ERR_RANK, "getCoords on " + getName() + ": rank " + rank
                        + " is not in 0.." + (c.size() - 1));
            }
            return coordsOf(rank);
        });
    }

    private int[] coordsOf(int rank) {
        int[] coords = new int[dims.length];
        for (int i = dims.length - 1; i >= 0; i--) {
            coords[i] = rank % dims[i];
            rank /= dims[i];
        }
        return coords;
    }

    private int rankOf(int[] coords) {
        int rank = 0;
        for (int i = 0; i < dims.length; i++) {
            rank = rank * dims[i] + coords[i];
        }
        return rank;
    }

    /**
     * The neighbours of a shift by {@code disp} along dimension {@code direction}: this process
     * receives from the source and sends to the destination.
     *
     * @return the source (this rank's coordinate minus {@code disp}) and the destination (plus
     *         {@code disp}), {@link MPI#PROC_NULL} beyond the edge of a dimension that is not periodic
     * @throws MPIException {@code MPI.ERR_DIMS} for no dimension of the grid
     */
    public ShiftParms shift(int direction, int disp) throws MPIException {
        return call(c -> {
            if (direction < 0 || direction >= dims.length) {
                throw new MPIException(MPI.ERR_DIMS, "shift on " + getName() + ": direction " + direction
                        + " is no dimension of a grid of " + dims.length);
            }
            int[] mine = coordsOf(c.rank());
            return new ShiftParms(neighbour(mine, direction, -(long) disp), neighbour(mine, direction, disp));
        });
    }

    private int neighbour(int[] coords, int direction, long disp) {
        long at = coords[direction] + disp;
        if (periods[direction]) {
            at = Math.floorMod(at, (long) dims[direction]);
        } else if (at < 0 || at >= dims[direction]) {
            return MPI.PROC_NULL;
        }
        int[] there = coords.clone();
        there[direction] = (int) at;
        return rankOf(there);
    }

    /**
     * @return the neighbours of a neighbourhood collective: for each dimension the rank below and
     *         the rank above, {@link MPI#PROC_NULL} beyond the edge of one that does not wrap
     */
    int[] neighbours(Communicator c) {
        int[] mine = coordsOf(c.rank());
        int[] around = new int[2 * dims.length];
        for (int d = 0; d < dims.length; d++) {
            around[2 * d] = neighbour(mine, d, -1);
            around[2 * d + 1] = neighbour(mine, d, 1);
        }
        return around;
    }

    /**
     * Splits the grid into the grids of lower dimension that keep the dimensions of
     * {@code remainDims} (collective): the ranks that share their coordinates along the others.
     * Keeping none gives a grid of no dimension, this process alone.
     *
     * @param remainDims per dimension, whether the new grids keep it
     * @return this process's grid
     * @throws MPIException {@code MPI.ERR_ARG} for a wrong number of entries
     */
    public CartComm sub(boolean[] remainDims) throws MPIException {
        return call(c -> {
            if (remainDims == null || remainDims.length != dims.length) {
                throw new MPIException(MPI.ERR_ARG, "sub on " + getName() + ": "
                        + (remainDims == null ? "no" : String.valueOf(remainDims.length))
                        + " entries of remainDims for a grid of " + dims.length + " dimensions");
            }
            int[] mine = coordsOf(c.rank());
            int colour = 0;
            List<Integer> kept = new ArrayList<>();
            for (int i = 0; i < dims.length; i++) {
                if (remainDims[i]) {
                    kept.add(i);
                } else {
                    colour = colour * dims[i] + mine[i];
                }
            }
            int[] subDims = new int[kept.size()];
            boolean[] subPeriods = new boolean[kept.size()];
            for (int j = 0; j < subDims.length; j++) {
                subDims[j] = dims[kept.get(j)];
                subPeriods[j] = periods[kept.get(j)];
            }
            // row-major: ordering by the rank here orders by the kept coordinates
            Communicator part = c.split(colour, c.rank());
            return inheriting(new CartComm(part, getName() + " (sub " + Arrays.toString(remainDims) + ")",
                    subDims, subPeriods));
        });
    }

    /**
     * Where this process would sit in a grid of {@code dims} made from this communicator: its
     * rank, as {@code createCart} keeps them (local).
     *
     * @return this process's rank in such a grid, {@link MPI#UNDEFINED} when it is beyond it
     * @throws MPIException {@code MPI.ERR_DIMS} for a dimension not positive or a grid larger than
     *                      this communicator, {@code MPI.ERR_ARG} for arrays of different lengths
     */
    public int map(int[] dims, boolean[] periods) throws MPIException {
        return call(c -> {
            if (dims == null || periods == null || periods.length != dims.length) {
                throw new MPIException(MPI.ERR_ARG, "map on " + getName() + ": dims and periods must be "
                        + "arrays of one length");
            }
            long product = 1;
            for (int i = 0; i < dims.length; i++) {
                if (dims[i] <= 0) {
                    throw new MPIException(MPI.ERR_DIMS, "map on " + getName() + ": dimension " + i + " has "
                            + dims[i] + " processes");
                }
                product *= dims[i];
                if (product > c.size()) {
                    throw new MPIException(MPI.ERR_DIMS, "map on " + getName() + ": a grid of "
                            + Arrays.toString(dims) + " is larger than its " + c.size() + " ranks");
                }
            }
            return c.rank() < product ? c.rank() : MPI.UNDEFINED;
        });
    }

    /**
     * Fills the zero entries of {@code dims} so that the product of all is {@code nnodes}, the
     * dimensions it chooses as close to each other as possible and in non-increasing order, as
     * {@code MPI_Dims_create} does; entries not zero are kept.
     *
     * @throws MPIException {@code MPI.ERR_DIMS} (under {@code MPI.COMM_WORLD}'s handler) for no
     *                      dimension, {@code nnodes} below 1, a negative entry, or entries whose
     *                      product does not divide {@code nnodes}; {@code MPI.ERR_ARG} for no array
     */
    public static void createDims(int nnodes, int[] dims) throws MPIException {
        synchronized (MPI.LOCK) {
            MPI.check();
            try {
                fill(nnodes, dims);
            } catch (MPIException e) {
                throw MPI.raise(e);
            }
        }
    }

    private static void fill(int nnodes, int[] dims) throws MPIException {
        if (dims == null) {
            throw new MPIException(MPI.ERR_ARG, "createDims: dims is null");
        }
        if (dims.length == 0 || nnodes < 1) {
            throw new MPIException(MPI.ERR_DIMS, "createDims(" + nnodes + ", " + Arrays.toString(dims)
                    + "): " + (nnodes < 1 ? "fewer than one node" : "no dimension"));
        }
        int free = nnodes;
        int freeDims = 0;
        for (int d : dims) {
            if (d == 0) {
                freeDims++;
            } else if (d < 0 || free % d != 0) {
                throw new MPIException(MPI.ERR_DIMS, "createDims(" + nnodes + ", " + Arrays.toString(dims)
                        + "): " + (d < 0 ? d + " is negative" : "the fixed dimensions do not divide " + nnodes));
            } else {
                free /= d;
            }
        }
        if (freeDims == 0) {
            if (free != 1) {
                throw new MPIException(MPI.ERR_DIMS, "createDims(" + nnodes + ", " + Arrays.toString(dims)
                        + "): the fixed dimensions make " + (nnodes / free) + " nodes, not " + nnodes);
            }
            return;
        }
        int[] chosen = balanced(free, freeDims);
        for (int i = 0, j = 0; i < dims.length; i++) {
            if (dims[i] == 0) {
                dims[i] = chosen[j++];
            }
        }
    }

    /** @return {@code k} factors of {@code n}, non-increasing, whose largest and smallest differ least */
    static int[] balanced(int n, int k) {
        List<Integer> divisors = new ArrayList<>();
        for (int f = 1; (long) f * f <= n; f++) {
            if (n % f == 0) {
                divisors.add(f);
                if (f != n / f) {
                    divisors.add(n / f);
                }
            }
        }
        divisors.sort(null);
        int[][] best = {null};
        search(n, k, Integer.MAX_VALUE, new int[k], 0, divisors, best);
        return best[0];
    }

    private static void search(int n, int k, int largest, int[] factors, int at, List<Integer> divisors,
            int[][] best) {
        if (at == k - 1) {
            if (n > largest) {
                return;
            }
            factors[at] = n;
            if (best[0] == null || factors[0] - n < best[0][0] - best[0][k - 1]) {
                best[0] = factors.clone();
            }
            return;
        }
        int left = k - at;
        for (int f : divisors) {
            // the largest factor left is at least the left-th root of what is left
            if (f > largest || f > n) {
                break;
            }
            if (n % f == 0 && Math.pow(f, left) >= n) {
                factors[at] = f;
                search(n / f, k, f, factors, at + 1, divisors, best);
            }
        }
    }
}
