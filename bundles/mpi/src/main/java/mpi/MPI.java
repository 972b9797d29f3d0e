package mpi;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.internal.Join;
import org.mpiproxy.mpi.internal.engine.CommFailure;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Engine;
import org.mpiproxy.mpi.internal.engine.Kind;
import org.mpiproxy.mpi.internal.engine.Operation;
import org.mpiproxy.mpi.internal.engine.Reduction;

/**
 * MPI for Java programs, with the names and signatures of Open MPI's Java bindings: a program
 * written for them ({@code MPI.Init(args)}, {@code MPI.COMM_WORLD.getRank()},
 * {@code send(buf, count, MPI.INT, dest, tag)}, the collectives, {@code MPI.Finalize()}) compiles
 * against this library unchanged and runs under {@code mpiproxy run}.
 * <p>
 * Ranks of one node talk through shared memory (a ring pair per pair of ranks that talk, in the
 * job's directory), ranks of different nodes through the proxies over protocol v2, relayed by
 * rank 0 (docs/architecture.md, "The MPI library"). A process
 * started without a launcher is a world of one rank. Calls are serialised: any thread may call,
 * one at a time does ({@link #THREAD_SERIALIZED}). A wait that lasts longer than
 * {@code MPIPROXY_TIMEOUT} seconds (default 30, 0 = no limit) fails naming the ranks.
 * <p>
 * A failed call goes to its communicator's error handler, as in Open MPI:
 * {@link #ERRORS_ARE_FATAL} (every communicator's default) ends the job with the error's class
 * and message; under {@link #ERRORS_RETURN} ({@link Comm#setErrhandler}) the call throws an
 * {@link MPIException} of that class. A call on no communicator (groups, info objects) uses
 * {@link #COMM_WORLD}'s handler; a call before {@link #Init} or after {@link #Finalize} throws.
 */
public final class MPI {

    /** Every call holds it: the engine runs one call at a time. */
    static final Object LOCK = new Object();

    public static final int THREAD_SINGLE = 0;
    public static final int THREAD_FUNNELED = 1;
    public static final int THREAD_SERIALIZED = 2;
    public static final int THREAD_MULTIPLE = 3;

    public static final int ANY_SOURCE = Engine.ANY_SOURCE;
    public static final int ANY_TAG = Engine.ANY_TAG;
    public static final int PROC_NULL = Communicator.PROC_NULL;
    public static final int UNDEFINED = Communicator.UNDEFINED;

    /** The results of {@link Group#compare} and {@link Comm#compare}. */
    public static final int IDENT = 0;
    public static final int CONGRUENT = 1;
    public static final int SIMILAR = 2;
    public static final int UNEQUAL = 3;

    /** The topologies {@link Comm#getTopology} tells, with the values of Open MPI's {@code mpi.h}. */
    public static final int GRAPH = 1;
    public static final int CART = 2;
    public static final int DIST_GRAPH = 3;

    /** The predefined attributes ({@link Comm#getAttr}), with the keys of Open MPI's {@code mpi.h}. */
    public static final int TAG_UB = Attributes.TAG_UB, HOST = Attributes.HOST, IO = Attributes.IO,
            WTIME_IS_GLOBAL = Attributes.WTIME_IS_GLOBAL;
    /** Bytes of the attached buffer ({@link #attachBuffer}) a buffered send takes beyond its packed elements. */
    public static final int BSEND_OVERHEAD = BufferedSends.OVERHEAD;

    /** Longest key and value of an {@link Info}, in characters. */
    public static final int MAX_INFO_KEY = 36;
    public static final int MAX_INFO_VAL = 256;

