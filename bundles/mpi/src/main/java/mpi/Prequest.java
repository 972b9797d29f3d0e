package mpi;

import java.nio.Buffer;

import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Operation;

/**
 * A persistent request ({@link Comm#sendInit}, {@link Comm#recvInit} and the other {@code Init}
 * calls): the arguments of a send or receive, fixed once, started as often as the program likes
 * ({@link #start}, {@link #startAll}) and completed each time by a wait or a test, after which it
 * is inactive, not null, until started again. A send takes the buffer's elements as they are when
 * it starts. {@link #free} makes it null.
 */
public final class Prequest extends Request {

    /** Starts one operation of the request. */
    @FunctionalInterface
    interface Starter {
        Operation start(Communicator c) throws MPIException;
    }

    private final Comm comm;
    private final String call;
    private final Starter starter;
    private boolean freed;

    private Prequest(Comm comm, String call, Starter starter) {
        super(comm, null);
        this.comm = comm;
        this.call = call;
        this.starter = starter;
    }

    /** @param mode {@code "send"}, {@code "bSend"}, {@code "sSend"} or {@code "rSend"}: only {@code bSend} differs */
    static Prequest send(Comm comm, String mode, Buffer buf, int count, Datatype type, int dest, int tag)
            throws MPIException {
        return comm.call(c -> {
            Buffers.check(buf, 0, count, type);
            boolean buffered = mode.equals("bSend");
            return new Prequest(comm, mode + "Init", cc -> buffered ? BufferedSends.send(cc, buf, count, type, dest, tag)
                    : cc.isend(Comm.message(buf, 0, count, type), type.kind, dest, tag));
        });
    }

    static Prequest recv(Comm comm, Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        return comm.call(c -> {
            Buffers.check(buf, 0, count, type);
            return new Prequest(comm, "recvInit", cc -> cc.irecv(source, tag, type.kind, count * type.packedSize,
                    Comm.into(buf, type)));
        });
    }

    /**
     * Starts the operation ({@code MPI_START}); complete it with a wait or a test.
     *
     * @throws MPIException {@code MPI.ERR_REQUEST} when it is active or was freed
     */
    public void start() throws MPIException {
        comm.call(c -> {
            if (freed) {
                throw new MPIException(MPI.ERR_REQUEST, "start: the persistent request of " + call + " has been freed");
            }
            if (active()) {
                throw new MPIException(MPI.ERR_REQUEST, "start: the persistent request of " + call
                        + " is active (complete it with a wait or a test first)");
            }
            begin(starter.start(c));
            return null;
        });
    }

    /** Starts every request, in order ({@code MPI_STARTALL}); a {@code null} element is skipped. */
    public static void startAll(Prequest[] requests) throws MPIException {
        for (Prequest r : requests) {
            if (r != null) {
                r.start();
            }
        }
    }

    /** Frees the request: it is null from now on; an operation under way still completes. */
    @Override
    public void free() throws MPIException {
        freed = true;
        super.free();
    }

    @Override
    boolean persistent() {
        return !freed;
    }
}
