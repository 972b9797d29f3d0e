package org.mpiproxy.mpi;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Function;

import org.mpiproxy.mpi.internal.Join;
import org.mpiproxy.mpi.internal.LaunchArguments;
import org.mpiproxy.mpi.internal.TagMatcher;
import org.mpiproxy.mpi.internal.TaggedMessage;
import org.mpiproxy.mpi.internal.TaggedTransport;
import org.mpiproxy.mpi.internal.Transport;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/**
 * One process's membership in an MPI job: the Java counterpart of FreeNOS libmpi's
 * {@code MPI_Init}, {@code MPI_Comm_rank}, {@code MPI_Comm_size}, {@code MPI_Send},
 * {@code MPI_Recv} and {@code MPI_Finalize}.
 * <p>
 * The same program is rank 0 and every other rank (SPMD):
 * <ul>
 * <li><b>Host, rank 0</b>: the user runs {@code PROGRAM HOSTFILE ARGS...}. The hostfile names
 * one proxy per line ({@code <ipv4>:<port>:<coreId>}; line n runs rank n, {@code #} comments
 * and blank lines are ignored), so the world size is the number of node lines + 1.
 * {@link #init} sends one v1 EXEC per rank with the command line {@code PROGRAM ARGS...},
 * where PROGRAM is the environment variable {@value #PROGRAM_ENV} (the program's launcher
 * script sets it to its own file name) or else the system property {@value #PROGRAM_PROPERTY}.
 * Replies are awaited for {@value #TIMEOUT_ENV} seconds (default 30, 0 = forever).
 * Under {@code mpiproxy run} the world comes from the environment instead
 * ({@value #HOSTS_ENV}), so there is no hostfile argument.</li>
 * <li><b>Rank n &gt;= 1</b>: started by a proxy as
 * {@code PROGRAM --slave <channel-file> <rankId> <worldSize> ARGS...}; talks to rank 0 through
 * the shared-memory channel file.</li>
 * </ul>
 * Ranks talk to rank 0 only (master/worker): rank 0 sends to and receives from ranks
 * 1..size-1, the others send to and receive from rank 0. Messages are streams of elements:
 * a receive takes exactly {@code count} elements, whatever the sender's message boundaries.
 * {@code int} elements are {@code MPI_INT}, {@code byte} elements {@code MPI_UNSIGNED_CHAR};
 * both travel little-endian and densely packed.
 * <p>
 * <b>Tags</b> (protocol v2 and ranks; v1 has none): {@code send(..., dest, tag)} sends one
 * message with a tag, {@code recv(..., source, tag)} receives one message MPI-style: the first
 * message, in the order its source sent them, whose source and tag match ({@link #ANY_SOURCE},
 * {@link #ANY_TAG}); it returns a {@link Status}. Messages received while looking that do not
 * match are kept for later receives, never lost. The calls without a tag send tag-0 messages
 * of up to 64 KiB and receive by elements, taking kept messages of their source first.
 * <p>
 * <b>Messages of any datatype</b>: {@link #recv(int, int)} returns the next matching
 * {@link Message} as it arrived (datatype code, tag, elements) and {@link #send(Message, int)}
 * sends one, so a program can pass on what it does not interpret (v2 and ranks);
 * {@link #recvElements(ByteBuffer, int, int, int)} receives elements of any datatype by count, over v1
 * too.
 * <p>
 * Thread-safety: not thread-safe; use an instance from one thread at a time.
 * <p>
 * Longer than 500 lines for a reason: it is the library's public API class, the counterpart of
 * libmpi's calls, with every send and receive in its {@code int}, {@code double}, {@code byte},
 * tagged and message forms and the Javadoc each needs, each a few lines handing the call to the
 * transport; joining a job is in {@code Join}. Splitting it would move the API, not the logic.
 */
public final class Mpi implements AutoCloseable {

