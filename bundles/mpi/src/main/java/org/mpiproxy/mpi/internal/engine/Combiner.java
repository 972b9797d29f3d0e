package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * The operation of a reduction, over packed little-endian elements: a predefined one
 * ({@link Reduction}) or a program's own. The collectives combine the partial results of runs of
 * consecutive ranks, keeping the lower ranks' on the left, so an operation that is not
 * commutative gives the result in rank order, as MPI defines it (every operation is taken to be
 * associative, as in MPI).
 */
public interface Combiner {

    /** @throws CommFailure ({@code MPI_ERR_OP}) when the operation does not apply to {@code kind} */
    void check(Kind kind);

    /**
     * {@code inout = inout op in}: {@code in} holds the later ranks' elements.
     *
     * @param count elements of {@code kind}
     */
    void apply(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b);

    /**
     * {@code inout = in op inout}: {@code in} holds the earlier ranks' elements. As {@link #apply}
     * for a commutative operation.
     */
    default void applyBefore(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b) {
        apply(kind, count, inout, a, in, b);
    }

    /** @return whether the order of the operands does not matter */
    boolean commutative();

    /** @return 1 to 15, the operation's code in the tags of a collective's messages */
    int code();
}
