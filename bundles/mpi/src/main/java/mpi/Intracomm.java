package mpi;

import java.nio.Buffer;
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
        return call(c -> inheriting(new Intracomm(c.dup(), getName() + " (dup)")));
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public Intracomm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /**
     * Splits the ranks by colour, ordered by key and then by rank (collective).
     *
     * @param colour 0 or more, or {@code MPI.UNDEFINED} for none
     * @return this rank's part, {@link MPI#COMM_NULL} for {@code MPI.UNDEFINED}
     */
    public final Intracomm split(int colour, int key) throws MPIException {
        return call(c -> made(c.split(colour, key), " (split " + colour + ")"));
    }

    private Intracomm made(Communicator part, String how) throws MPIException {
        return part == null ? MPI.COMM_NULL : inheriting(new Intracomm(part, getName() + how));
    }

    /**
     * A communicator of the ranks of {@code group}, in the group's order (collective: every rank
     * calls it; ranks may pass different groups when those do not overlap, as MPI allows).
     *
     * @param group ranks of this communicator
     * @return the new communicator, {@link MPI#COMM_NULL} where this rank is not in the group
     * @throws MPIException {@code MPI.ERR_GROUP} when the group holds a process outside this communicator
     */
    public final Intracomm create(Group group) throws MPIException {
        return call(c -> {
            if (group == null) {
                throw new MPIException(MPI.ERR_GROUP, "create on " + getName() + ": the group is null");
            }
            int[] members = group.members();
            int self = c.worldRank(c.rank());
            int key = -1;
            int lowest = Integer.MAX_VALUE;
            for (int i = 0; i < members.length; i++) {
                int r = c.rankOf(members[i]);
                if (r < 0) {
                    throw new MPIException(MPI.ERR_GROUP, "create on " + getName() + ": process " + members[i]
                            + " of MPI.COMM_WORLD (rank " + i + " of the group) is not in it");
                }
                lowest = Math.min(lowest, r);
                if (members[i] == self) {
                    key = i;
                }
            }
            // groups that do not overlap differ in their lowest rank: one new communicator each
            return made(c.split(key < 0 ? MPI.UNDEFINED : lowest, key), " (create)");
        });
    }

    /**
     * A Cartesian grid of the first {@code product(dims)} ranks, in their order (collective). The
     * ranks are never reordered: {@code reorder} is accepted and changes nothing, as MPI allows.
     *
     * @param dims    processes along each dimension
     * @param periods per dimension, whether it wraps around
     * @return the grid ({@link CartComm}); a null communicator ({@link #isNull}) for a rank beyond it
     * @throws MPIException {@code MPI.ERR_ARG} for a grid larger than this communicator or arrays of
     *                      different lengths, {@code MPI.ERR_OTHER} for a dimension not positive (as
     *                      Open MPI reports them)
     */
    public final CartComm createCart(int[] dims, boolean[] periods, boolean reorder) throws MPIException {
        return call(c -> CartComm.create(this, c, dims, periods));
    }

    /**
     * A graph of the first {@code index.length} ranks, in their order (collective): node i's
     * neighbours are {@code edges[index[i - 1]] .. edges[index[i] - 1]} (from 0 for node 0).
     * {@code reorder} is accepted and changes nothing.
     *
     * @return the graph ({@link GraphComm}); a null communicator ({@link #isNull}) for a rank
     *         beyond it, and for every rank when {@code index} is empty
     * @throws MPIException {@code MPI.ERR_ARG} for more nodes than ranks, a negative degree, too
     *                      few edges or an edge to no node
     */
    public final GraphComm createGraph(int[] index, int[] edges, boolean reorder) throws MPIException {
        return call(c -> GraphComm.create(this, c, index, edges));
    }

    /**
     * A distributed graph of every rank, in their order (collective): this process gives the
     * edges from {@code sources[i]} to the next {@code degrees[i]} entries of {@code destinations},
     * of those {@code weights}; any process may give any edge. The hints and {@code reorder} are
     * accepted and change nothing.
     *
     * @throws MPIException {@code MPI.ERR_ARG} for a negative degree or weight, a rank neither of
     *                      this communicator nor {@link MPI#PROC_NULL}, or arrays too short
     */
    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, int[] weights, Info info,
                                           boolean reorder) throws MPIException {
        return call(c -> DistGraphs.create(this, c, sources, degrees, destinations, weights, true));
    }

    /** As {@link #createDistGraph(int[], int[], int[], int[], Info, boolean)} without weights. */
    public final GraphComm createDistGraph(int[] sources, int[] degrees, int[] destinations, Info info,
                                           boolean reorder) throws MPIException {
        return call(c -> DistGraphs.create(this, c, sources, degrees, destinations, null, false));
    }

    /**
     * A distributed graph of every rank, in their order (collective): this process gives the
     * edges into it ({@code sources}) and out of it ({@code destinations}) with their weights,
     * which must agree with what the other ends give. The hints and {@code reorder} are
     * accepted and change nothing.
     *
     * @throws MPIException {@code MPI.ERR_ARG} for a negative weight, a rank neither of this
     *                      communicator nor {@link MPI#PROC_NULL}, or weights too few
     */
    public final GraphComm createDistGraphAdjacent(int[] sources, int[] sourceWeights, int[] destinations,
                                                   int[] destWeights, Info info, boolean reorder) throws MPIException {
        return call(c -> DistGraphs.adjacent(this, c, sources, sourceWeights, destinations, destWeights, true));
    }

    /** As {@link #createDistGraphAdjacent(int[], int[], int[], int[], Info, boolean)} without weights. */
    public final GraphComm createDistGraphAdjacent(int[] sources, int[] destinations, Info info, boolean reorder)
            throws MPIException {
        return call(c -> DistGraphs.adjacent(this, c, sources, null, destinations, null, false));
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

    /** Starts {@link #scan(Object, Object, int, Datatype, Op)}. */
    public final Request iScan(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.scan(this, c, sendbuf, recvbuf, count, type, op, true));
    }

    /** Starts the in-place scan. */
    public final Request iScan(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.scan(this, c, buf, buf, count, type, op, true));
    }

    /** Starts {@link #exScan(Object, Object, int, Datatype, Op)}; rank 0's {@code recvbuf} is left as it is. */
    public final Request iExScan(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        return call(c -> NonBlocking.scan(this, c, sendbuf, recvbuf, count, type, op, false));
    }

    /** Starts the in-place exScan. */
    public final Request iExScan(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.scan(this, c, buf, buf, count, type, op, false));
    }

    private void prefix(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, boolean inclusive)
            throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(sendbuf, 0, count, type);
            Buffers.check(recvbuf, 0, count, type);
            ByteBuffer result = heap(mine.capacity());
            if (inclusive) {
                Collectives.scan(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type));
            } else {
                Collectives.exScan(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type));
            }
            if (inclusive || c.rank() > 0) {
                Buffers.unpack(result, 0, result.capacity(), recvbuf, 0, type);
            }
            return null;
        });
    }
}