    // the error classes, with the values of Open MPI's mpi.h ({@link #getErrorString} describes them)
    public static final int SUCCESS = 0;
    public static final int ERR_BUFFER = 1;
    public static final int ERR_COUNT = 2;
    public static final int ERR_TYPE = 3;
    public static final int ERR_TAG = 4;
    public static final int ERR_COMM = 5;
    public static final int ERR_RANK = 6;
    public static final int ERR_REQUEST = 7;
    public static final int ERR_ROOT = 8;
    public static final int ERR_GROUP = 9;
    public static final int ERR_OP = 10;
    public static final int ERR_TOPOLOGY = 11;
    public static final int ERR_DIMS = 12;
    public static final int ERR_ARG = 13;
    public static final int ERR_UNKNOWN = 14;
    public static final int ERR_TRUNCATE = 15;
    public static final int ERR_OTHER = 16;
    public static final int ERR_INTERN = 17;
    public static final int ERR_IN_STATUS = 18;
    public static final int ERR_PENDING = 19;
    public static final int ERR_ACCESS = 20;
    public static final int ERR_AMODE = 21;
    public static final int ERR_ASSERT = 22;
    public static final int ERR_BAD_FILE = 23;
    public static final int ERR_BASE = 24;
    public static final int ERR_CONVERSION = 25;
    public static final int ERR_DISP = 26;
    public static final int ERR_DUP_DATAREP = 27;
    public static final int ERR_FILE_EXISTS = 28;
    public static final int ERR_FILE_IN_USE = 29;
    public static final int ERR_FILE = 30;
    public static final int ERR_INFO_KEY = 31;
    public static final int ERR_INFO_NOKEY = 32;
    public static final int ERR_INFO_VALUE = 33;
    public static final int ERR_INFO = 34;
    public static final int ERR_IO = 35;
    public static final int ERR_KEYVAL = 36;
    public static final int ERR_LOCKTYPE = 37;
    public static final int ERR_NAME = 38;
    public static final int ERR_NO_MEM = 39;
    public static final int ERR_NOT_SAME = 40;
    public static final int ERR_NO_SPACE = 41;
    public static final int ERR_NO_SUCH_FILE = 42;
    public static final int ERR_PORT = 43;
    public static final int ERR_QUOTA = 44;
    public static final int ERR_READ_ONLY = 45;
    public static final int ERR_RMA_CONFLICT = 46;
    public static final int ERR_RMA_SYNC = 47;
    public static final int ERR_SERVICE = 48;
    public static final int ERR_SIZE = 49;
    public static final int ERR_SPAWN = 50;
    public static final int ERR_UNSUPPORTED_DATAREP = 51;
    public static final int ERR_UNSUPPORTED_OPERATION = 52;
    public static final int ERR_WIN = 53;
    public static final int ERR_LASTCODE = 54;
    public static final int ERR_SYSRESOURCE = -2;

    /** The default handler of every communicator: an error ends the job with its message. */
    public static final Errhandler ERRORS_ARE_FATAL = Errhandler.FATAL;
    /** An error is thrown as an {@link MPIException} carrying its class. */
    public static final Errhandler ERRORS_RETURN = Errhandler.RETURN;

    public static final Datatype BYTE = new Datatype(Kind.BYTE, "MPI_BYTE", 1, 1);
    public static final Datatype CHAR = new Datatype(Kind.CHAR, "MPI_CHAR", 2, 2);
    public static final Datatype SHORT = new Datatype(Kind.SHORT, "MPI_SHORT", 2, 2);
    public static final Datatype BOOLEAN = new Datatype(Kind.BOOLEAN, "MPI_BOOLEAN", 1, 1);
    public static final Datatype INT = new Datatype(Kind.INT, "MPI_INT", 4, 4);
    public static final Datatype LONG = new Datatype(Kind.LONG, "MPI_LONG", 8, 8);
    public static final Datatype FLOAT = new Datatype(Kind.FLOAT, "MPI_FLOAT", 4, 4);
    public static final Datatype DOUBLE = new Datatype(Kind.DOUBLE, "MPI_DOUBLE", 8, 8);
    public static final Datatype PACKED = new Datatype(Kind.PACKED, "MPI_PACKED", 1, 1);
    public static final Datatype INT2 = new Datatype(Kind.INT2, "MPI_2INT", 8, 1);
    public static final Datatype SHORT_INT = new Datatype(Kind.SHORT_INT, "MPI_SHORT_INT", 8, 1);
    public static final Datatype LONG_INT = new Datatype(Kind.LONG_INT, "MPI_LONG_INT", 16, 1);
    public static final Datatype FLOAT_INT = new Datatype(Kind.FLOAT_INT, "MPI_FLOAT_INT", 8, 1);
    public static final Datatype DOUBLE_INT = new Datatype(Kind.DOUBLE_INT, "MPI_DOUBLE_INT", 16, 1);
    /** (real, imaginary) pairs of floats ({@link FloatComplex}); reduced by {@link #SUM}. */
    public static final Datatype FLOAT_COMPLEX = new Datatype("MPI_C_FLOAT_COMPLEX", Kind.FLOAT);
    /** (real, imaginary) pairs of doubles ({@link DoubleComplex}); reduced by {@link #SUM}. */
    public static final Datatype DOUBLE_COMPLEX = new Datatype("MPI_C_DOUBLE_COMPLEX", Kind.DOUBLE);
    /** No datatype ({@link Datatype#isNull}): every use of it fails with {@link #ERR_TYPE}. */
    public static final Datatype DATATYPE_NULL = new Datatype("MPI_DATATYPE_NULL");

