package mpi;

/** A Cartesian communicator's grid as one rank sees it: its dimensions, their periodicity and its coordinates. */
public final class CartParms {

    private final int[] dims;
    private final boolean[] periods;
    private final int[] coords;

    /**
     * @param dims    processes along each dimension
     * @param periods whether each dimension wraps around
     * @param coords  the calling process's coordinates
     */
    protected CartParms(int[] dims, boolean[] periods, int[] coords) {
        this.dims = dims;
        this.periods = periods;
        this.coords = coords;
    }

    /** @return the number of dimensions */
    public int getDimCount() {
        return dims.length;
    }

    /** @return processes along dimension {@code i} */
    public int getDim(int i) {
        return dims[i];
    }

    /** @return whether dimension {@code i} wraps around */
    public boolean getPeriod(int i) {
        return periods[i];
    }

    /** @return the calling process's coordinate along dimension {@code i} */
    public int getCoord(int i) {
        return coords[i];
    }
}
