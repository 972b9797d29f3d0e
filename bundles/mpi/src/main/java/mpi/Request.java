package mpi;

import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Operation;

/**
 * A non-blocking send, receive or collective ({@link Comm#iSend}, {@link Comm#iRecv},
 * {@link Comm#iAllReduce} and the other {@code i} collectives): complete it with
 * {@link #waitFor}, {@link #test} or the calls over arrays. A completed request is null
 * ({@link #isNull}), as {@link MPI#REQUEST_NULL} is; waiting for a null request returns at once.
 * A failure goes to the error handler of the request's communicator.
 */
public class Request implements Freeable {

    private final Comm comm;
    private Operation op;
    private Status status;

    Request(Comm comm, Operation op) {
        this.comm = comm;
        this.op = op;
    }

    /** Forgets the request; an unfinished send still goes out. */
    @Override
    public void free() throws MPIException {
        op = null;
    }

    /**
     * Cancels a receive that has not matched yet, or a send none of whose bytes has left this
     * process; the request still completes (wait for it), and its status tells whether the
     * cancel took effect ({@link Status#isCancelled}): a send already on its way is not cancelled.
     */
    public final void cancel() throws MPIException {
        if (op != null) {
            synchronized (MPI.LOCK) {
                comm.engine().cancel(op);
            }
        }
    }

    /** @return whether the request has completed and was waited for, or was freed (a persistent one: freed) */
    public final boolean isNull() {
        return op == null && !persistent();
    }

    /** @return whether it stays after it completes, to be started again: a {@link Prequest} not freed */
    boolean persistent() {
        return false;
    }

    /** @return whether an operation is under way, not yet completed by a wait or a test */
    final boolean active() {
        return op != null;
    }

    /** Makes a persistent request active with its new operation ({@link Prequest#start}). */
    final void begin(Operation next) {
        op = next;
        status = null;
    }

    /** Waits until the operation completes. */
    public final Status waitStatus() throws MPIException {
        if (op == null) {
            return status != null ? status : empty();
        }
        synchronized (MPI.LOCK) {
            try {
                comm.engine().await(op);
            } catch (CommFailure e) {
                throw comm.raise(new MPIException(e));
            }
        }
        return complete();
    }

    /** Waits until the operation completes. */
    public final void waitFor() throws MPIException {
        waitStatus();
    }

    /** @return the status when the operation has completed, else {@code null} */
    public final Status testStatus() throws MPIException {
        if (op == null) {
            return status != null ? status : empty();
        }
        boolean done;
        synchronized (MPI.LOCK) {
            try {
                done = comm.engine().test(op);
            } catch (CommFailure e) {
                throw comm.raise(new MPIException(e));
            }
        }
        return done ? complete() : null;
    }

    /** @return the status when the operation has completed, else {@code null}; the request stays */
    public final Status getStatus() throws MPIException {
        if (op == null) {
            return status != null ? status : empty();
        }
        return op.done() ? comm.status(op) : null;
    }

    /** @return whether the operation has completed */
    public final boolean test() throws MPIException {
        return testStatus() != null;
    }

    private Status complete() throws MPIException {
        Operation done = op;
        op = null;
        status = comm.status(done);
        if (done.error() != 0) {
            throw comm.raise(new MPIException(ErrorClasses.of(done.error()), done.errorText()));
        }
        return status;
    }

    private static Status empty() {
        return new Status(MPI.ANY_SOURCE, MPI.ANY_TAG, MPI.SUCCESS, false, 0, null);
    }

    /** Waits until one request completes. */
    public static Status waitAnyStatus(Request[] requests) throws MPIException {
        int i = waitAny(requests);
        if (i == MPI.UNDEFINED) {
            return null;
        }
        Status s = requests[i].status;
        s.index = i;
        return s;
    }

    /** @return the index of a completed request, {@code MPI.UNDEFINED} when every one is null */
    public static int waitAny(Request[] requests) throws MPIException {
        Operation[] ops = operations(requests);
        int i;
        synchronized (MPI.LOCK) {
            Comm c = anyComm(requests);
            if (c == null) {
                return MPI.UNDEFINED;
            }
            try {
                i = c.engine().awaitAny(ops);
            } catch (CommFailure e) {
                throw c.raise(new MPIException(e));
            }
        }
        if (i < 0) {
            return MPI.UNDEFINED;
        }
        requests[i].complete();
        return i;
    }

    /** @return the status of a completed request, or {@code null} when none has completed */
    public static Status testAnyStatus(Request[] requests) throws MPIException {
        int i = testAny(requests);
        if (i == MPI.UNDEFINED) {
            return null;
        }
        Status s = requests[i].status;
        s.index = i;
        return s;
    }

    /** @return the index of a completed request, {@code MPI.UNDEFINED} when none has completed */
    public static int testAny(Request[] requests) throws MPIException {
        Comm c = anyComm(requests);
        if (c == null) {
            return MPI.UNDEFINED;
        }
        synchronized (MPI.LOCK) {
            c.engine().progress();
        }
        for (int i = 0; i < requests.length; i++) {
            Request r = requests[i];
            if (r != null && r.op != null && r.op.done()) {
                r.complete();
                return i;
            }
        }
        return MPI.UNDEFINED;
    }

    /** Waits until every request completes. */
    public static Status[] waitAllStatus(Request[] requests) throws MPIException {
        waitAll(requests);
        Status[] statuses = new Status[requests.length];
        for (int i = 0; i < requests.length; i++) {
            statuses[i] = requests[i] == null ? empty() : requests[i].status != null ? requests[i].status : empty();
        }
        return statuses;
    }

    /** Waits until every request completes; the first that failed is thrown after all completed. */
    public static void waitAll(Request[] requests) throws MPIException {
        Comm c = anyComm(requests);
        if (c == null) {
            return;
        }
        synchronized (MPI.LOCK) {
            try {
                c.engine().awaitAll(operations(requests));
            } catch (CommFailure e) {
                throw c.raise(new MPIException(e));
            }
        }
        MPIException first = null;
        for (Request r : requests) {
            if (r != null && r.op != null) {
                try {
                    r.complete();
                } catch (MPIException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** @return the statuses when every request has completed, else {@code null} */
    public static Status[] testAllStatus(Request[] requests) throws MPIException {
        return testAll(requests) ? waitAllStatus(requests) : null;
    }

    /** @return whether every request has completed (then they are all completed) */
    public static boolean testAll(Request[] requests) throws MPIException {
        Comm c = anyComm(requests);
        if (c == null) {
            return true;
        }
        synchronized (MPI.LOCK) {
            c.engine().progress();
        }
        for (Request r : requests) {
            if (r != null && r.op != null && !r.op.done()) {
                return false;
            }
        }
        waitAll(requests);
        return true;
    }

    private static Operation[] operations(Request[] requests) {
        Operation[] ops = new Operation[requests.length];
        for (int i = 0; i < requests.length; i++) {
            ops[i] = requests[i] == null ? null : requests[i].op;
        }
        return ops;
    }

    private static Comm anyComm(Request[] requests) {
        for (Request r : requests) {
            if (r != null && r.op != null) {
                return r.comm;
            }
        }
        return null;
    }
}
