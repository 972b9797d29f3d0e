package mpi;

import java.nio.Buffer;
import java.nio.ByteBuffer;

import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.NonBlockingCollectives;
import org.mpiproxy.mpi.internal.engine.Schedule;

/**
 * The non-blocking collectives of {@link Comm} and {@link Intracomm}, between the program's
 * buffers and the engine's schedules: a call checks its arguments and packs the elements it sends
 * (so the send buffer is free again at once), starts the schedule, and returns its request; when
 * the schedule completes, inside whatever call moves it on last, the results are unpacked into
 * the receive buffer, so they are there when {@code test} says so or {@code waitFor} returns.
 * Counts and displacements are copied at the call.
 */
final class NonBlocking {

    private NonBlocking() {
    }

    private static Request start(Comm comm, Schedule s, Runnable onDone) {
        Request r = new Request(comm, s);
        s.start(onDone);
        return r;
    }

    private static Runnable unpack(ByteBuffer from, Buffer to, Datatype type) {
        return () -> Buffers.unpack(from, 0, from.capacity(), to, 0, type);
    }

    private static int bytes(int count, Datatype type) {
        return count * type.packedSize;
    }

    static Request barrier(Comm comm, Communicator c) {
        return start(comm, NonBlockingCollectives.barrier(c), null);
    }

    static Request bcast(Comm comm, Communicator c, Buffer buf, int count, Datatype type, int root)
            throws MPIException {
        Buffers.check(buf, 0, count, type);
        boolean atRoot = c.rank() == root;
        ByteBuffer data = atRoot ? Comm.packed(buf, 0, count, type) : Comm.heap(bytes(count, type));
        Schedule s = NonBlockingCollectives.bcast(c, data, bytes(count, type), type.kind, root);
        return start(comm, s, atRoot ? null : unpack(data, buf, type));
    }

    /** @param sendbuf {@code null} for the in-place form: the root's block is at its place in {@code recvbuf} */
    static Request gather(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                          int recvcount, Datatype recvtype, int root) throws MPIException {
        boolean atRoot = c.rank() == root;
        ByteBuffer mine = sendbuf != null ? Comm.packed(sendbuf, 0, sendcount, sendtype)
                : Comm.packed(recvbuf, atRoot ? root * recvcount : 0, recvcount, recvtype);
        ByteBuffer all = null;
        if (atRoot) {
            Comm.sameBytes("iGather", mine.capacity(), recvcount, recvtype);
            Buffers.check(recvbuf, 0, recvcount * c.size(), recvtype);
            all = Comm.heap(mine.capacity() * c.size());
        }
        Schedule s = NonBlockingCollectives.gather(c, mine, mine.capacity(), all, recvtype.kind, root);
        return start(comm, s, atRoot ? unpack(all, recvbuf, recvtype) : null);
    }

    /**
     * @param sendbuf {@code null} at the root for the in-place form (its block is at its place in
     *                {@code recvbuf})
     * @param recvbuf {@code null} on a rank other than the root
     */
    static Request gatherv(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype,
                           Buffer recvbuf, int[] counts, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        boolean atRoot = c.rank() == root;
        int[][] layout = atRoot ? Comm.layout("iGatherv", recvbuf, counts, displs, recvtype, c.size()) : null;
        int[] at = atRoot ? displs.clone() : null;
        ByteBuffer mine = sendbuf != null || !atRoot ? Comm.packed(sendbuf, 0, sendcount, sendtype)
                : Comm.packed(recvbuf, at[c.rank()], counts[c.rank()], recvtype);
        ByteBuffer all = atRoot ? Comm.heap(layout[2][0]) : null;
        Schedule s = NonBlockingCollectives.gatherv(c, mine, mine.capacity(), all, atRoot ? layout[0] : null,
                atRoot ? layout[1] : null, recvtype.kind, root);
        return start(comm, s, atRoot ? () -> Comm.unpackRegions(all, layout, recvbuf, at, recvtype) : null);
    }

    /** @param recvbuf {@code null} at the root for the in-place form (it keeps its block in {@code sendbuf}) */
    static Request scatter(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype,
                           Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        boolean atRoot = c.rank() == root;
        boolean keep = recvbuf == null && atRoot;
        if (!keep) {
            Buffers.check(recvbuf, 0, recvcount, recvtype);
        }
        ByteBuffer part = Comm.heap(bytes(recvcount, recvtype));
        ByteBuffer all = null;
        if (atRoot) {
            Comm.sameBytes("iScatter", part.capacity(), sendcount, sendtype);
            all = Comm.packed(sendbuf, 0, sendcount * c.size(), sendtype);
        }
        Schedule s = NonBlockingCollectives.scatter(c, all, part.capacity(), part, recvtype.kind, root);
        return start(comm, s, keep ? null : unpack(part, recvbuf, recvtype));
    }

