package org.mpiproxy.mpi.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * What rank 0 of a v1 job ({@link UdpHostTransport}) knows about one rank: its EXEC and
 * TERMINATE replies, the RECV it waits for, and the elements of RECV replies not yet handed to
 * the program, in order. Not thread-safe.
 */
final class V1Rank {
    int execResult = -1;
    String execReason = "";
    /** Elements asked for by the RECV out, not received yet; 0 when none is out. */
    long outstanding;
    private int recvError;
    private String recvReason = "";
    boolean terminated;
    int terminateResult;
    int exitStatus = -1;
    private final ArrayDeque<Received> received = new ArrayDeque<>();

    /** Elements of one RECV reply not yet handed to the program. */
    private static final class Received {
        final int datatype;
        final byte[] data;
        int position;

        Received(int datatype, byte[] data) {
            this.datatype = datatype;
            this.data = data;
        }
    }

    /** Keeps the {@code count} elements of one RECV reply until the program receives them. */
    void keep(int datatype, byte[] data, long count) {
        received.add(new Received(datatype, data));
        outstanding = Math.max(0, outstanding - count);
    }

    /** The proxy refused the RECV out: the next {@link #throwRecvError} throws its error. */
    void recvFailed(int result, String reason) {
        recvError = result;
        recvReason = reason;
        outstanding = 0;
    }

    /**
     * Throws the refusal of a RECV from this rank (once), if there was one.
     *
     * @param source the rank
     * @param node   its node
     * @param got    elements received by the call so far
     * @param count  elements the call receives
     */
    void throwRecvError(int source, HostfileEntry node, int got, int count) {
        if (recvError != 0) {
            int error = recvError;
            String reason = recvReason;
            recvError = 0;
            throw new MpiException(error, "RECV from rank " + source + " on " + node
                    + " failed after " + got + " of " + count + " elements" + (reason.isEmpty() ? "" : ": " + reason));
        }
    }

    /**
     * Hands kept elements of this rank (rank {@code source}) to the program.
     *
     * @return the elements taken, at most {@code max}
     * @throws MpiException {@code MPI_ERR_TYPE} when the next kept elements are of another datatype
     */
    int take(int source, int datatype, ByteBuffer dst, int offset, int max) {
        int size = MpiDatatype.sizeOf(datatype);
        int taken = 0;
        while (taken < max && !received.isEmpty()) {
            Received r = received.peek();
            if (r.datatype != datatype) {
                throw new MpiException(MpiErrors.ERR_TYPE, "rank " + source + " sent " + typeName(r.datatype)
                        + " elements, expected " + typeName(datatype));
            }
            int k = Math.min((r.data.length - r.position) / size, max - taken);
            dst.put(offset + taken * size, r.data, r.position, k * size);
            r.position += k * size;
            taken += k;
            if (r.position == r.data.length) {
                received.poll();
            }
        }
        return taken;
    }

    private static String typeName(int datatype) {
        MpiDatatype t = MpiDatatype.ofCode(datatype);
        return t == null ? "datatype " + datatype : "MPI_" + t.name();
    }
}
