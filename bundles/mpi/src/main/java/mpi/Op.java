package mpi;

import org.mpiproxy.mpi.internal.engine.Reduction;

/**
 * A reduction operation: the predefined ones of {@link MPI} ({@code MPI.SUM} and the others),
 * all commutative. Operations defined by a program are not offered.
 */
public final class Op implements Freeable {

    final Reduction reduction;

    Op(Reduction reduction) {
        this.reduction = reduction;
    }

    /** @return {@code true}: every predefined operation is commutative */
    public boolean isCommutative() {
        return true;
    }

    /** Predefined operations are never freed. */
    @Override
    public void free() throws MPIException {
    }

    /** @return {@code false} */
    public boolean isNull() {
        return false;
    }

    @Override
    public String toString() {
        return "MPI." + reduction;
    }
}
