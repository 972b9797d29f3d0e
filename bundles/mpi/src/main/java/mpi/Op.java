package mpi;

import org.mpiproxy.mpi.internal.engine.Combiner;
import org.mpiproxy.mpi.internal.engine.Reduction;

/**
 * A reduction operation: the predefined ones of {@link MPI} ({@code MPI.SUM} and the others), all
 * commutative, or a program's own ({@link #Op(UserFunction, boolean)}), which the reductions
 * ({@code reduce}, {@code allReduce}, {@code reduceScatter}, {@code scan}, {@code exScan}, their
 * non-blocking forms, {@link Comm#reduceLocal}) apply to any datatype, derived ones too. One that
 * is not commutative is applied in rank order: the result is {@code a0 op a1 op ... op a(n-1)}.
 */
public final class Op implements Freeable {

    /** The predefined operation, {@code null} for a program's own. */
    final Reduction reduction;
    private final UserFunction function;
    private final boolean commute;
    private boolean freed;

    Op(Reduction reduction) {
        this.reduction = reduction;
        this.function = null;
        this.commute = true;
    }

    /**
     * An operation of the program's own ({@code MPI_OP_CREATE}).
     *
     * @param function computes {@code inOut[i] = in[i] op inOut[i]} ({@link UserFunction})
     * @param commute  whether the operands may be combined in any order
     */
    public Op(UserFunction function, boolean commute) {
        this.reduction = null;
        this.function = function;
        this.commute = commute;
    }

    /** @return whether the operands may be combined in any order ({@code true} for every predefined one) */
    public boolean isCommutative() {
        return commute;
    }

    /** Frees an operation of the program's own: it is null from now on; predefined operations are never freed. */
    @Override
    public void free() throws MPIException {
        if (reduction == null) {
            freed = true;
        }
    }

    /** @return whether it was freed */
    public boolean isNull() {
        return freed;
    }

    /** @return whether it is a program's own */
    boolean isUser() {
        return reduction == null;
    }

    /**
     * @return what the engine applies to elements of {@code type}
     * @throws MPIException {@code MPI.ERR_OP} for a freed or null operation
     */
    Combiner combiner(Datatype type) throws MPIException {
        if (freed) {
            throw new MPIException(MPI.ERR_OP, this + " has been freed");
        }
        if (reduction != null) {
            return reduction;
        }
        if (function == null) {
            throw new MPIException(MPI.ERR_OP, "the operation's function is null");
        }
        return new UserCombiner(function, commute, type, toString());
    }

    @Override
    public String toString() {
        return reduction != null ? "MPI." + reduction
                : "Op(" + (function == null ? "null" : function.getClass().getSimpleName()) + ")";
    }
}
