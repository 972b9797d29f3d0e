package mpi;

import java.nio.Buffer;

import org.mpiproxy.mpi.internal.engine.Arrived;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Operation;

/**
 * A matched message ({@code MPI_Message}): {@link #mProbe} or {@link #imProbe} finds a message
 * and takes it out of the matching, so that no other receive or probe (of this thread or
 * another) gets it; {@link #mRecv} or {@link #imRecv} then receives exactly that message. A new
 * one is null ({@code MPI_MESSAGE_NULL}); a probe from {@code MPI.PROC_NULL} gives the no-process
 * message ({@link #isNoProc}), whose receive completes at once, empty. After its receive the
 * message is null again, and may probe anew.
 */
public final class Message {

    private Comm comm;
    private Arrived arrived;
    private boolean noProc;

    /** A null message ({@code MPI_MESSAGE_NULL}). */
    public Message() {
    }

    /** @return whether it holds no message: new, or received */
    public boolean isNull() {
        return arrived == null && !noProc;
    }

    /** @return whether it is the message of a probe from {@code MPI.PROC_NULL} ({@code MPI_MESSAGE_NO_PROC}) */
    public boolean isNoProc() {
        return noProc;
    }

    /** Waits for a matching message and takes it ({@code MPI_MPROBE}). */
    public Status mProbe(int source, int tag, Comm comm) throws MPIException {
        return comm.call(c -> source == MPI.PROC_NULL ? none(comm) : matched(comm, c, c.probe(source, tag)));
    }

    /** @return the status of a matching message, now taken, or {@code null} when none is there ({@code MPI_IMPROBE}) */
    public Status imProbe(int source, int tag, Comm comm) throws MPIException {
        return comm.call(c -> {
            if (source == MPI.PROC_NULL) {
                return none(comm);
            }
            Arrived a = c.iprobe(source, tag);
            return a == null ? null : matched(comm, c, a);
        });
    }

    private Status matched(Comm on, Communicator c, Arrived a) {
        c.engine().claim(a);
        comm = on;
        arrived = a;
        noProc = false;
        return new Status(c.rankOf(a.source()), a.tag(), MPI.SUCCESS, false, a.bytes(), a.kind());
    }

    private Status none(Comm on) {
        comm = on;
        arrived = null;
        noProc = true;
        return empty();
    }

    private static Status empty() {
        return new Status(MPI.PROC_NULL, MPI.ANY_TAG, MPI.SUCCESS, false, 0, null);
    }

    /**
     * Receives the message ({@code MPI_MRECV}) into at most {@code count} elements.
     *
     * @throws MPIException {@code MPI.ERR_REQUEST} on a null message; {@code MPI.ERR_TRUNCATE} when it is longer
     */
    public Status mRecv(Object buf, int count, Datatype type) throws MPIException {
        Comm on = matchedComm("mRecv");
        return on.call(c -> {
            Operation.Recv r = receive(c, buf, count, type);
            if (r == null) {
                return empty();
            }
            if (r.error() != 0) {
                throw new MPIException(ErrorClasses.of(r.error()), r.errorText());
            }
            return on.status(r);
        });
    }

    /** Receives the message ({@code MPI_IMRECV}): the request is complete at once. */
    public Request imRecv(Buffer buf, int count, Datatype type) throws MPIException {
        Comm on = matchedComm("imRecv");
        return on.call(c -> {
            Operation.Recv r = receive(c, buf, count, type);
            return r == null ? MPI.REQUEST_NULL : new Request(on, r);
        });
    }

    private Comm matchedComm(String call) throws MPIException {
        if (isNull()) {
            MPI.check();
            throw MPI.raise(new MPIException(MPI.ERR_REQUEST, call + ": the message is null (mProbe or imProbe first)"));
        }
        return comm;
    }

    /** @return the receive, {@code null} for the no-process message; the message is null afterwards */
    private Operation.Recv receive(Communicator c, Object buf, int count, Datatype type) throws MPIException {
        if (noProc) {
            noProc = false;
            return null;
        }
        Buffers.check(buf, 0, count, type);
        Arrived a = arrived;
        arrived = null;
        return c.engine().receive(a, type.kind, count * type.packedSize, Comm.into(buf, type));
    }
}
