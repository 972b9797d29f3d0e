package mpi;

import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.mpi.internal.engine.Arrived;
import org.mpiproxy.mpi.internal.engine.Collectives;
import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Engine;
import org.mpiproxy.mpi.internal.engine.Operation;

/**
 * A communicator: point-to-point messages between its ranks and the collectives over them.
 * Buffers are Java arrays or NIO buffers of the datatype's elements ({@link Datatype}); the
 * non-blocking calls take NIO buffers, as in Open MPI (heap or direct). A send returns once its
 * data is on its way (copied); {@code sSend} and {@code rSend} are sends, {@code bSend} one that
 * also takes room in the buffer attached with {@link MPI#attachBuffer} until it has left. The
 * non-blocking collectives ({@code iBarrier}, {@code iBcast}, {@code iAllReduce} and the others)
 * return a {@link Request} at once and move on in every later call of the program. The
 * neighbourhood collectives ({@code neighborAllGather} and the others, blocking and not) run
 * along the edges of a {@link CartComm}'s or {@link GraphComm}'s topology ({@code Neighbors}). A send
 * or receive of no elements needs no buffer ({@code null}). A failed call goes to the
 * communicator's error handler ({@link #setErrhandler}; {@link MPI#ERRORS_ARE_FATAL} unless set).
 *
 * <p>Longer than 500 lines for a reason: it is the public class of Open MPI's API that carries
 * most of its methods (every send, receive and collective with its array and buffer forms), each
 * a few lines handing the call to the engine, and the error handler every call goes through;
 * splitting it would move the API, not the logic.
 */
public class Comm implements Freeable {

    private volatile Communicator comm;
    private String name;
    private volatile Errhandler errhandler = Errhandler.FATAL;
    private final boolean bornNull;
    /** Its attributes ({@link #setAttr}): copied by {@code dup}, deleted by {@link #free}. */
    private final Attributes attributes = new Attributes();

    Comm(Communicator comm, String name) {
        this.comm = comm;
        this.name = name;
        this.bornNull = comm == null;
    }

    void attach(Communicator c) {
        this.comm = c;
    }

    /** A piece of a call that holds the lock. */
    @FunctionalInterface
    interface Body<T> {
        T run(Communicator c) throws MPIException;
    }

    /** Runs a call under the lock; its failure goes to this communicator's error handler. */
    final <T> T call(Body<T> body) throws MPIException {
        synchronized (MPI.LOCK) {
            Communicator c = live();
            try {
                return body.run(c);
            } catch (CommFailure e) {
                throw raise(new MPIException(e));
            } catch (MPIException e) {
                throw raise(e);
            }
        }
    }

    /** @return the communicator when MPI runs and it is not null; else MPI.COMM_WORLD's handler decides */
    private Communicator live() throws MPIException {
        MPI.check();
        Communicator c = comm;
        if (c == null) {
            throw MPI.raise(new MPIException(MPI.ERR_COMM, bornNull ? "the call is on MPI.COMM_NULL"
                    : name + " has been freed"));
        }
        return c;
    }

    /**
     * Hands a failed call's error to this communicator's handler: under
     * {@link MPI#ERRORS_ARE_FATAL} the job ends here.
     *
     * @return the exception to throw
     */
    final MPIException raise(MPIException e) {
        return errhandler.handle(name, e);
    }

    /** Gives a new communicator this one's error handler, as MPI's constructors do, and its attributes to a dup. */
    final <C extends Comm> C inheriting(C made) {
        ((Comm) made).errhandler = errhandler;
        Communicator c = ((Comm) made).comm;
        if (c != null && c.original() != null && c.original() == comm) {
            ((Comm) made).attributes.copy(attributes);
        }
        return made;
    }

    final Engine engine() {
        return comm.engine();
    }

    final Communicator communicator() {
        return comm;
    }

    final Status status(Operation op) {
        int source = op.source();
        if (op instanceof Operation.Recv && source >= 0) {
            source = comm.rankOf(source);
        }
        return new Status(op instanceof Operation.Recv ? source : MPI.ANY_SOURCE, op.tag(), op.error(),
                op.cancelled(), op.bytes(), op.kind());
    }