    /** Reads and writes elements of {@link #INT2} in a {@code ByteBuffer}. */
    public static final Int2 int2 = new Int2();
    /** Reads and writes elements of {@link #SHORT_INT} in a {@code ByteBuffer}. */
    public static final ShortInt shortInt = new ShortInt();
    /** Reads and writes elements of {@link #LONG_INT} in a {@code ByteBuffer}. */
    public static final LongInt longInt = new LongInt();
    /** Reads and writes elements of {@link #FLOAT_INT} in a {@code ByteBuffer}. */
    public static final FloatInt floatInt = new FloatInt();
    /** Reads and writes elements of {@link #DOUBLE_INT} in a {@code ByteBuffer}. */
    public static final DoubleInt doubleInt = new DoubleInt();

    public static final Op MAX = new Op(Reduction.MAX);
    public static final Op MIN = new Op(Reduction.MIN);
    public static final Op SUM = new Op(Reduction.SUM);
    public static final Op PROD = new Op(Reduction.PROD);
    public static final Op LAND = new Op(Reduction.LAND);
    public static final Op BAND = new Op(Reduction.BAND);
    public static final Op LOR = new Op(Reduction.LOR);
    public static final Op BOR = new Op(Reduction.BOR);
    public static final Op LXOR = new Op(Reduction.LXOR);
    public static final Op BXOR = new Op(Reduction.BXOR);
    public static final Op MINLOC = new Op(Reduction.MINLOC);
    public static final Op MAXLOC = new Op(Reduction.MAXLOC);

    /** Every rank of the job. */
    public static final Intracomm COMM_WORLD = new Intracomm(null, "MPI_COMM_WORLD");
    /** This process alone. */
    public static final Intracomm COMM_SELF = new Intracomm(null, "MPI_COMM_SELF");
    /** No communicator ({@link Comm#isNull}): what {@code split(MPI.UNDEFINED, key)} returns. */
    public static final Intracomm COMM_NULL = new Intracomm(null, "MPI_COMM_NULL");
    /** A request that is done: waiting for it returns at once. */
    public static final Request REQUEST_NULL = new Request(null, null);
    /** The group of no process. */
    public static final Group GROUP_EMPTY = new Group(new int[0]);
    /** No info object ({@link Info#isNull}). */
    public static final Info INFO_NULL = new Info(null);

    /** The context of the messages of {@link #Finalize}: no communicator has it. */
    private static final int FINALIZE_CONTEXT = -1;

    private static Join.Joined joined;
    private static Engine engine;
    private static boolean initialized;
    private static boolean finalized;

    private MPI() {
    }

    /**
     * Joins the job: learns this process's rank and world from what the launcher or the proxy
     * set, and opens the links to the other ranks.
     *
     * @param args the program's command line
     * @return the program's own arguments (a rank started with {@code --slave} loses those words)
     * @throws MPIException when the job cannot be joined (a bad setting is named), or on a second call
     */
    public static String[] Init(String[] args) throws MPIException {
        return init(args, System::getenv);
    }

