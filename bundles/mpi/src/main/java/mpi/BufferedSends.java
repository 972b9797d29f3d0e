package mpi;

import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Operation;

/**
 * The buffered sends of this process ({@link Comm#bSend}, {@link Comm#ibSend},
 * {@link Comm#bSendInit}) and the buffer the program attached for them ({@link MPI#attachBuffer}).
 * A buffered send copies its elements (every send here does) and returns at once; MPI's rule for
 * the room it takes holds all the same: the sends still under way take their packed size plus
 * {@link MPI#BSEND_OVERHEAD} each, and a send that would take more than the buffer has fails with
 * {@code MPI.ERR_BUFFER}, as one does with no buffer attached. The buffer's bytes themselves are
 * never written. {@link MPI#detachBuffer} waits until every buffered send has left.
 */
final class BufferedSends {

    /** Bytes of the attached buffer a buffered send takes beyond its packed elements. */
    static final int OVERHEAD = 128;

    private static byte[] buffer;
    private static final List<Operation> pending = new ArrayList<>();
    private static final List<Integer> sizes = new ArrayList<>();

    private BufferedSends() {
    }

    static void attach(byte[] b) throws MPIException {
        synchronized (MPI.LOCK) {
            MPI.check();
            if (b == null) {
                throw MPI.raise(new MPIException(MPI.ERR_BUFFER, "attachBuffer: the buffer is null"));
            }
            if (buffer != null) {
                throw MPI.raise(new MPIException(MPI.ERR_BUFFER, "attachBuffer: a buffer of " + buffer.length
                        + " bytes is already attached (MPI.detachBuffer first)"));
            }
            buffer = b;
        }
    }

    /** @return the buffer, once every buffered send has left; {@code null} when none was attached */
    static byte[] detach() throws MPIException {
        synchronized (MPI.LOCK) {
            MPI.check();
            try {
                MPI.COMM_WORLD.engine().awaitAll(pending.toArray(new Operation[0]));
            } catch (CommFailure e) {
                throw MPI.raise(new MPIException(e));
            }
            pending.clear();
            sizes.clear();
            byte[] b = buffer;
            buffer = null;
            return b;
        }
    }

    /**
     * Starts a buffered send (the caller holds the lock).
     *
     * @throws MPIException {@code MPI.ERR_BUFFER} when the attached buffer has no room for it
     */
    static Operation send(Communicator c, Object buf, int count, Datatype type, int dest, int tag)
            throws MPIException {
        if (dest == MPI.PROC_NULL) {
            return c.isend(Comm.message(buf, 0, count, type), type.kind, dest, tag);
        }
        Buffers.check(buf, 0, count, type);
        int taken = 0;
        for (int i = pending.size() - 1; i >= 0; i--) {
            if (pending.get(i).done()) {
                pending.remove(i);
                sizes.remove(i);
            } else {
                taken += sizes.get(i);
            }
        }
        long need = (long) count * type.packedSize + OVERHEAD;
        if (buffer == null) {
            throw new MPIException(MPI.ERR_BUFFER, "bSend of " + need + " bytes (with MPI.BSEND_OVERHEAD) to rank "
                    + dest + ": no buffer is attached (MPI.attachBuffer)");
        }
        if (taken + need > buffer.length) {
            throw new MPIException(MPI.ERR_BUFFER, "bSend of " + need + " bytes (with MPI.BSEND_OVERHEAD) to rank "
                    + dest + ": the attached buffer of " + buffer.length + " bytes has " + (buffer.length - taken)
                    + " left (" + pending.size() + " buffered sends under way)");
        }
        Operation op = c.isend(Comm.message(buf, 0, count, type), type.kind, dest, tag);
        if (!op.done()) {
            pending.add(op);
            sizes.add((int) need);
        }
        return op;
    }
}
