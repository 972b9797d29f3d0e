package mpi;

import java.nio.ByteBuffer;

import org.mpiproxy.mpi.internal.engine.Collectives;
import org.mpiproxy.mpi.internal.engine.Communicator;

/** A communicator of one group of ranks ({@code MPI.COMM_WORLD} and those made from it). */
public class Intracomm extends Comm {

    Intracomm(Communicator comm, String name) {
        super(comm, name);
    }

    /** @return a communicator of the same ranks whose messages never meet this one's (collective) */
    @Override
    public Intracomm dup() throws MPIException {
        return call(c -> new Intracomm(c.dup(), getName() + " (dup)"));
    }

    /**
     * Splits the ranks by colour, ordered by key and then by rank (collective).
     *
     * @param colour 0 or more, or {@code MPI.UNDEFINED} for none
     * @return this rank's part, {@code null} for {@code MPI.UNDEFINED}
     */
    public final Intracomm split(int colour, int key) throws MPIException {
        return call(c -> {
            Communicator part = c.split(colour, key);
            return part == null ? null : new Intracomm(part, getName() + " (split " + colour + ")");
        });
    }

    /** Rank i's {@code recvbuf} = the combination of ranks 0..i's {@code sendbuf}. */
    public final void scan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        prefix(sendbuf, recvbuf, count, type, op, true);
    }

    /** In place. */
    public final void scan(Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        scan(recvbuf, recvbuf, count, type, op);
    }

    /** Rank i's {@code recvbuf} = the combination of ranks 0..i-1's {@code sendbuf}; rank 0's is left as it is. */
    public final void exScan(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        prefix(sendbuf, recvbuf, count, type, op, false);
    }

    /** In place. */
    public final void exScan(Object buf, int count, Datatype type, Op op) throws MPIException {
        exScan(buf, buf, count, type, op);
    }

    private void prefix(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, boolean inclusive)
            throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(sendbuf, 0, count, type);
            Buffers.check(recvbuf, 0, count, type);
            ByteBuffer result = heap(mine.capacity());
            if (inclusive) {
                Collectives.scan(c, mine, result, count, type.kind, op.reduction);
            } else {
                Collectives.exScan(c, mine, result, count, type.kind, op.reduction);
            }
            if (inclusive || c.rank() > 0) {
                Buffers.unpack(result, 0, result.capacity(), recvbuf, 0, type);
            }
            return null;
        });
    }
}
