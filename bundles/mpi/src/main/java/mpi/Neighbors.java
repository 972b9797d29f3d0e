package mpi;

import java.nio.ByteBuffer;

import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.NonBlockingCollectives;
import org.mpiproxy.mpi.internal.engine.Schedule;

/**
 * The neighbourhood collectives of {@link Comm} ({@code neighborAllGather}, {@code neighborAllToAll},
 * their {@code v} forms and their non-blocking {@code i} forms): one exchange along the edges of
 * the communicator's topology, a {@link Schedule} of one round, waited for by the blocking forms
 * and returned as a request by the others. A rank receives from its sources into the blocks of
 * the receive buffer in their order and sends to its destinations: a Cartesian grid's are, for
 * each dimension, the rank below and the rank above ({@link CartComm#shift}{@code (d, 1)}), a
 * graph's the node's neighbours for both, a distributed graph's its edges in and out. A
 * {@link MPI#PROC_NULL} neighbour (the edge of a grid that does not wrap) is skipped and its block
 * left as it is. On a grid the block a rank sends up arrives in the block its upper neighbour
 * receives from below, even when both neighbours are one rank (a periodic dimension of 2): sends
 * are posted up before down, receives from below before above.
 */
final class Neighbors {

    private Neighbors() {
    }

    /** Every destination gets this rank's {@code sendcount} elements; block j of {@code recvbuf} those of source j. */
    static Request allGather(Comm comm, Communicator c, String call, boolean blocking, Object sendbuf, int sendcount,
                             Datatype sendtype, Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        int[][] around = of(comm, c, call, sendtype, recvtype);
        ByteBuffer mine = Comm.packed(sendbuf, 0, sendcount, sendtype);
        Buffers.check(recvbuf, 0, recvcount * around[0].length, recvtype);
        Comm.sameBytes(call, mine.capacity(), recvcount, recvtype);
        return run(comm, c, call, blocking, around, mine, same(around[1].length, mine.capacity()),
                blocks(around[0].length, recvcount, recvtype), recvbuf, recvtype);
    }

    /** As {@link #allGather}, source j's elements at {@code displs[j]}, {@code recvcount[j]} of them. */
    static Request allGatherv(Comm comm, Communicator c, String call, boolean blocking, Object sendbuf,
                              int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount, int[] displs,
                              Datatype recvtype) throws MPIException {
        int[][] around = of(comm, c, call, sendtype, recvtype);
        ByteBuffer mine = Comm.packed(sendbuf, 0, sendcount, sendtype);
        int[][] in = Comm.layout(call, recvbuf, recvcount, displs, recvtype, around[0].length);
        return run(comm, c, call, blocking, around, mine, same(around[1].length, mine.capacity()),
                new int[][] {in[0], in[1], in[2], displs.clone()}, recvbuf, recvtype);
    }

    /** Block i of {@code sendbuf} to destination i; block j of {@code recvbuf} from source j. */
    static Request allToAll(Comm comm, Communicator c, String call, boolean blocking, Object sendbuf, int sendcount,
                            Datatype sendtype, Object recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        int[][] around = of(comm, c, call, sendtype, recvtype);
        ByteBuffer out = Comm.packed(sendbuf, 0, sendcount * around[1].length, sendtype);
        Buffers.check(recvbuf, 0, recvcount * around[0].length, recvtype);
        Comm.sameBytes(call, sendcount * sendtype.packedSize, recvcount, recvtype);
        int[][] sends = blocks(around[1].length, sendcount, sendtype);
        return run(comm, c, call, blocking, around, out, new int[][] {sends[0], sends[1]},
                blocks(around[0].length, recvcount, recvtype), recvbuf, recvtype);
    }

    /** {@code sendcount[i]} elements at {@code sdispls[i]} to destination i; source j's at {@code rdispls[j]}. */
    static Request allToAllv(Comm comm, Communicator c, String call, boolean blocking, Object sendbuf,
                             int[] sendcount, int[] sdispls, Datatype sendtype, Object recvbuf, int[] recvcount,
                             int[] rdispls, Datatype recvtype) throws MPIException {
        int[][] around = of(comm, c, call, sendtype, recvtype);
        int[][] out = Comm.layout(call, sendbuf, sendcount, sdispls, sendtype, around[1].length);
        int[][] in = Comm.layout(call, recvbuf, recvcount, rdispls, recvtype, around[0].length);
        ByteBuffer send = Comm.packRegions(sendbuf, out, sdispls, sendtype);
        return run(comm, c, call, blocking, around, send, new int[][] {out[0], out[1]},
                new int[][] {in[0], in[1], in[2], rdispls.clone()}, recvbuf, recvtype);
    }