    static String[] init(String[] args, Function<String, String> env) throws MPIException {
        synchronized (LOCK) {
            if (initialized) {
                throw new MPIException(ERR_OTHER, finalized ? "MPI.Init after MPI.Finalize" : "MPI.Init called twice");
            }
            try {
                Join.Joined j;
                boolean alone = env.apply(Mpi.HOSTS_ENV) == null && env.apply(org.mpiproxy.mpi.internal.LaunchArguments.CHANNEL_ENV) == null && !org.mpiproxy.mpi.internal.LaunchArguments.isRankForm(args);
                if (alone) {
                    // no launcher and no proxy: a world of one, as a singleton MPI process
                    j = new Join.Joined(null, 0, 1, List.of(args), null);
                } else {
                    j = Join.join(args, env, System.getProperties(), System.err, Join::defaultOutput);
                }
                long timeout = TimeUnit.MILLISECONDS.toNanos(Join.timeout(env.apply(Mpi.TIMEOUT_ENV)).toMillis());
                start(j, new Engine(j.rank(), j.size(), Join.fabric(j, env), timeout));
                return j.args().toArray(new String[0]);
            } catch (MpiException | CommFailure e) {
                throw new MPIException(e);
            }
        }
    }

    /** Makes {@code e} the engine of this process's communicators: the end of {@link #Init}. */
    static void start(Join.Joined j, Engine e) {
        synchronized (LOCK) {
            joined = j;
            engine = e;
            COMM_WORLD.attach(Communicator.world(e));
            COMM_SELF.attach(Communicator.self(e));
            initialized = true;
        }
    }

    /**
     * As {@link #Init}.
     *
     * @return {@link #THREAD_SERIALIZED}, or less when less was asked for
     */
    public static int InitThread(String[] args, int required) throws MPIException {
        Init(args);
        return Math.min(required, THREAD_SERIALIZED);
    }

    /** @return {@link #THREAD_SERIALIZED} */
    public static int queryThread() throws MPIException {
        return THREAD_SERIALIZED;
    }

    /** @return {@code true}: any thread may call, one at a time */
    public static boolean isThreadMain() throws MPIException {
        return true;
    }

    /**
     * Leaves the job: every rank tells rank 0 it is done, every message still queued goes out,
     * then rank 0 ends the ranks (it waits for each to exit and reports exit statuses for the
     * launcher) and the others close their links. Afterwards no other MPI call may be made.
     */
    public static void Finalize() throws MPIException {
        synchronized (LOCK) {
            check();
            finalized = true;
            try {
                int size = engine.size();
                if (engine.rank() != 0) {
                    engine.await(engine.isend(FINALIZE_CONTEXT, 0, 0, Kind.BYTE, Engine.newMessage(0)));
                } else {
                    for (int i = 1; i < size; i++) {
                        Operation.Recv r = engine.irecv(FINALIZE_CONTEXT, ANY_SOURCE, 0, Kind.BYTE, 0, (s, a, n) -> { });
                        engine.await(r);
                    }
                }
                engine.close();
            } catch (CommFailure e) {
                throw COMM_WORLD.raise(new MPIException(e));
            } finally {
                finish();
            }
        }
    }

    private static void finish() throws MPIException {
        try {
            Join.finish(joined);
        } catch (MpiException e) {
            throw new MPIException(e);
        }
    }

    /**
     * @param errorClass an error class ({@link #ERR_RANK} and the others) or an error code
     *                   ({@link MPIException#getErrorCode}, here the same)
     * @return its name and what it means, {@code "MPI_ERR_RANK: invalid rank"}
     * @throws MPIException {@link #ERR_ARG} when it is no error class of MPI
     */
    public static String getErrorString(int errorClass) throws MPIException {
        String text = ErrorClasses.describe(errorClass);
        if (text == null) {
            throw raise(new MPIException(ERR_ARG, "getErrorString: " + errorClass + " is no error class (they are "
                    + SUCCESS + ".." + ERR_WIN + ")"));
        }
        return text;
    }

    /**
     * An error of a call on no communicator (a group, an info object, a freed communicator): the
     * handler of {@link #COMM_WORLD} decides, as in Open MPI; before {@link #Init} and after
     * {@link #Finalize} no handler does, and the call throws.
     *
     * @return the exception to throw (under {@link #ERRORS_RETURN})
     */
    static MPIException raise(MPIException e) {
        synchronized (LOCK) {
            return initialized && !finalized ? COMM_WORLD.raise(e) : e;
        }
    }