    /** @return a communicator of the same ranks whose messages never meet this one's (collective) */
    public Comm dup() throws MPIException {
        return call(c -> inheriting(new Comm(c.dup(), name + " (dup)")));
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public Comm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /** @return the group of this communicator's ranks, in rank order */
    public final Group getGroup() throws MPIException {
        return call(c -> new Group(members(c)));
    }

    /** @return the world ranks of {@code c}'s ranks, in rank order */
    static int[] members(Communicator c) {
        int[] members = new int[c.size()];
        for (int r = 0; r < members.length; r++) {
            members[r] = c.worldRank(r);
        }
        return members;
    }

    /**
     * Compares two communicators (local).
     *
     * @return {@code MPI.IDENT} for one communicator, {@code MPI.CONGRUENT} for two of the same ranks
     *         in the same order ({@link #dup}), {@code MPI.SIMILAR} for the same ranks in another
     *         order, {@code MPI.UNEQUAL} otherwise
     */
    public static int compare(Comm comm1, Comm comm2) throws MPIException {
        synchronized (MPI.LOCK) {
            if (comm1 == null || comm2 == null) {
                MPI.check();
                throw MPI.raise(new MPIException(MPI.ERR_COMM, "compare: a communicator is null"));
            }
            Communicator a = comm1.live();
            Communicator b = comm2.live();
            if (a == b) {
                return MPI.IDENT;
            }
            int groups = Group.compare(members(a), members(b));
            return groups == MPI.IDENT ? MPI.CONGRUENT : groups;
        }
    }

    /** Gives hints for this communicator; this library takes none, so they change nothing. */
    public final void setInfo(Info info) throws MPIException {
        call(c -> {
            if (info == null || info.isNull()) {
                throw new MPIException(MPI.ERR_INFO, "setInfo on " + name + ": the info object is null");
            }
            return null;
        });
    }

    /** @return a new info object of the hints this communicator uses: none */
    public final Info getInfo() throws MPIException {
        return call(c -> new Info(new java.util.LinkedHashMap<>()));
    }

    /** @return {@code false}: every communicator here is an intra-communicator */
    public final boolean isInter() throws MPIException {
        return call(c -> false);
    }

    /** @param errhandler what a failed call on this communicator does from now on */
    public final void setErrhandler(Errhandler errhandler) throws MPIException {
        synchronized (MPI.LOCK) {
            live();
            if (errhandler == null) {
                throw raise(new MPIException(MPI.ERR_ARG, "setErrhandler on " + name + ": the handler is null"));
            }
            this.errhandler = errhandler;
        }
    }

    /** @return what a failed call on this communicator does ({@link MPI#ERRORS_ARE_FATAL} unless set) */
    public final Errhandler getErrhandler() throws MPIException {
        synchronized (MPI.LOCK) {
            live();
            return errhandler;
        }
    }

    /**
     * Hands {@code errorCode} to this communicator's handler as a failed call would: under
     * {@link MPI#ERRORS_ARE_FATAL} the job ends; under {@link MPI#ERRORS_RETURN} the call returns
     * (as {@code MPI_Comm_call_errhandler} does).
     */
    public final void callErrhandler(int errorCode) throws MPIException {
        synchronized (MPI.LOCK) {
            live();
            raise(new MPIException(errorCode, "callErrhandler(" + errorCode + ") on " + name));
        }
    }

    /**
     * @return {@link MPI#CART} for a Cartesian communicator ({@link CartComm}), {@link MPI#GRAPH}
     *         or {@link MPI#DIST_GRAPH} for a graph ({@link GraphComm}), {@link MPI#UNDEFINED} for
     *         one without a topology
     */
    public final int getTopology() throws MPIException {
        return call(c -> topology());
    }

    /** @return the kind of topology attached: none here */
    int topology() {
        return MPI.UNDEFINED;
    }

    /** @return ranks in the communicator */
    public final int getSize() throws MPIException {
        return call(Communicator::size);
    }

    /** @return this process's rank in it */
    public final int getRank() throws MPIException {
        return call(Communicator::rank);
    }

    /** Forgets the communicator: it becomes null ({@link #isNull}), and later calls on it fail. */
    @Override
    public final void free() throws MPIException {
        synchronized (MPI.LOCK) {
            live();
            if (this == MPI.COMM_WORLD || this == MPI.COMM_SELF) {
                throw MPI.raise(new MPIException(MPI.ERR_COMM, name + " cannot be freed"));
            }
            attributes.clear();
            comm = null;
        }
    }

    /** @return whether it was freed or is {@link MPI#COMM_NULL} */
    public final boolean isNull() {
        return comm == null;
    }

    /** @param name the communicator's name in messages */
    public final void setName(String name) throws MPIException {
        this.name = name;
    }

    /** @return its name */
    public final String getName() throws MPIException {
        return name;
    }

    // ---- point-to-point ----

    static ByteBuffer message(Object buf, int offset, int count, Datatype type) throws MPIException {
        if (buf instanceof Packed p) {
            ByteBuffer m = Engine.newMessage(p.data.capacity());
            m.put(m.position(), p.data, 0, p.data.capacity());
            return m;
        }
        Buffers.check(buf, offset, count, type);
        ByteBuffer m = Engine.newMessage(count * type.packedSize);
        Buffers.pack(buf, offset, count, type, m, m.position());
        return m;
    }

    static Operation.Unpacker into(Object buf, Datatype type) {
        return (src, at, bytes) -> Buffers.unpack(src, at, bytes, buf, 0, type);
    }

    /** Sends {@code count} elements to rank {@code dest}. */
    public final void send(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        call(c -> {
            c.engine().await(c.isend(message(buf, 0, count, type), type.kind, dest, tag));
            return null;
        });
    }

    /** Receives a message of at most {@code count} elements. */
    public final Status recv(Object buf, int count, Datatype type, int source, int tag) throws MPIException {
        return call(c -> {
            Buffers.check(buf, 0, count, type);
            Operation.Recv r = c.irecv(source, tag, type.kind, count * type.packedSize, into(buf, type));
            c.engine().await(r);
            return finished(r);
        });
    }

    private Status finished(Operation op) throws MPIException {
        if (op.error() != 0) {
            throw new MPIException(ErrorClasses.of(op.error()), op.errorText());
        }
        return status(op);
    }

    /** Sends and receives at once: neither waits for the other. */
    public final Status sendRecv(Object sendbuf, int sendcount, Datatype sendtype, int dest, int sendtag,
                                 Object recvbuf, int recvcount, Datatype recvtype, int source, int recvtag)
            throws MPIException {
        return call(c -> {
            Buffers.check(recvbuf, 0, recvcount, recvtype);
            Operation.Send s = c.isend(message(sendbuf, 0, sendcount, sendtype), sendtype.kind, dest, sendtag);
            Operation.Recv r = c.irecv(source, recvtag, recvtype.kind, recvcount * recvtype.packedSize,
                    into(recvbuf, recvtype));
            c.engine().awaitAll(new Operation[] {s, r});
            return finished(r);
        });
    }

    /** Sends the buffer and receives into it. */
    public final Status sendRecvReplace(Object buf, int count, Datatype type, int dest, int sendtag, int source,
                                        int recvtag) throws MPIException {
        return call(c -> sendRecv(copyOf(buf, count, type), count, type, dest, sendtag, buf, count, type, source,
                recvtag));
    }

    private static Object copyOf(Object buf, int count, Datatype type) throws MPIException {
        Buffers.check(buf, 0, count, type);
        ByteBuffer packed = ByteBuffer.allocate(count * type.packedSize).order(ByteOrder.LITTLE_ENDIAN);
        Buffers.pack(buf, 0, count, type, packed, 0);
        return new Packed(packed);
    }

    /**
     * Sends in buffered mode: returns at once, the message taking room in the buffer attached
     * with {@link MPI#attachBuffer} until it has left.
     *
     * @throws MPIException {@code MPI.ERR_BUFFER} when the buffer has no room for it (its packed
     *                      size plus {@link MPI#BSEND_OVERHEAD}) or none is attached
     */
    public final void bSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        call(c -> BufferedSends.send(c, buf, count, type, dest, tag));
    }