    /**
     * @return the sources and the destinations, in the order of the blocks; on a grid the same
     *         list for both
     * @throws MPIException {@code MPI.ERR_TOPOLOGY} for a communicator without a topology,
     *                      {@code MPI.ERR_TYPE} for no datatype (checked in Open MPI's order)
     */
    private static int[][] of(Comm comm, Communicator c, String call, Datatype sendtype, Datatype recvtype)
            throws MPIException {
        int[][] around;
        if (comm instanceof CartComm cart) {
            int[] both = cart.neighbours(c);
            around = new int[][] {both, both};
        } else if (comm instanceof GraphComm graph) {
            around = graph.neighbours(c);
        } else {
            throw new MPIException(MPI.ERR_TOPOLOGY, call + " on " + comm.getName() + ": the communicator has no "
                    + "topology (createCart, createGraph or createDistGraph make one)");
        }
        if (sendtype == null || recvtype == null) {
            throw new MPIException(MPI.ERR_TYPE, call + " on " + comm.getName() + ": the "
                    + (sendtype == null ? "send" : "receive") + " datatype is null");
        }
        return around;
    }

    /** @return {bytes, byte displacements} of {@code n} sends of one block of {@code bytes} at 0 */
    private static int[][] same(int n, int bytes) {
        int[] counts = new int[n];
        java.util.Arrays.fill(counts, bytes);
        return new int[][] {counts, new int[n]};
    }

    /** @return {bytes, byte displacements, {total}, element displacements} of {@code n} blocks of {@code count} */
    private static int[][] blocks(int n, int count, Datatype type) {
        int[] bytes = new int[n];
        int[] at = new int[n];
        int[] displs = new int[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = count * type.packedSize;
            at[i] = i * bytes[i];
            displs[i] = i * count;
        }
        return new int[][] {bytes, at, {n * count * type.packedSize}, displs};
    }

    /**
     * Posts the exchange; the blocks from sources that are not {@link MPI#PROC_NULL} are unpacked
     * into {@code recvbuf} when it completes.
     *
     * @param sends {bytes, byte displacements in {@code send}} per destination
     * @param recvs {bytes, byte displacements, {total bytes}, element displacements in
     *              {@code recvbuf}} per source
     * @return the request, or {@code null} once a blocking call has completed
     */
    private static Request run(Comm comm, Communicator c, String call, boolean blocking, int[][] around,
                               ByteBuffer send, int[][] sends, int[][] recvs, Object recvbuf, Datatype recvtype)
            throws MPIException {
        int[] from = around[0];
        int[] to = around[1];
        int[] order = new int[to.length];
        boolean grid = comm instanceof CartComm;
        for (int k = 0; k < order.length; k++) {
            // a grid sends up (+d, block 2d + 1) before down (-d, block 2d)
            order[k] = grid ? k ^ 1 : k;
        }
        int[] peers = new int[to.length];
        int[] bytes = new int[to.length];
        int[] at = new int[to.length];
        for (int k = 0; k < order.length; k++) {
            peers[k] = to[order[k]];
            bytes[k] = sends[0][order[k]];
            at[k] = sends[1][order[k]];
        }
        ByteBuffer recv = Comm.heap(recvs[2][0]);
        Schedule s = NonBlockingCollectives.neighbours(c, call, peers, send, bytes, at, from, recv, recvs[0], recvs[1],
                recvtype.kind);
        Runnable unpack = () -> {
            for (int j = 0; j < from.length; j++) {
                if (from[j] != MPI.PROC_NULL) {
                    Buffers.unpack(recv, recvs[1][j], recvs[0][j], recvbuf, recvs[3][j], recvtype);
                }
            }
        };
        if (!blocking) {
            Request r = new Request(comm, s);
            s.start(unpack);
            return r;
        }
        s.start(unpack);
        c.engine().await(s);
        if (s.error() != 0) {
            throw new MPIException(ErrorClasses.of(s.error()), s.errorText());
        }
        return null;
    }
}