    /** @return this process's rank in {@link #COMM_WORLD} (MPI is initialized) */
    static int worldRank() {
        return engine == null ? 0 : engine.rank();
    }

    /** Attaches the buffer whose room the buffered sends take ({@code MPI_BUFFER_ATTACH}; {@link Comm#bSend}). */
    public static void attachBuffer(byte[] buffer) throws MPIException {
        BufferedSends.attach(buffer);
    }

    /** @return the attached buffer, once every buffered send has left ({@code MPI_BUFFER_DETACH}) */
    public static byte[] detachBuffer() throws MPIException {
        return BufferedSends.detach();
    }

    /** @return seconds since an arbitrary time of this process */
    public static double wtime() throws MPIException {
        return System.nanoTime() / 1e9;
    }

    /** @return the resolution of {@link #wtime}, seconds */
    public static double wtick() throws MPIException {
        return 1e-9;
    }

    /** @return this machine's name */
    public static String getProcessorName() throws MPIException {
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }

    /** @return this library's name and version */
    public static String getLibVersion() {
        return "MPI Proxy for Karaf, mpi package (Open MPI Java API)";
    }

    /** @return whether {@link #Init} has completed */
    public static boolean isInitialized() throws MPIException {
        synchronized (LOCK) {
            return initialized;
        }
    }

    /** @return whether {@link #Finalize} was called */
    public static boolean isFinalized() throws MPIException {
        synchronized (LOCK) {
            return finalized;
        }
    }

    /** @throws MPIException unless MPI is initialized and not finalized */
    static void check() throws MPIException {
        if (!initialized) {
            throw new MPIException(ERR_OTHER, "MPI.Init has not been called");
        }
        if (finalized) {
            throw new MPIException(ERR_OTHER, "MPI.Finalize has been called");
        }
    }

    /** @return a direct buffer in the machine's byte order */
    public static ByteBuffer newByteBuffer(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.nativeOrder());
    }

    public static CharBuffer newCharBuffer(int capacity) {
        return newByteBuffer(2 * capacity).asCharBuffer();
    }

    public static ShortBuffer newShortBuffer(int capacity) {
        return newByteBuffer(2 * capacity).asShortBuffer();
    }

    public static IntBuffer newIntBuffer(int capacity) {
        return newByteBuffer(4 * capacity).asIntBuffer();
    }

    public static LongBuffer newLongBuffer(int capacity) {
        return newByteBuffer(8 * capacity).asLongBuffer();
    }

    public static FloatBuffer newFloatBuffer(int capacity) {
        return newByteBuffer(4 * capacity).asFloatBuffer();
    }

    public static DoubleBuffer newDoubleBuffer(int capacity) {
        return newByteBuffer(8 * capacity).asDoubleBuffer();
    }

    /** @return a buffer sharing {@code buf}'s elements from {@code offset} on */
    public static ByteBuffer slice(ByteBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset).order(buf.order());
    }

    public static CharBuffer slice(CharBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static ShortBuffer slice(ShortBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static IntBuffer slice(IntBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static LongBuffer slice(LongBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static FloatBuffer slice(FloatBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static DoubleBuffer slice(DoubleBuffer buf, int offset) {
        return buf.slice(offset, buf.capacity() - offset);
    }

    public static ByteBuffer slice(byte[] buf, int offset) {
        return ByteBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static CharBuffer slice(char[] buf, int offset) {
        return CharBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static ShortBuffer slice(short[] buf, int offset) {
        return ShortBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static IntBuffer slice(int[] buf, int offset) {
        return IntBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static LongBuffer slice(long[] buf, int offset) {
        return LongBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static FloatBuffer slice(float[] buf, int offset) {
        return FloatBuffer.wrap(buf).slice(offset, buf.length - offset);
    }

    public static DoubleBuffer slice(double[] buf, int offset) {
        return DoubleBuffer.wrap(buf).slice(offset, buf.length - offset);
    }
}