    /** Environment variable holding the program name rank 0 asks the proxies to start. */
    public static final String PROGRAM_ENV = "MPIPROXY_PROGRAM";
    /** System property used for the program name when {@value #PROGRAM_ENV} is not set. */
    public static final String PROGRAM_PROPERTY = "mpiproxy.program";
    /** Environment variable: seconds rank 0 waits for a proxy's reply; 0 = forever. */
    public static final String TIMEOUT_ENV = "MPIPROXY_TIMEOUT";
    /** Reply timeout when {@value #TIMEOUT_ENV} is not set. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Environment variable holding rank 0's world instead of a hostfile argument: the nodes of
     * ranks 1..N-1, comma-separated {@code <ipv4>:<port>:<coreId>} entries (set by
     * {@code mpiproxy run}; empty for a world of rank 0 alone). When it is set, every argument
     * is the program's own.
     */
    public static final String HOSTS_ENV = "MPIPROXY_HOSTS";
    /**
     * Environment variable: the v2 job id rank 0 uses, hexadecimal (set by {@code mpiproxy run},
     * which addresses the job by it later); default: a random one.
     */
    public static final String JOB_ID_ENV = "MPIPROXY_JOB_ID";
    /** Environment variable: the local UDP port rank 0 sends from (default: any free port). */
    public static final String HOST_PORT_ENV = "MPIPROXY_HOST_PORT";
    /**
     * Environment variable naming a file rank 0 writes at {@link #close()}: one line
     * {@code <rank> <exit status>} per rank (-1 where unknown).
     */
    public static final String STATUS_FILE_ENV = "MPIPROXY_STATUS_FILE";
    /**
     * Environment variable naming a file rank 0 creates as {@link #init} begins, before it
     * starts any rank (set by {@code mpiproxy run}: a rank 0 that ends without it never started
     * ranks 1..N-1, so it was a program that does not use this library).
     */
    public static final String INIT_FILE_ENV = "MPIPROXY_INIT_FILE";

    /** Environment variable choosing the host's protocol: {@code v2} (default) or {@code v1}. */
    public static final String PROTOCOL_ENV = "MPIPROXY_PROTOCOL";
    /** Environment variable naming the v2 key file(s), {@code [id:]path[,...]}; the first signs. */
    public static final String KEY_FILE_ENV = "MPIPROXY_KEY_FILE";
    /** Environment variable with the largest v2 datagram (default 1448). */
    public static final String DATAGRAM_SIZE_ENV = "MPIPROXY_DATAGRAM_SIZE";
    /**
     * Environment variable: milliseconds a v2 node may stay silent while rank 0 waits for it
     * before it is declared dead (0 = never); default: 5000 ({@code V2HostTransport.DEFAULT_DEAD_AFTER}),
     * or {@value #TIMEOUT_ENV} when that is shorter, never when that is 0. Rank 0 probes a node
     * that is silent for a second, and a live proxy answers a probe at once.
     */
    public static final String DEAD_AFTER_ENV = "MPIPROXY_DEAD_AFTER_MS";
    /**
     * Environment variable: milliseconds a v2 node whose proxy stopped (its port closed, or silent)
     * may take to come back once the job runs, for jobs that outlive a restart of their nodes
     * ({@code bin/stop}, {@code bin/start}); default 0: a stopped proxy fails the job within seconds.
     */
    public static final String RESTART_WAIT_ENV = "MPIPROXY_RESTART_WAIT_MS";
    /**
     * Environment variable: a named pipe the host writes the other ranks' output lines to
     * instead of its stdout and stderr (set by {@code mpiproxy run}, which prints them): one
     * record per line, {@code O} or {@code E}, the tagged line, {@code \n}.
     */
    public static final String OUTPUT_PIPE_ENV = "MPIPROXY_OUTPUT_PIPE";
    /** Environment variable: {@code off} prints the ranks' lines without the {@code [rank] } tag. */
    public static final String OUTPUT_TAGS_ENV = "MPIPROXY_OUTPUT_TAGS";
    /** Key file used when {@value #KEY_FILE_ENV} is unset: the distribution's, seen from its programs directory. */
    public static final Path DEFAULT_KEY_FILE = Path.of("..", "etc", "mpiproxy.key");

    /** Receives with this tag match any tag ({@code MPI_ANY_TAG}). */
    public static final int ANY_TAG = TagMatcher.ANY_TAG;
    /** Receives from this source match any rank ({@code MPI_ANY_SOURCE}). */
    public static final int ANY_SOURCE = TagMatcher.ANY_SOURCE;

    private static final int CHUNK_BYTES = 64 * 1024;

