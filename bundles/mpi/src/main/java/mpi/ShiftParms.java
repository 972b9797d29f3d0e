package mpi;

/** The ranks a shift along one dimension of a Cartesian grid receives from and sends to. */
public final class ShiftParms {

    private final int rankSource;
    private final int rankDest;

    /**
     * @param rankSource the rank to receive from, or {@link MPI#PROC_NULL}
     * @param rankDest   the rank to send to, or {@link MPI#PROC_NULL}
     */
    protected ShiftParms(int rankSource, int rankDest) {
        this.rankSource = rankSource;
        this.rankDest = rankDest;
    }

    /** @return the rank to receive from: {@link MPI#PROC_NULL} beyond the edge of a dimension that does not wrap */
    public int getRankSource() {
        return rankSource;
    }

    /** @return the rank to send to: {@link MPI#PROC_NULL} beyond the edge of a dimension that does not wrap */
    public int getRankDest() {
        return rankDest;
    }
}
