package mpi;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Combiner;
import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * A program's operation ({@link Op#Op(UserFunction, boolean)}) on elements of one datatype, as
 * the engine applies it: the packed operands are laid out as {@code count} elements of the
 * datatype in a {@code ByteBuffer} of the machine's byte order ({@code boolean[]} arrays for
 * {@code MPI.BOOLEAN}, as Open MPI passes them), the function combines them, and the result is
 * packed again. Its failure ends the collective with the exception's class.
 */
final class UserCombiner implements Combiner {

    private final UserFunction function;
    private final boolean commute;
    private final Datatype type;
    private final String name;

    UserCombiner(UserFunction function, boolean commute, Datatype type, String name) {
        this.function = function;
        this.commute = commute;
        this.type = type;
        this.name = name;
    }

    @Override
    public void check(Kind kind) {
    }

    @Override
    public void apply(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b) {
        combine(inout, a, in, b, count * kind.size(), inout, a);
    }

    @Override
    public void applyBefore(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b) {
        combine(in, b, inout, a, count * kind.size(), inout, a);
    }

    @Override
    public boolean commutative() {
        return commute;
    }

    @Override
    public int code() {
        return 15;
    }

    /** {@code into = left op right}, {@code bytes} of packed elements each. */
    private void combine(ByteBuffer left, int l, ByteBuffer right, int r, int bytes, ByteBuffer into, int at) {
        int count = type.packedSize == 0 ? 0 : bytes / type.packedSize;
        Object in = laidOut(left, l, bytes, count);
        Object inOut = laidOut(right, r, bytes, count);
        try {
            if (inOut instanceof ByteBuffer buffer) {
                function.call((ByteBuffer) in, buffer, count, type);
            } else {
                function.call(in, inOut, count, type);
            }
        } catch (MPIException e) {
            throw new CommFailure(e.getErrorClass(), name + " failed: " + e.getMessage());
        } catch (RuntimeException e) {
            throw new CommFailure(MPI.ERR_OTHER, name + " failed: " + e);
        }
        Buffers.pack(inOut, 0, count, type, into, at);
    }

    private Object laidOut(ByteBuffer packed, int at, int bytes, int count) {
        Object buf = type.kind == Kind.BOOLEAN && !type.mapped ? new boolean[count]
                : ByteBuffer.allocate(count * type.extentBytes).order(ByteOrder.nativeOrder());
        Buffers.unpack(packed, at, bytes, buf, 0, type);
        return buf;
    }

    @Override
    public String toString() {
        return name;
    }
}