    private final Transport transport;
    private final int rank;
    private final int size;
    private final List<String> args;
    private final ByteBuffer scratch = ByteBuffer.allocate(CHUNK_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final IntBuffer scratchInts = scratch.asIntBuffer();
    private int[] exitStatuses;
    private Path statusFile;
    /** Matching of tagged receives; {@code null} when the transport has no tags (v1). */
    private final TagMatcher matcher;

    private Mpi(Transport transport, int rank, int size, List<String> args) {
        this.transport = transport;
        this.matcher = transport instanceof TaggedTransport tagged ? new TagMatcher(tagged) : null;
        this.rank = rank;
        this.size = size;
        this.args = args;
    }

    /**
     * Joins the job ({@code MPI_Init}): on the host reads the hostfile and starts every rank,
     * on a rank maps its channel.
     *
     * @param args the program's command line, as given to {@code main}
     * @return this process's membership; close it to finalize
     * @throws MpiException {@code MPI_ERR_ARG} for a malformed command line, hostfile or
     *                      program name, {@code MPI_ERR_IO} when the hostfile or channel cannot
     *                      be read, or the error a proxy replied when it cannot start a rank
     */
    public static Mpi init(String[] args) {
        return init(args, System::getenv, System.getProperties(), System.err);
    }

    /**
     * As {@link #init(String[])}, handing the other ranks' output lines (protocol v2) to
     * {@code output} instead of printing them.
     *
     * @param args   the program's command line, as given to {@code main}
     * @param output receives every line of ranks 1..size-1 on the host; {@code null}: their
     *               output is not streamed and stays in the nodes' log files. Ignored on ranks
     *               and over v1 (which has no output channel).
     * @return this process's membership; close it to finalize
     * @throws MpiException as {@link #init(String[])}
     */
    public static Mpi init(String[] args, RankOutputHandler output) {
        return init(args, System::getenv, System.getProperties(), System.err, env -> output);
    }

    static Mpi init(String[] args, Function<String, String> env, Properties properties, PrintStream diagnostics) {
        return init(args, env, properties, diagnostics, Mpi::defaultOutput);
    }

    static RankOutputHandler defaultOutput(Function<String, String> env) {
        return Join.defaultOutput(env);
    }

    static Mpi init(String[] args, Function<String, String> env, Properties properties, PrintStream diagnostics,
                    Function<Function<String, String>, RankOutputHandler> outputs) {
        Join.Joined joined = Join.join(args, env, properties, diagnostics, outputs);
        Mpi mpi = new Mpi(joined.transport(), joined.rank(), joined.size(), joined.args());
        mpi.statusFile = joined.statusFile();
        return mpi;
    }

    static long jobId(String text) {
        return Join.jobId(text);
    }

    static int hostPort(String text) {
        return Join.hostPort(text);
    }

    static ClusterKeys hostKeys(Function<String, String> env) {
        return Join.hostKeys(env);
    }

    static int datagramSize(String text) {
        return Join.datagramSize(text);
    }

    static Duration deadAfter(String text, Duration timeout) {
        return Join.deadAfter(text, timeout);
    }

    static Duration timeout(String text) {
        return Join.timeout(text);
    }

    /**
     * @return whether this process was started by {@code mpiproxy run} (rank 0) or by a proxy as
     *         given (a plain EXEC), so that its world is in the environment and its command line
     *         holds no hostfile: every argument is the program's own
     */
    public static boolean launched() {
        return launched(System::getenv);
    }

    static boolean launched(Function<String, String> env) {
        return env.apply(HOSTS_ENV) != null || env.apply(LaunchArguments.CHANNEL_ENV) != null;
    }

    /**
     * The program's own arguments of a command line, without joining a job: for checking
     * usage before {@link #init} starts anything.
     *
     * @param args the command line, as given to {@code main}
     * @return the arguments after the hostfile (host) or after {@code --slave ...} (rank)
     */
    public static List<String> programArguments(String[] args) {
        return programArguments(args, System::getenv);
    }

    static List<String> programArguments(String[] args, Function<String, String> env) {
        String hosts = env.apply(HOSTS_ENV);
        boolean plainRank = env.apply(LaunchArguments.CHANNEL_ENV) != null;
        if ((hosts != null || plainRank) && !LaunchArguments.isRankForm(args)) {
            return List.of(args);
        }
        return LaunchArguments.programArguments(args);
    }

    /** @return this process's rank: 0 on the host, 1..size-1 on the others ({@code MPI_Comm_rank}) */
    public int rank() {
        return rank;
    }

    /** @return the number of processes in the job, rank 0 included ({@code MPI_Comm_size}) */
    public int size() {
        return size;
    }

    /** @return the program's own arguments: the same on every rank, immutable */
    public List<String> args() {
        return args;
    }

    /**
     * Sends {@code MPI_INT} elements ({@code MPI_Send}). Returns when the elements are handed
     * to the network (rank 0) or written to the channel (other ranks). Over protocol v2 rank 0
     * keeps a message of one datagram until its node acknowledges it, and a refusal of it (the
     * rank has ended) is thrown by the next send to that rank, or by a receive that waits for
     * that rank first; a larger message returns once its node has stored all of it.
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param dest   the receiving rank
     * @throws MpiException {@code MPI_ERR_COUNT}, {@code MPI_ERR_BUFFER} or {@code MPI_ERR_RANK}
     *                      for bad arguments, {@code MPI_ERR_IO} when sending fails
     */
    public void send(int[] buf, int offset, int count, int dest) {
        check(buf == null ? -1 : buf.length, offset, count, dest);
        for (int done = 0; done < count; ) {
            int k = Math.min(CHUNK_BYTES / Integer.BYTES, count - done);
            scratchInts.put(0, buf, offset + done, k);
            transport.send(MpiDatatype.INT.code(), scratch, 0, k, dest);
            done += k;
        }
    }

    /**
     * Sends {@code MPI_UNSIGNED_CHAR} elements ({@code MPI_Send}).
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param dest   the receiving rank
     * @throws MpiException as {@link #send(int[], int, int, int)}
     */
    public void send(byte[] buf, int offset, int count, int dest) {
        check(buf == null ? -1 : buf.length, offset, count, dest);
        if (count > 0) {
            transport.send(MpiDatatype.UNSIGNED_CHAR.code(), ByteBuffer.wrap(buf), offset, count, dest);
        }
    }

    /**
     * Receives exactly {@code count} {@code MPI_INT} elements ({@code MPI_Recv}); blocks until
     * they arrived.
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param source the sending rank
     * @throws MpiException {@code MPI_ERR_COUNT}, {@code MPI_ERR_BUFFER} or {@code MPI_ERR_RANK}
     *                      for bad arguments, {@code MPI_ERR_TYPE} when the sender sent another
     *                      datatype; on rank 0 also the error a proxy replied, or
     *                      {@code MPI_ERR_OTHER} when no reply came within the timeout
     */
    public void recv(int[] buf, int offset, int count, int source) {
        check(buf == null ? -1 : buf.length, offset, count, source);
        for (int done = 0; done < count; ) {
            int k = Math.min(CHUNK_BYTES / Integer.BYTES, count - done);
            takeElements(MpiDatatype.INT.code(), scratch, 0, k, source);
            scratchInts.get(0, buf, offset + done, k);
            done += k;
        }
    }

    /**
     * Sends {@code MPI_DOUBLE} elements ({@code MPI_Send}).
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param dest   the receiving rank
     * @throws MpiException as {@link #send(int[], int, int, int)}
     */
    public void send(double[] buf, int offset, int count, int dest) {
        check(buf == null ? -1 : buf.length, offset, count, dest);
        for (int done = 0; done < count; ) {
            int k = Math.min(CHUNK_BYTES / Double.BYTES, count - done);
            scratch.asDoubleBuffer().put(0, buf, offset + done, k);
            transport.send(MpiDatatype.DOUBLE.code(), scratch, 0, k, dest);
            done += k;
        }
    }

    /**
     * Receives exactly {@code count} {@code MPI_DOUBLE} elements ({@code MPI_Recv}).
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param source the sending rank
     * @throws MpiException as {@link #recv(int[], int, int, int)}
     */
    public void recv(double[] buf, int offset, int count, int source) {
        check(buf == null ? -1 : buf.length, offset, count, source);
        for (int done = 0; done < count; ) {
            int k = Math.min(CHUNK_BYTES / Double.BYTES, count - done);
            takeElements(MpiDatatype.DOUBLE.code(), scratch, 0, k, source);
            scratch.asDoubleBuffer().get(0, buf, offset + done, k);
            done += k;
        }
    }

    /**
     * Receives exactly {@code count} {@code MPI_UNSIGNED_CHAR} elements ({@code MPI_Recv}).
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 0
     * @param source the sending rank
     * @throws MpiException as {@link #recv(int[], int, int, int)}
     */
    public void recv(byte[] buf, int offset, int count, int source) {
        check(buf == null ? -1 : buf.length, offset, count, source);
        if (count > 0) {
            takeElements(MpiDatatype.UNSIGNED_CHAR.code(), ByteBuffer.wrap(buf), offset, count, source);
        }
    }

    private void takeElements(int datatype, ByteBuffer dst, int offset, int count, int source) {
        if (matcher != null) {
            matcher.recvElements(datatype, dst, offset, count, source);
        } else {
            transport.recv(datatype, dst, offset, count, source);
        }
    }

    /**
     * Sends one message of {@code MPI_INT} elements with a tag ({@code MPI_Send}).
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 1 (v2 carries no empty messages)
     * @param dest   the receiving rank
     * @param tag    the tag, 0 .. 2^31-1
     * @throws MpiException {@code MPI_ERR_TAG} for a negative tag or over protocol v1, else as
     *                      {@link #send(int[], int, int, int)}
     */
    public void send(int[] buf, int offset, int count, int dest, int tag) {
        TaggedTransport t = tagged(false, buf == null ? -1 : buf.length, offset, count, dest, tag);
        ByteBuffer b = ByteBuffer.allocate(count * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(0, buf, offset, count);
        t.send(MpiDatatype.INT.code(), tag, b, 0, count, dest);
    }

    /**
     * Sends one message of {@code MPI_DOUBLE} elements with a tag ({@code MPI_Send}).
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 1
     * @param dest   the receiving rank
     * @param tag    the tag, 0 .. 2^31-1
     * @throws MpiException as {@link #send(int[], int, int, int, int)}
     */
    public void send(double[] buf, int offset, int count, int dest, int tag) {
        TaggedTransport t = tagged(false, buf == null ? -1 : buf.length, offset, count, dest, tag);
        ByteBuffer b = ByteBuffer.allocate(count * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asDoubleBuffer().put(0, buf, offset, count);
        t.send(MpiDatatype.DOUBLE.code(), tag, b, 0, count, dest);
    }

    /**
     * Sends one message of {@code MPI_UNSIGNED_CHAR} elements with a tag ({@code MPI_Send}).
     *
     * @param buf    the elements
     * @param offset index of the first element
     * @param count  number of elements, &gt;= 1
     * @param dest   the receiving rank
     * @param tag    the tag, 0 .. 2^31-1
     * @throws MpiException as {@link #send(int[], int, int, int, int)}
     */
    public void send(byte[] buf, int offset, int count, int dest, int tag) {
        TaggedTransport t = tagged(false, buf == null ? -1 : buf.length, offset, count, dest, tag);
        t.send(MpiDatatype.UNSIGNED_CHAR.code(), tag, ByteBuffer.wrap(buf), offset, count, dest);
    }

    /**
     * Receives one message of {@code MPI_INT} elements that matches a source and a tag
     * ({@code MPI_Recv}); blocks until one arrived.
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  most elements to take
     * @param source the sending rank or {@link #ANY_SOURCE}
     * @param tag    the tag or {@link #ANY_TAG}
     * @return the message's source, tag and element count
     * @throws MpiException {@code MPI_ERR_TAG} for a tag below -1 or over protocol v1,
     *                      {@code MPI_ERR_TRUNCATE} when the message has more than
     *                      {@code count} elements (it is consumed), {@code MPI_ERR_TYPE} when it
     *                      holds another datatype (it stays for another receive), else as
     *                      {@link #recv(int[], int, int, int)}
     */
    public Status recv(int[] buf, int offset, int count, int source, int tag) {
        tagged(true, buf == null ? -1 : buf.length, offset, count, source, tag);
        ByteBuffer b = ByteBuffer.allocate(count * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        Status status = matcher.recv(MpiDatatype.INT.code(), b, 0, count, source, tag);
        b.asIntBuffer().get(0, buf, offset, status.count());
        return status;
    }

    /**
     * Receives one message of {@code MPI_DOUBLE} elements that matches a source and a tag.
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  most elements to take
     * @param source the sending rank or {@link #ANY_SOURCE}
     * @param tag    the tag or {@link #ANY_TAG}
     * @return the message's source, tag and element count
     * @throws MpiException as {@link #recv(int[], int, int, int, int)}
     */
    public Status recv(double[] buf, int offset, int count, int source, int tag) {
        tagged(true, buf == null ? -1 : buf.length, offset, count, source, tag);
        ByteBuffer b = ByteBuffer.allocate(count * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        Status status = matcher.recv(MpiDatatype.DOUBLE.code(), b, 0, count, source, tag);
        b.asDoubleBuffer().get(0, buf, offset, status.count());
        return status;
    }

    /**
     * Receives one message of {@code MPI_UNSIGNED_CHAR} elements that matches a source and a tag.
     *
     * @param buf    where the elements go
     * @param offset index of the first element
     * @param count  most elements to take
     * @param source the sending rank or {@link #ANY_SOURCE}
     * @param tag    the tag or {@link #ANY_TAG}
     * @return the message's source, tag and element count
     * @throws MpiException as {@link #recv(int[], int, int, int, int)}
     */
    public Status recv(byte[] buf, int offset, int count, int source, int tag) {
        tagged(true, buf == null ? -1 : buf.length, offset, count, source, tag);
        return matcher.recv(MpiDatatype.UNSIGNED_CHAR.code(), ByteBuffer.wrap(buf), offset, count, source, tag);
    }

    /**
     * Receives one whole message that matches a source and a tag, whatever its datatype and
     * size ({@code MPI_Probe}, then {@code MPI_Recv} of what it found): the first, in the order
     * its source sent them, whose source and tag match, as it arrived. A message a receive by
     * elements took a part of is returned without that part.
     *
     * @param source the sending rank or {@link #ANY_SOURCE}
     * @param tag    the tag or {@link #ANY_TAG}
     * @return the message with its source, tag, datatype and elements
     * @throws MpiException {@code MPI_ERR_TAG} for a tag below -1 or on a host speaking
     *                      protocol v1 (which keeps neither tags nor message boundaries),
     *                      {@code MPI_ERR_RANK} for a bad source, else as
     *                      {@link #recv(int[], int, int, int)}
     */
    public Message recv(int source, int tag) {
        tagged(true, 0, 0, 0, source, tag);
        TaggedMessage m = matcher.recvMessage(source, tag);
        return Message.received(m.source(), m.tag(), m.datatype(), m.data());
    }

    /**
     * Sends a message as one message with its datatype and tag ({@code MPI_Send}); over
     * protocol v1, which has neither tags nor message boundaries, its elements as the calls
     * without a tag send them (the tag must be 0).
     *
     * @param message the message, for example one {@link #recv(int, int)} returned
     * @param dest    the receiving rank
     * @throws MpiException {@code MPI_ERR_BUFFER} for {@code null}, {@code MPI_ERR_RANK} for a
     *                      bad destination, over v1 {@code MPI_ERR_TAG} for a tag other than 0
     *                      and {@code MPI_ERR_TYPE} for a datatype above 7, else as
     *                      {@link #send(int[], int, int, int, int)}
     */
    public void send(Message message, int dest) {
        if (message == null) {
            throw new MpiException(MpiErrors.ERR_BUFFER, "message is null");
        }
        check(message.length(), 0, message.count(), dest);
        if (matcher == null) {
            if (message.tag() != 0) {
                throw new MpiException(MpiErrors.ERR_TAG, "protocol v1 carries no tags: tag=" + message.tag()
                        + " cannot be sent, only 0");
            }
            v1Datatype(message.datatype());
            transport.send(message.datatype(), message.elements(), 0, message.count(), dest);
        } else {
            ((TaggedTransport) transport).send(message.datatype(), message.tag(), message.elements(), 0,
                    message.count(), dest);
        }
    }

    /**
     * Receives exactly {@code count} elements of any datatype ({@code MPI_Recv} with a datatype
     * argument), as the calls without a tag do: whatever the sender's message boundaries and
     * tags. Works over both protocols.
     *
     * @param buf      where the elements go, little-endian, from its position; its position
     *                 advances by the bytes received
     * @param count    number of elements, &gt;= 0
     * @param datatype MPI datatype code (over v1: 0..7)
     * @param source   the sending rank
     * @throws MpiException {@code MPI_ERR_TYPE} for an unknown datatype (over v1: one above 7)
     *                      or when the sender sent another one, {@code MPI_ERR_BUFFER} when
     *                      {@code buf} is {@code null}, read-only or has too little room, else
     *                      as {@link #recv(int[], int, int, int)}
     */
    public void recvElements(ByteBuffer buf, int count, int datatype, int source) {
        int size = MpiDatatype.sizeOf(datatype);
        if (size <= 0) {
            throw new MpiException(MpiErrors.ERR_TYPE, "datatype=" + datatype + " is not an MPI datatype code");
        }
        if (buf != null && buf.isReadOnly()) {
            throw new MpiException(MpiErrors.ERR_BUFFER, "buffer is read-only");
        }
        if (matcher == null) {
            v1Datatype(datatype);
        }
        int room = buf == null ? -1 : buf.remaining() / size;
        check(room, 0, count, source);
        if (count > 0) {
            takeElements(datatype, buf, buf.position(), count, source);
            buf.position(buf.position() + count * size);
        }
    }

    /**
     * @return whether this process's messages keep their tags and boundaries: {@code true} on
     *         every rank and on a host speaking protocol v2, {@code false} on a host speaking v1
     *         (there {@link #recv(int, int)} and tags other than 0 are refused)
     */
    public boolean hasTags() {
        return matcher != null;
    }

    private static void v1Datatype(int datatype) {
        if (datatype > MpiDatatype.V1_MAX_CODE) {
            throw new MpiException(MpiErrors.ERR_TYPE, "protocol v1 carries datatypes 0.." + MpiDatatype.V1_MAX_CODE
                    + " only, not MPI_" + MpiDatatype.ofCode(datatype) + " (" + datatype + ")");
        }
    }

    /** Checks a tagged call's arguments; receives pass a source (maybe ANY_SOURCE), sends a count &gt;= 1. */
    private TaggedTransport tagged(boolean receive, int length, int offset, int count, int peer, int tag) {
        check(length, offset, count, receive && peer == ANY_SOURCE ? (rank == 0 ? 1 : 0) : peer);
        if (matcher == null) {
            throw new MpiException(MpiErrors.ERR_TAG, "protocol v1 carries no tags: use the calls without a tag"
                    + " or protocol v2");
        }
        if (receive ? tag < ANY_TAG : tag < 0) {
            throw new MpiException(MpiErrors.ERR_TAG, "tag=" + tag + (receive ? " is neither >= 0 nor ANY_TAG"
                    : " is negative"));
        }
        if (!receive && count == 0) {
            throw new MpiException(MpiErrors.ERR_COUNT, "a message with a tag needs at least one element");
        }
        return (TaggedTransport) transport;
    }

    /**
     * Leaves the job: this is the finalize step ({@code MPI_Finalize}). Rank 0 sends TERMINATE
     * to every rank, waits for the replies (the timeout plus 15 s, since a proxy may wait for a
     * rank to exit before answering), reports non-zero exit statuses and missing replies on
     * standard error and closes its socket; another rank unmaps its channel. Idempotent; no
     * other method may be called afterwards.
     */
    @Override
    public void close() {
        if (exitStatuses == null) {
            exitStatuses = transport.finish();
            if (statusFile != null) {
                Join.writeStatuses(statusFile, exitStatuses);
            }
        }
    }

    /**
     * @return on rank 0 after {@link #close()}: the exit status of every rank (index = rank;
     *         0 for rank 0 itself, -1 where unknown); otherwise an empty array
     */
    public int[] exitStatuses() {
        return exitStatuses == null ? new int[0] : exitStatuses.clone();
    }

    private void check(int length, int offset, int count, int peer) {
        if (exitStatuses != null) {
            throw new MpiException(MpiErrors.ERR_OTHER, "MPI is finalized");
        }
        if (length < 0) {
            throw new MpiException(MpiErrors.ERR_BUFFER, "buffer is null");
        }
        if (count < 0) {
            throw new MpiException(MpiErrors.ERR_COUNT, "count=" + count + " is negative");
        }
        if (offset < 0 || offset > length - count) {
            throw new MpiException(MpiErrors.ERR_BUFFER, "offset=" + offset + " count=" + count
                    + " outside a buffer of " + length);
        }
        if (rank == 0 ? peer < 1 || peer >= size : peer != 0) {
            throw new MpiException(MpiErrors.ERR_RANK, "rank " + peer + ": "
                    + (rank == 0 ? "rank 0 talks to ranks 1.." + (size - 1) : "ranks talk to rank 0 only"));
        }
    }
}