    /**
     * @param sendbuf {@code null} on a rank other than the root
     * @param recvbuf {@code null} at the root for the in-place form (it keeps its block in {@code sendbuf})
     */
    static Request scatterv(Comm comm, Communicator c, Buffer sendbuf, int[] counts, int[] displs, Datatype sendtype,
                            Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        boolean atRoot = c.rank() == root;
        int[][] layout = null;
        ByteBuffer all = null;
        if (atRoot) {
            layout = Comm.layout("iScatterv", sendbuf, counts, displs, sendtype, c.size());
            all = Comm.packRegions(sendbuf, layout, displs, sendtype);
        }
        boolean keep = recvbuf == null && atRoot;
        if (!keep) {
            Buffers.check(recvbuf, 0, recvcount, recvtype);
        }
        ByteBuffer part = Comm.heap(keep ? layout[0][c.rank()] : bytes(recvcount, recvtype));
        Schedule s = NonBlockingCollectives.scatterv(c, all, atRoot ? layout[0] : null, atRoot ? layout[1] : null,
                part, part.capacity(), recvtype.kind, root);
        return start(comm, s, keep ? null : unpack(part, recvbuf, recvtype));
    }

    /** @param sendbuf {@code null} for the in-place form: each rank's block is at its place in {@code recvbuf} */
    static Request allGather(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype,
                             Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        int n = c.size();
        ByteBuffer mine = sendbuf != null ? Comm.packed(sendbuf, 0, sendcount, sendtype)
                : Comm.packed(recvbuf, c.rank() * recvcount, recvcount, recvtype);
        Comm.sameBytes("iAllGather", mine.capacity(), recvcount, recvtype);
        Buffers.check(recvbuf, 0, recvcount * n, recvtype);
        int[][] layout = uniform(n, mine.capacity());
        ByteBuffer all = Comm.heap(mine.capacity() * n);
        Schedule s = NonBlockingCollectives.allGatherv(c, "iAllGather", mine, mine.capacity(), all, layout[0],
                layout[1], recvtype.kind);
        return start(comm, s, unpack(all, recvbuf, recvtype));
    }

    /** @param sendbuf {@code null} for the in-place form: each rank's block is at its displacement in {@code recvbuf} */
    static Request allGatherv(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype,
                              Buffer recvbuf, int[] counts, int[] displs, Datatype recvtype) throws MPIException {
        int[][] layout = Comm.layout("iAllGatherv", recvbuf, counts, displs, recvtype, c.size());
        int[] at = displs.clone();
        ByteBuffer mine = sendbuf != null ? Comm.packed(sendbuf, 0, sendcount, sendtype)
                : Comm.packed(recvbuf, at[c.rank()], counts[c.rank()], recvtype);
        ByteBuffer all = Comm.heap(layout[2][0]);
        Schedule s = NonBlockingCollectives.allGatherv(c, "iAllGatherv", mine, mine.capacity(), all, layout[0],
                layout[1], recvtype.kind);
        return start(comm, s, () -> Comm.unpackRegions(all, layout, recvbuf, at, recvtype));
    }

    static Request allToAll(Comm comm, Communicator c, Buffer sendbuf, int sendcount, Datatype sendtype,
                            Buffer recvbuf, int recvcount, Datatype recvtype) throws MPIException {
        int n = c.size();
        ByteBuffer out = Comm.packed(sendbuf, 0, sendcount * n, sendtype);
        Comm.sameBytes("iAllToAll", bytes(sendcount, sendtype), recvcount, recvtype);
        Buffers.check(recvbuf, 0, recvcount * n, recvtype);
        ByteBuffer in = Comm.heap(out.capacity());
        int[][] layout = uniform(n, bytes(sendcount, sendtype));
        Schedule s = NonBlockingCollectives.allToAllv(c, "iAllToAll", out, layout[0], layout[1], in, layout[0],
                layout[1], recvtype.kind);
        return start(comm, s, unpack(in, recvbuf, recvtype));
    }