    public final void sSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        send(buf, count, type, dest, tag);
    }

    public final void rSend(Object buf, int count, Datatype type, int dest, int tag) throws MPIException {
        send(buf, count, type, dest, tag);
    }

    /** Starts a send; the buffer may be reused at once (its elements are copied). */
    public final Request iSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return call(c -> new Request(this, c.isend(message(buf, 0, count, type), type.kind, dest, tag)));
    }

    /** Starts a send in buffered mode, as {@link #bSend}. */
    public final Request ibSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return call(c -> new Request(this, BufferedSends.send(c, buf, count, type, dest, tag)));
    }

    public final Request isSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSend(buf, count, type, dest, tag);
    }

    public final Request irSend(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return iSend(buf, count, type, dest, tag);
    }

    /** Posts a receive; the elements are in the buffer when the request completes. */
    public final Request iRecv(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        return call(c -> {
            Buffers.check(buf, 0, count, type);
            return new Request(this, c.irecv(source, tag, type.kind, count * type.packedSize, into(buf, type)));
        });
    }

    /** @return the status of a matching message waiting to be received, or {@code null} */
    public final Status iProbe(int source, int tag) throws MPIException {
        return call(c -> {
            Arrived a = c.iprobe(source, tag);
            return a == null ? null : probed(c, a);
        });
    }

    /** Waits for a matching message and returns its status without receiving it. */
    public final Status probe(int source, int tag) throws MPIException {
        return call(c -> probed(c, c.probe(source, tag)));
    }

    private static Status probed(Communicator c, Arrived a) {
        return new Status(c.rankOf(a.source()), a.tag(), MPI.SUCCESS, false, a.bytes(), a.kind());
    }

    // ---- persistent requests (Prequest) ----

    /** @return a persistent request of {@link #send}: each {@link Prequest#start} sends the buffer's elements then */
    public final Prequest sendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return Prequest.send(this, "send", buf, count, type, dest, tag);
    }

    /** @return a persistent request of {@link #bSend} */
    public final Prequest bSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return Prequest.send(this, "bSend", buf, count, type, dest, tag);
    }

    /** @return a persistent request of {@link #sSend} */
    public final Prequest sSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return Prequest.send(this, "sSend", buf, count, type, dest, tag);
    }

    /** @return a persistent request of {@link #rSend} */
    public final Prequest rSendInit(Buffer buf, int count, Datatype type, int dest, int tag) throws MPIException {
        return Prequest.send(this, "rSend", buf, count, type, dest, tag);
    }

    /** @return a persistent request of {@link #iRecv} */
    public final Prequest recvInit(Buffer buf, int count, Datatype type, int source, int tag) throws MPIException {
        return Prequest.recv(this, buf, count, type, source, tag);
    }

    // ---- attributes (Attributes) ----

    /** @return a new attribute key ({@code MPI_COMM_CREATE_KEYVAL}) */
    public static int createKeyval() throws MPIException {
        synchronized (MPI.LOCK) {
            MPI.check();
            return Attributes.create();
        }
    }

    /** Frees an attribute key ({@code MPI_COMM_FREE_KEYVAL}); the attributes set with it stay until deleted. */
    public static void freeKeyval(int keyval) throws MPIException {
        MPI.COMM_WORLD.call(c -> {
            Attributes.free(keyval);
            return null;
        });
    }

    /** Sets an attribute: a copy of {@code value}, which must be {@link java.io.Serializable}. */
    public final void setAttr(int keyval, Object value) throws MPIException {
        call(c -> {
            attributes.set(keyval, value);
            return null;
        });
    }

    /**
     * @return a copy of the attribute's value, {@code null} when none is set; for {@link MPI#TAG_UB}
     *         the largest tag, for {@link MPI#HOST} {@code MPI.PROC_NULL}, for {@link MPI#IO}
     *         {@code MPI.ANY_SOURCE} (every rank can do I/O), all {@code Integer}; for
     *         {@link MPI#WTIME_IS_GLOBAL} {@code Boolean.FALSE}
     */
    public final Object getAttr(int keyval) throws MPIException {
        return call(c -> attributes.get(keyval));
    }

    /** Deletes an attribute ({@code MPI_COMM_DELETE_ATTR}). */
    public final void deleteAttr(int keyval) throws MPIException {
        call(c -> {
            attributes.delete(keyval);
            return null;
        });
    }

    // ---- pack and unpack ----

    /**
     * Packs {@code incount} elements of {@code type} from {@code inbuf} into {@code outbuf} from
     * byte {@code position} ({@code MPI_PACK}), in the form a message carries them, so that they
     * can be sent as {@code MPI.PACKED} and unpacked with the same type, or received as that type.
     *
     * @return the position after them
     * @throws MPIException {@code MPI.ERR_TRUNCATE} when they do not fit {@code outbuf}
     */
    public final int pack(Object inbuf, int incount, Datatype type, byte[] outbuf, int position)
            throws MPIException {
        return call(c -> {
            Buffers.check(inbuf, 0, incount, type);
            int bytes = incount * type.packedSize;
            room("pack", outbuf, position, bytes);
            Buffers.pack(inbuf, 0, incount, type, ByteBuffer.wrap(outbuf).order(ByteOrder.LITTLE_ENDIAN), position);
            return position + bytes;
        });
    }

    /**
     * Unpacks {@code outcount} elements of {@code type} from {@code inbuf} at byte {@code position}
     * into {@code outbuf} ({@code MPI_UNPACK}).
     *
     * @return the position after them
     * @throws MPIException {@code MPI.ERR_TRUNCATE} when {@code inbuf} ends before them
     */
    public final int unpack(byte[] inbuf, int position, Object outbuf, int outcount, Datatype type)
            throws MPIException {
        return call(c -> {
            Buffers.check(outbuf, 0, outcount, type);
            int bytes = outcount * type.packedSize;
            room("unpack", inbuf, position, bytes);
            Buffers.unpack(ByteBuffer.wrap(inbuf).order(ByteOrder.LITTLE_ENDIAN), position, bytes, outbuf, 0, type);
            return position + bytes;
        });
    }

    /** @return the bytes {@link #pack} writes for {@code incount} elements of {@code type} ({@code MPI_PACK_SIZE}) */
    public final int packSize(int incount, Datatype type) throws MPIException {
        return call(c -> {
            if (type == null) {
                throw new MPIException(MPI.ERR_TYPE, "packSize: the datatype is null");
            }
            type.checkUsable();
            if (incount < 0) {
                throw new MPIException(MPI.ERR_COUNT, "packSize: count " + incount + " is negative");
            }
            return incount * type.packedSize;
        });
    }

    private static void room(String call, byte[] packed, int position, int bytes) throws MPIException {
        if (packed == null) {
            throw new MPIException(MPI.ERR_BUFFER, call + ": the packed buffer is null");
        }
        if (position < 0 || position > packed.length) {
            throw new MPIException(MPI.ERR_ARG, call + ": position " + position + " is outside the packed buffer (byte["
                    + packed.length + "])");
        }
        if ((long) position + bytes > packed.length) {
            throw new MPIException(MPI.ERR_TRUNCATE, call + ": " + bytes + " packed bytes from position " + position
                    + " do not fit byte[" + packed.length + "]");
        }
    }

    /**
     * Ends the whole job: this process exits with {@code errorcode}, and the launcher stops
     * every rank, as {@code mpiexec} does.
     */
    public final void abort(int errorcode) throws MPIException {
        System.err.println("MPI abort by rank " + (comm == null ? "?" : comm.rank()) + " of " + name
                + " with code " + errorcode);
        System.err.flush();
        System.out.flush();
        Runtime.getRuntime().halt(errorcode);
    }

    // ---- collectives ----

    /** Packs elements for a collective: little-endian, from element {@code offset}. */
    static ByteBuffer packed(Object buf, int offset, int count, Datatype type) throws MPIException {
        if (buf instanceof Packed p) {
            return p.data;
        }
        Buffers.check(buf, offset, count, type);
        ByteBuffer b = heap(count * type.packedSize);
        Buffers.pack(buf, offset, count, type, b, 0);
        return b;
    }

    static ByteBuffer heap(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Waits until every rank has called it. */
    public final void barrier() throws MPIException {
        call(c -> {
            Collectives.barrier(c);
            return null;
        });
    }

    /** The root's elements to every rank. */
    public final void bcast(Object buf, int count, Datatype type, int root) throws MPIException {
        call(c -> {
            Buffers.check(buf, 0, count, type);
            ByteBuffer data = c.rank() == root ? packed(buf, 0, count, type) : heap(count * type.packedSize);
            Collectives.bcast(c, data, count * type.packedSize, type.kind, root);
            if (c.rank() != root) {
                Buffers.unpack(data, 0, data.capacity(), buf, 0, type);
            }
            return null;
        });
    }

    /** Every rank's block into the root's buffer, in rank order. */
    public final void gather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                             Datatype recvtype, int root) throws MPIException {
        call(c -> {
            gather(c, packed(sendbuf, 0, sendcount, sendtype), sendtype, recvbuf, recvcount, recvtype, root);
            return null;
        });
    }

    /** In place: the root's own block is already at its place in {@code buf}. */
    public final void gather(Object buf, int count, Datatype type, int root) throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(buf, c.rank() == root ? root * count : 0, count, type);
            gather(c, mine, type, buf, count, type, root);
            return null;
        });
    }

    private static void gather(Communicator c, ByteBuffer mine, Datatype sendtype, Object recvbuf, int recvcount,
                               Datatype recvtype, int root) throws MPIException {
        int block = mine.capacity();
        boolean atRoot = c.rank() == root;
        if (atRoot) {
            sameBytes("gather", block, recvcount, recvtype);
            Buffers.check(recvbuf, 0, recvcount * c.size(), recvtype);
        }
        ByteBuffer all = atRoot ? heap(block * c.size()) : null;
        Collectives.gather(c, mine, block, all, sendtype.kind, root);
        if (atRoot) {
            Buffers.unpack(all, 0, all.capacity(), recvbuf, 0, recvtype);
        }
    }

    static void sameBytes(String call, int sentBytes, int count, Datatype type) throws MPIException {
        if (sentBytes != count * type.packedSize) {
            throw new MPIException(MPI.ERR_COUNT, call + ": blocks of " + sentBytes + " bytes sent, " + count + " "
                    + type + " (" + count * type.packedSize + " bytes) expected");
        }
    }

    /** Rank i's elements into the root's buffer at {@code displs[i]}. */
    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
                              int[] displs, Datatype recvtype, int root) throws MPIException {
        call(c -> {
            gatherv(c, packed(sendbuf, 0, sendcount, sendtype), sendtype, recvbuf, recvcount, displs, recvtype, root);
            return null;
        });
    }

    /** The root, in place: its own block is already at {@code displs[root]}. */
    public final void gatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(recvbuf, displs[c.rank()], recvcount[c.rank()], recvtype);
            gatherv(c, mine, recvtype, recvbuf, recvcount, displs, recvtype, root);
            return null;
        });
    }

    /** A rank other than the root. */
    public final void gatherv(Object sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        call(c -> {
            gatherv(c, packed(sendbuf, 0, sendcount, sendtype), sendtype, null, null, null, sendtype, root);
            return null;
        });
    }

    private static void gatherv(Communicator c, ByteBuffer mine, Datatype sendtype, Object recvbuf, int[] counts,
                                int[] displs, Datatype recvtype, int root) throws MPIException {
        boolean atRoot = c.rank() == root;
        int[][] layout = atRoot ? layout("gatherv", recvbuf, counts, displs, recvtype, c.size()) : null;
        ByteBuffer all = atRoot ? heap(layout[2][0]) : null;
        Collectives.gatherv(c, mine, mine.capacity(), all, atRoot ? layout[0] : null, atRoot ? layout[1] : null,
                sendtype.kind, root);
        if (atRoot) {
            unpackRegions(all, layout, recvbuf, displs, recvtype);
        }
    }

    /**
     * @return {bytes per rank, byte displacements, {total bytes}} of element counts and
     *         displacements, checked against the buffer
     */
    static int[][] layout(String call, Object buf, int[] counts, int[] displs, Datatype type, int n)
            throws MPIException {
        if (counts == null || displs == null || counts.length < n || displs.length < n) {
            throw new MPIException(MPI.ERR_ARG, call + ": counts and displacements need " + n + " entries each");
        }
        int size = type.packedSize;
        int[] bytes = new int[n];
        int[] at = new int[n];
        int end = 0;
        for (int i = 0; i < n; i++) {
            Buffers.check(buf, displs[i], counts[i], type);
            bytes[i] = counts[i] * size;
            at[i] = displs[i] * size;
            end = Math.max(end, at[i] + bytes[i]);
        }
        return new int[][] {bytes, at, {end}};
    }

    static void unpackRegions(ByteBuffer all, int[][] layout, Object buf, int[] displs, Datatype type) {
        for (int i = 0; i < layout[0].length; i++) {
            Buffers.unpack(all, layout[1][i], layout[0][i], buf, displs[i], type);
        }
    }

    static ByteBuffer packRegions(Object buf, int[][] layout, int[] displs, Datatype type) {
        ByteBuffer all = heap(layout[2][0]);
        for (int i = 0; i < layout[0].length; i++) {
            Buffers.pack(buf, displs[i], layout[0][i] / type.packedSize, type, all, layout[1][i]);
        }
        return all;
    }

    /** Block i of the root's buffer to rank i. */
    public final void scatter(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                              Datatype recvtype, int root) throws MPIException {
        call(c -> {
            Buffers.check(recvbuf, 0, recvcount, recvtype);
            ByteBuffer part = heap(recvcount * recvtype.packedSize);
            scatter(c, sendbuf, sendcount, sendtype, part, root);
            Buffers.unpack(part, 0, part.capacity(), recvbuf, 0, recvtype);
            return null;
        });
    }

    /** In place: the root keeps its own block where it is in {@code buf}. */
    public final void scatter(Object buf, int count, Datatype type, int root) throws MPIException {
        call(c -> {
            ByteBuffer part = heap(count * type.packedSize);
            scatter(c, buf, count, type, part, root);
            if (c.rank() != root) {
                Buffers.check(buf, 0, count, type);
                Buffers.unpack(part, 0, part.capacity(), buf, 0, type);
            }
            return null;
        });
    }

    private static void scatter(Communicator c, Object sendbuf, int sendcount, Datatype sendtype, ByteBuffer part,
                                int root) throws MPIException {
        ByteBuffer all = null;
        if (c.rank() == root) {
            sameBytes("scatter", part.capacity(), sendcount, sendtype);
            all = packed(sendbuf, 0, sendcount * c.size(), sendtype);
        }
        Collectives.scatter(c, all, part.capacity(), part, sendtype.kind, root);
    }

    /** The root's {@code sendcount[i]} elements at {@code displs[i]} to rank i. */
    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Object recvbuf,
                               int recvcount, Datatype recvtype, int root) throws MPIException {
        call(c -> {
            Buffers.check(recvbuf, 0, recvcount, recvtype);
            ByteBuffer part = heap(recvcount * recvtype.packedSize);
            scatterv(c, sendbuf, sendcount, displs, sendtype, part, recvtype, root);
            Buffers.unpack(part, 0, part.capacity(), recvbuf, 0, recvtype);
            return null;
        });
    }

    /** The root, in place: its own block stays in {@code sendbuf}. */
    public final void scatterv(Object sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        call(c -> {
            ByteBuffer part = heap(sendcount[c.rank()] * sendtype.packedSize);
            scatterv(c, sendbuf, sendcount, displs, sendtype, part, sendtype, root);
            return null;
        });
    }

    /** A rank other than the root. */
    public final void scatterv(Object recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        scatterv(null, null, null, recvtype, recvbuf, recvcount, recvtype, root);
    }

    private static void scatterv(Communicator c, Object sendbuf, int[] counts, int[] displs, Datatype sendtype,
                                 ByteBuffer part, Datatype recvtype, int root) throws MPIException {
        int[][] layout = null;
        ByteBuffer all = null;
        if (c.rank() == root) {
            layout = layout("scatterv", sendbuf, counts, displs, sendtype, c.size());
            all = packRegions(sendbuf, layout, displs, sendtype);
        }
        Collectives.scatterv(c, all, layout == null ? null : layout[0], layout == null ? null : layout[1], part,
                part.capacity(), recvtype.kind, root);
    }

    /** Every rank's block into every rank's buffer, in rank order. */
    public final void allGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                                Datatype recvtype) throws MPIException {
        call(c -> {
            allGather(c, packed(sendbuf, 0, sendcount, sendtype), recvbuf, recvcount, recvtype);
            return null;
        });
    }

    /** In place: each rank's own block is already at its place in {@code buf}. */
    public final void allGather(Object buf, int count, Datatype type) throws MPIException {
        call(c -> {
            allGather(c, packed(buf, c.rank() * count, count, type), buf, count, type);
            return null;
        });
    }

    private static void allGather(Communicator c, ByteBuffer mine, Object recvbuf, int recvcount, Datatype recvtype)
            throws MPIException {
        sameBytes("allGather", mine.capacity(), recvcount, recvtype);
        Buffers.check(recvbuf, 0, recvcount * c.size(), recvtype);
        ByteBuffer all = heap(mine.capacity() * c.size());
        Collectives.allGather(c, mine, mine.capacity(), all, recvtype.kind);
        Buffers.unpack(all, 0, all.capacity(), recvbuf, 0, recvtype);
    }

    /** Rank i's elements into every rank's buffer at {@code displs[i]}. */
    public final void allGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int[] recvcount,
                                 int[] displs, Datatype recvtype) throws MPIException {
        call(c -> {
            allGatherv(c, packed(sendbuf, 0, sendcount, sendtype), recvbuf, recvcount, displs, recvtype);
            return null;
        });
    }

    /** In place: each rank's own block is already at {@code displs[rank]}. */
    public final void allGatherv(Object recvbuf, int[] recvcount, int[] displs, Datatype recvtype)
            throws MPIException {
        call(c -> {
            allGatherv(c, packed(recvbuf, displs[c.rank()], recvcount[c.rank()], recvtype), recvbuf, recvcount,
                    displs, recvtype);
            return null;
        });
    }

    private static void allGatherv(Communicator c, ByteBuffer mine, Object recvbuf, int[] counts, int[] displs,
                                   Datatype recvtype) throws MPIException {
        int[][] layout = layout("allGatherv", recvbuf, counts, displs, recvtype, c.size());
        ByteBuffer all = heap(layout[2][0]);
        Collectives.allGatherv(c, mine, mine.capacity(), all, layout[0], layout[1], recvtype.kind);
        unpackRegions(all, layout, recvbuf, displs, recvtype);
    }

    /** Block i of every rank's buffer to rank i, into its block of the sender's rank. */
    public final void allToAll(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf, int recvcount,
                               Datatype recvtype) throws MPIException {
        call(c -> {
            int n = c.size();
            ByteBuffer out = packed(sendbuf, 0, sendcount * n, sendtype);
            sameBytes("allToAll", sendcount * sendtype.packedSize, recvcount, recvtype);
            Buffers.check(recvbuf, 0, recvcount * n, recvtype);
            ByteBuffer in = heap(out.capacity());
            Collectives.allToAll(c, out, sendcount * sendtype.packedSize, in, recvtype.kind);
            Buffers.unpack(in, 0, in.capacity(), recvbuf, 0, recvtype);
            return null;
        });
    }

    /** {@code sendcount[i]} elements at {@code sdispls[i]} to rank i, received at {@code rdispls[sender]}. */
    public final void allToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype, Object recvbuf,
                                int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        call(c -> {
            int n = c.size();
            int[][] out = layout("allToAllv", sendbuf, sendcount, sdispls, sendtype, n);
            int[][] in = layout("allToAllv", recvbuf, recvcount, rdispls, recvtype, n);
            ByteBuffer send = packRegions(sendbuf, out, sdispls, sendtype);
            ByteBuffer recv = heap(in[2][0]);
            Collectives.allToAllv(c, send, out[0], out[1], recv, in[0], in[1], recvtype.kind);
            unpackRegions(recv, in, recvbuf, rdispls, recvtype);
            return null;
        });
    }

    /**
     * {@code sendCount[i]} elements of {@code sendTypes[i]} from byte {@code sDispls[i]} of
     * {@code sendBuf} to rank i, received as {@code recvCount[j]} elements of {@code recvTypes[j]}
     * at byte {@code rDispls[j]} of {@code recvBuf} from rank j ({@code MPI_ALLTOALLW}).
     */
    public final void allToAllw(Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes, Buffer recvBuf,
                                int[] recvCount, int[] rDispls, Datatype[] recvTypes) throws MPIException {
        call(c -> {
            new AllToAllw(c, "allToAllw", sendBuf, sendCount, sDispls, sendTypes, recvBuf, recvCount, rDispls,
                    recvTypes).run();
            return null;
        });
    }

    /** Starts {@link #allToAllw}. */
    public final Request iAllToAllw(Buffer sendBuf, int[] sendCount, int[] sDispls, Datatype[] sendTypes,
                                    Buffer recvBuf, int[] recvCount, int[] rDispls, Datatype[] recvTypes)
            throws MPIException {
        return call(c -> new AllToAllw(c, "iAllToAllw", sendBuf, sendCount, sDispls, sendTypes, recvBuf, recvCount,
                rDispls, recvTypes).start(this));
    }

    /** Combines every rank's elements into the root's {@code recvbuf}. */
    public final void reduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(sendbuf, 0, count, type);
            ByteBuffer result = null;
            if (c.rank() == root) {
                Buffers.check(recvbuf, 0, count, type);
                result = heap(mine.capacity());
            }
            Collectives.reduce(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type), root);
            if (result != null) {
                Buffers.unpack(result, 0, result.capacity(), recvbuf, 0, type);
            }
            return null;
        });
    }

    /** In place: the root's {@code buf} holds its elements and then the result. */
    public final void reduce(Object buf, int count, Datatype type, Op op, int root) throws MPIException {
        reduce(buf, buf, count, type, op, root);
    }

    /** Combines every rank's elements into every rank's {@code recvbuf}. */
    public final void allReduce(Object sendbuf, Object recvbuf, int count, Datatype type, Op op) throws MPIException {
        call(c -> {
            ByteBuffer mine = packed(sendbuf, 0, count, type);
            Buffers.check(recvbuf, 0, count, type);
            ByteBuffer result = heap(mine.capacity());
            Collectives.allReduce(c, mine, result, type.reduced(count, op), type.kind, op.combiner(type));
            Buffers.unpack(result, 0, result.capacity(), recvbuf, 0, type);
            return null;
        });
    }

    /** In place. */
    public final void allReduce(Object buf, int count, Datatype type, Op op) throws MPIException {
        allReduce(buf, buf, count, type, op);
    }

    /** Combines every rank's elements and gives rank i the {@code recvcounts[i]} elements from their sum's offset. */
    public final void reduceScatter(Object sendbuf, Object recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        call(c -> {
            int n = c.size();
            if (recvcounts == null || recvcounts.length < n) {
                throw new MPIException(MPI.ERR_ARG, "reduceScatter: recvcounts needs " + n + " entries");
            }
            int size = type.packedSize;
            int total = 0;
            int[] bytes = new int[n];
            int[] at = new int[n];
            for (int i = 0; i < n; i++) {
                at[i] = total * size;
                bytes[i] = recvcounts[i] * size;
                total += recvcounts[i];
            }
            ByteBuffer mine = packed(sendbuf, 0, total, type);
            ByteBuffer sum = c.rank() == 0 ? heap(mine.capacity()) : null;
            Collectives.reduce(c, mine, sum, type.reduced(total, op), type.kind, op.combiner(type), 0);
            Buffers.check(recvbuf, 0, recvcounts[c.rank()], type);
            ByteBuffer part = heap(bytes[c.rank()]);
            Collectives.scatterv(c, sum, bytes, at, part, part.capacity(), type.kind, 0);
            Buffers.unpack(part, 0, part.capacity(), recvbuf, 0, type);
            return null;
        });
    }

    /** In place: {@code buf} holds the elements and then this rank's part. */
    public final void reduceScatter(Object buf, int[] counts, Datatype type, Op op) throws MPIException {
        call(c -> {
            reduceScatter(copyOfAll(buf, counts, type), buf, counts, type, op);
            return null;
        });
    }

    private Object copyOfAll(Object buf, int[] counts, Datatype type) throws MPIException {
        int total = 0;
        for (int k : counts) {
            total += k;
        }
        return copyOf(buf, total, type);
    }

    /** As {@link #reduceScatter} with {@code recvcount} elements for every rank. */
    public final void reduceScatterBlock(Object sendbuf, Object recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        int[] counts = new int[getSize()];
        java.util.Arrays.fill(counts, recvcount);
        reduceScatter(sendbuf, recvbuf, counts, type, op);
    }

    /** In place. */
    public final void reduceScatterBlock(Object buf, int count, Datatype type, Op op) throws MPIException {
        int[] counts = new int[getSize()];
        java.util.Arrays.fill(counts, count);
        reduceScatter(buf, counts, type, op);
    }

    /** {@code inOutBuf = inBuf op inOutBuf}, locally. */
    public static void reduceLocal(Object inBuf, Object inOutBuf, int count, Datatype type, Op op)
            throws MPIException {
        try {
            int n = type.reduced(count, op);
            org.mpiproxy.mpi.internal.engine.Combiner combiner = op.combiner(type);
            combiner.check(type.kind);
            ByteBuffer in = packed(inBuf, 0, count, type);
            ByteBuffer inOut = packed(inOutBuf, 0, count, type);
            combiner.applyBefore(type.kind, n, inOut, 0, in, 0);
            Buffers.unpack(inOut, 0, inOut.capacity(), inOutBuf, 0, type);
        } catch (CommFailure e) {
            throw MPI.raise(new MPIException(e));
        } catch (MPIException e) {
            throw MPI.raise(e);
        }
    }

    // ---- non-blocking collectives: each returns its request at once; see NonBlocking ----

    /** Starts a barrier: the request completes once every rank has started it. */
    public final Request iBarrier() throws MPIException {
        return call(c -> NonBlocking.barrier(this, c));
    }

    /** Starts {@link #bcast}. */
    public final Request iBcast(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return call(c -> NonBlocking.bcast(this, c, buf, count, type, root));
    }

    /** Starts {@link #gather(Object, int, Datatype, Object, int, Datatype, int)}. */
    public final Request iGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                                 Datatype recvtype, int root) throws MPIException {
        return call(c -> NonBlocking.gather(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
    }

    /** Starts the in-place gather: the root's own block is already at its place in {@code buf}. */
    public final Request iGather(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return call(c -> NonBlocking.gather(this, c, c.rank() == root ? null : buf, count, type, buf, count, type,
                root));
    }

    /** Starts {@link #gatherv(Object, int, Datatype, Object, int[], int[], Datatype, int)}. */
    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int[] recvcount,
                                  int[] displs, Datatype recvtype, int root) throws MPIException {
        return call(c -> NonBlocking.gatherv(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs,
                recvtype, root));
    }

    /** Starts the gatherv of the root, in place: its own block is already at {@code displs[root]}. */
    public final Request iGatherv(Buffer recvbuf, int[] recvcount, int[] displs, Datatype recvtype, int root)
            throws MPIException {
        return call(c -> NonBlocking.gatherv(this, c, null, 0, recvtype, recvbuf, recvcount, displs, recvtype, root));
    }

    /** Starts the gatherv of a rank other than the root. */
    public final Request iGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, int root) throws MPIException {
        return call(c -> NonBlocking.gatherv(this, c, sendbuf, sendcount, sendtype, null, null, null, sendtype, root));
    }

    /** Starts {@link #scatter(Object, int, Datatype, Object, int, Datatype, int)}. */
    public final Request iScatter(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                                  Datatype recvtype, int root) throws MPIException {
        return call(c -> NonBlocking.scatter(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                root));
    }

    /** Starts the in-place scatter: the root keeps its own block where it is in {@code buf}. */
    public final Request iScatter(Buffer buf, int count, Datatype type, int root) throws MPIException {
        return call(c -> NonBlocking.scatter(this, c, buf, count, type, c.rank() == root ? null : buf, count, type,
                root));
    }

    /** Starts {@link #scatterv(Object, int[], int[], Datatype, Object, int, Datatype, int)}. */
    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, Buffer recvbuf,
                                   int recvcount, Datatype recvtype, int root) throws MPIException {
        return call(c -> NonBlocking.scatterv(this, c, sendbuf, sendcount, displs, sendtype, recvbuf, recvcount,
                recvtype, root));
    }

    /** Starts the scatterv of the root, in place: its own block stays in {@code sendbuf}. */
    public final Request iScatterv(Buffer sendbuf, int[] sendcount, int[] displs, Datatype sendtype, int root)
            throws MPIException {
        return call(c -> NonBlocking.scatterv(this, c, sendbuf, sendcount, displs, sendtype, null, 0, sendtype, root));
    }

    /** Starts the scatterv of a rank other than the root. */
    public final Request iScatterv(Buffer recvbuf, int recvcount, Datatype recvtype, int root) throws MPIException {
        return call(c -> NonBlocking.scatterv(this, c, null, null, null, recvtype, recvbuf, recvcount, recvtype, root));
    }

    /** Starts {@link #allGather(Object, int, Datatype, Object, int, Datatype)}. */
    public final Request iAllGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                                    Datatype recvtype) throws MPIException {
        return call(c -> NonBlocking.allGather(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
    }

    /** Starts the in-place allGather: each rank's own block is already at its place in {@code buf}. */
    public final Request iAllGather(Buffer buf, int count, Datatype type) throws MPIException {
        return call(c -> NonBlocking.allGather(this, c, null, count, type, buf, count, type));
    }

    /** Starts {@link #allGatherv(Object, int, Datatype, Object, int[], int[], Datatype)}. */
    public final Request iAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                     int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        return call(c -> NonBlocking.allGatherv(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, displs,
                recvtype));
    }

    /** Starts the in-place allGatherv: each rank's own block is already at {@code displs[rank]}. */
    public final Request iAllGatherv(Buffer buf, int[] count, int[] displs, Datatype type) throws MPIException {
        return call(c -> NonBlocking.allGatherv(this, c, null, 0, type, buf, count, displs, type));
    }

    /** Starts {@link #allToAll}. */
    public final Request iAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf, int recvcount,
                                   Datatype recvtype) throws MPIException {
        return call(c -> NonBlocking.allToAll(this, c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
    }

    /** Starts {@link #allToAllv}. */
    public final Request iAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype, Buffer recvbuf,
                                    int[] recvcount, int[] rdispls, Datatype recvtype) throws MPIException {
        return call(c -> NonBlocking.allToAllv(this, c, sendbuf, sendcount, sdispls, sendtype, recvbuf, recvcount,
                rdispls, recvtype));
    }

    /** Starts {@link #reduce(Object, Object, int, Datatype, Op, int)}. */
    public final Request iReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op, int root)
            throws MPIException {
        return call(c -> NonBlocking.reduce(this, c, sendbuf, recvbuf, count, type, op, root));
    }

    /** Starts the in-place reduce: the root's {@code buf} holds its elements and then the result. */
    public final Request iReduce(Buffer buf, int count, Datatype type, Op op, int root) throws MPIException {
        return call(c -> NonBlocking.reduce(this, c, buf, buf, count, type, op, root));
    }

    /** Starts {@link #allReduce(Object, Object, int, Datatype, Op)}. */
    public final Request iAllReduce(Buffer sendbuf, Buffer recvbuf, int count, Datatype type, Op op)
            throws MPIException {
        return call(c -> NonBlocking.allReduce(this, c, sendbuf, recvbuf, count, type, op));
    }

    /** Starts the in-place allReduce: {@code buf} holds the elements and then the result. */
    public final Request iAllReduce(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.allReduce(this, c, buf, buf, count, type, op));
    }

    /** Starts {@link #reduceScatter(Object, Object, int[], Datatype, Op)}. */
    public final Request iReduceScatter(Buffer sendbuf, Buffer recvbuf, int[] recvcounts, Datatype type, Op op)
            throws MPIException {
        return call(c -> NonBlocking.reduceScatter(this, c, "iReduceScatter", sendbuf, recvbuf, recvcounts, type, op));
    }

    /** Starts the in-place reduceScatter: {@code buf} holds the elements and then this rank's part. */
    public final Request iReduceScatter(Buffer buf, int[] counts, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.reduceScatter(this, c, "iReduceScatter", buf, buf, counts, type, op));
    }

    /** Starts {@link #reduceScatterBlock(Object, Object, int, Datatype, Op)}. */
    public final Request iReduceScatterBlock(Buffer sendbuf, Buffer recvbuf, int recvcount, Datatype type, Op op)
            throws MPIException {
        return call(c -> NonBlocking.reduceScatterBlock(this, c, sendbuf, recvbuf, recvcount, type, op));
    }

    /** Starts the in-place reduceScatterBlock. */
    public final Request iReduceScatterBlock(Buffer buf, int count, Datatype type, Op op) throws MPIException {
        return call(c -> NonBlocking.reduceScatterBlock(this, c, buf, buf, count, type, op));
    }

    // ---- neighbourhood collectives, on a communicator with a topology: see Neighbors ----

    /** Every neighbour gets this rank's elements; block j of {@code recvbuf} gets those of source j. */
    public final void neighborAllGather(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                                        int recvcount, Datatype recvtype) throws MPIException {
        call(c -> Neighbors.allGather(this, c, "neighborAllGather", true, sendbuf, sendcount, sendtype, recvbuf,
                recvcount, recvtype));
    }

    /** Starts {@link #neighborAllGather}. */
    public final Request iNeighborAllGather(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                            int recvcount, Datatype recvtype) throws MPIException {
        return call(c -> Neighbors.allGather(this, c, "iNeighborAllGather", false, sendbuf, sendcount, sendtype,
                recvbuf, recvcount, recvtype));
    }

    /** As {@link #neighborAllGather}; source j's {@code recvcount[j]} elements at {@code displs[j]}. */
    public final void neighborAllGatherv(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                                         int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        call(c -> Neighbors.allGatherv(this, c, "neighborAllGatherv", true, sendbuf, sendcount, sendtype, recvbuf,
                recvcount, displs, recvtype));
    }

    /** Starts {@link #neighborAllGatherv}. */
    public final Request iNeighborAllGatherv(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                             int[] recvcount, int[] displs, Datatype recvtype) throws MPIException {
        return call(c -> Neighbors.allGatherv(this, c, "iNeighborAllGatherv", false, sendbuf, sendcount, sendtype,
                recvbuf, recvcount, displs, recvtype));
    }

    /** Block i of {@code sendbuf} to neighbour i; block j of {@code recvbuf} from source j. */
    public final void neighborAllToAll(Object sendbuf, int sendcount, Datatype sendtype, Object recvbuf,
                                       int recvcount, Datatype recvtype) throws MPIException {
        call(c -> Neighbors.allToAll(this, c, "neighborAllToAll", true, sendbuf, sendcount, sendtype, recvbuf,
                recvcount, recvtype));
    }

    /** Starts {@link #neighborAllToAll}. */
    public final Request iNeighborAllToAll(Buffer sendbuf, int sendcount, Datatype sendtype, Buffer recvbuf,
                                           int recvcount, Datatype recvtype) throws MPIException {
        return call(c -> Neighbors.allToAll(this, c, "iNeighborAllToAll", false, sendbuf, sendcount, sendtype,
                recvbuf, recvcount, recvtype));
    }

    /** {@code sendcount[i]} elements at {@code sdispls[i]} to neighbour i; source j's at {@code rdispls[j]}. */
    public final void neighborAllToAllv(Object sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                        Object recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        call(c -> Neighbors.allToAllv(this, c, "neighborAllToAllv", true, sendbuf, sendcount, sdispls, sendtype,
                recvbuf, recvcount, rdispls, recvtype));
    }

    /** Starts {@link #neighborAllToAllv}. */
    public final Request iNeighborAllToAllv(Buffer sendbuf, int[] sendcount, int[] sdispls, Datatype sendtype,
                                            Buffer recvbuf, int[] recvcount, int[] rdispls, Datatype recvtype)
            throws MPIException {
        return call(c -> Neighbors.allToAllv(this, c, "iNeighborAllToAllv", false, sendbuf, sendcount, sdispls,
                sendtype, recvbuf, recvcount, rdispls, recvtype));
    }

    @Override
    public String toString() {
        return name;
    }

    /** Elements already packed (a copy the caller made), passed where a buffer is expected. */
    static final class Packed {
        final ByteBuffer data;

        Packed(ByteBuffer data) {
            this.data = data;
        }
    }
}