    static Request allToAllv(Comm comm, Communicator c, Buffer sendbuf, int[] sendcount, int[] sdispls,
                             Datatype sendtype, Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        int n = c.size();
        int[][] out = Comm.layout("iAllToAllv", sendbuf, sendcount, sdispls, sendtype, n);
        int[][] in = Comm.layout("iAllToAllv", recvbuf, recvcount, rdispls, recvtype, n);
        int[] at = rdispls.clone();
        ByteBuffer send = Comm.packRegions(sendbuf, out, sdispls, sendtype);
        ByteBuffer recv = Comm.heap(in[2][0]);
        Schedule s = NonBlockingCollectives.allToAllv(c, "iAllToAllv", send, out[0], out[1], recv, in[0], in[1],
                recvtype.kind);
        return start(comm, s, () -> Comm.unpackRegions(recv, in, recvbuf, at, recvtype));
    }

    static Request reduce(Comm comm, Communicator c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op,
                          int root) throws MPIException {
        ByteBuffer mine = Comm.packed(sendbuf, 0, count, type);
        boolean atRoot = c.rank() == root;
        if (atRoot) {
            Buffers.check(recvbuf, 0, count, type);
        }
        ByteBuffer result = Comm.heap(mine.capacity());
        Schedule s = NonBlockingCollectives.reduce(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type),
                root);
        return start(comm, s, atRoot ? unpack(result, recvbuf, type) : null);
    }

    static Request allReduce(Comm comm, Communicator c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type,
                             Op op) throws MPIException {
        ByteBuffer mine = Comm.packed(sendbuf, 0, count, type);
        Buffers.check(recvbuf, 0, count, type);
        ByteBuffer result = Comm.heap(mine.capacity());
        Schedule s = NonBlockingCollectives.allReduce(c, mine, result, type.reduced(count, op), type.kind,
                op.combiner(type));
        return start(comm, s, unpack(result, recvbuf, type));
    }

    /** Rank i gets {@code counts[i]} elements of the combination, from the sum of the counts before it. */
    static Request reduceScatter(Comm comm, Communicator c, String call, Buffer sendbuf, Buffer recvbuf, int[] counts,
                                 Datatype type, Op op) throws MPIException {
        int n = c.size();
        if (counts == null || counts.length < n) {
            throw new MPIException(MPI.ERR_ARG, call + ": the counts need " + n + " entries");
        }
        int total = 0;
        int[] bytes = new int[n];
        int[] at = new int[n];
        for (int i = 0; i < n; i++) {
            if (counts[i] < 0) {
                throw new MPIException(MPI.ERR_COUNT, call + ": count " + counts[i] + " for rank " + i + " is negative");
            }
            at[i] = bytes(total, type);
            bytes[i] = bytes(counts[i], type);
            total += counts[i];
        }
        ByteBuffer mine = Comm.packed(sendbuf, 0, total, type);
        Buffers.check(recvbuf, 0, counts[c.rank()], type);
        ByteBuffer part = Comm.heap(bytes[c.rank()]);
        Schedule s = NonBlockingCollectives.reduceScatter(c, call, mine, type.reduced(total, op), bytes, at, part,
                type.kind, op.combiner(type));
        return start(comm, s, unpack(part, recvbuf, type));
    }

    /** As {@link #reduceScatter} with {@code count} elements for every rank. */
    static Request reduceScatterBlock(Comm comm, Communicator c, Buffer sendbuf, Buffer recvbuf, int count,
                                      Datatype type, Op op) throws MPIException {
        int[] counts = new int[c.size()];
        java.util.Arrays.fill(counts, count);
        return reduceScatter(comm, c, "iReduceScatterBlock", sendbuf, recvbuf, counts, type, op);
    }

    static Request scan(Comm comm, Communicator c, Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op,
                        boolean inclusive) throws MPIException {
        ByteBuffer mine = Comm.packed(sendbuf, 0, count, type);
        Buffers.check(recvbuf, 0, count, type);
        ByteBuffer result = Comm.heap(mine.capacity());
        Schedule s = NonBlockingCollectives.scan(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type),
                inclusive);
        return start(comm, s, inclusive || c.rank() > 0 ? unpack(result, recvbuf, type) : null);
    }

    /** @return {counts, displacements} of {@code n} blocks of {@code block} bytes each, in order */
    private static int[][] uniform(int n, int block) {
        int[] counts = new int[n];
        int[] displs = new int[n];
        for (int i = 0; i < n; i++) {
            counts[i] = block;
            displs[i] = i * block;
        }
        return new int[][] {counts, displs};
    }
}
