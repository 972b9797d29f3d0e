package org.mpiproxy.protocol.pmi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.mpiproxy.protocol.MpiErrors;

/**
 * A PMI-1 and PMI-2 server, the process manager MPICH-family programs talk to
 * (docs/protocol-v2.md 5.7): a node's proxy runs one for the ranks it starts, the launcher one
 * for rank 0. A rank started by a plain EXEC gets {@code PMI_PORT} (this server, on 127.0.0.1)
 * and a random {@code PMI_ID}; its connection counts only if it names an id given out and not
 * used yet (PMI-1: its first line {@code cmd=initack pmiid=N}; PMI-2: the line
 * {@code cmd=init pmi_version=2}, then {@code fullinit} with {@code pmiid} or {@code srcid}),
 * and its socket belongs to the uid the rank's process runs as, so no other local user can
 * pose as a rank. Each connection speaks the PMI its client chose; both reach the same space
 * and the same fences. Requests about the rank itself are answered here; those that concern the
 * whole job (put, barrier_in or kvs-fence, abort, PMI-2's node attributes) also go to the job's
 * launcher on the rank's PMI stream, and a barrier ends when the launcher's fence
 * ({@link #onFence}) brought the pairs of every rank.
 * <p>
 * One thread serves every connection; {@link #register}, {@link #started}, {@link #onFence} and
 * {@link #forget} may be called from any thread.
 * <p>
 * Longer than 500 lines for a reason: it is that one thread (accepting, the handshake and its
 * uid check, reading and writing lines, releasing barriers) with the calls that hand it work,
 * and a connection's state stays confined to it in this file; the PMI-1 commands are in
 * {@link PmiSession}, PMI-2's in {@link Pmi2Session}, a job's space and fences in {@link PmiJob},
 * the framing of what a connection sends in {@link PmiReader}.
 */
public final class PmiServer implements AutoCloseable {

    /** Passes a rank's job-wide PMI line on to the job's launcher; {@code false} when it cannot. */
    public interface Relay {
        /**
         * @param jobId the job
         * @param rank  the rank
         * @param line  its validated line ({@code cmd=put key=K value=V}, {@code cmd=barrier_in},
         *              {@code cmd=abort exitcode=N [message=M]}), without line end
         * @return {@code false} when it cannot be passed on
         */
        boolean line(long jobId, int rank, String line);
    }

    /** A connection has this long to name its id before it is closed. */
    private static final long HANDSHAKE_NANOS = 10_000_000_000L;
    /**
     * Most connections that have not named their rank yet: beyond it new ones are closed at once,
     * so a local user cannot use up the node's descriptors (each waits the handshake limit), or take
     * the place of another uid's ({@link PmiWaitingPool}).
     */
    static final int MAX_UNIDENTIFIED = 256;
    /** How long a connection that came before its rank's pid was known waits for it. */
    private static final long PID_WAIT_NANOS = 5_000_000_000L;

    /** Who owns a connection, and as whom a rank runs (Linux: {@link PeerCredentials}). */
    interface Identity {
        long uidOfClient(int clientPort, int serverPort);

        long uidOfProcess(long pid);

        /**
         * @return the uids of every client connected to {@code serverPort}, by client port, from one
         *         reading of a table; {@code null} when there is none: {@link #uidOfClient} is asked
         */
        default Map<Integer, Long> uidsOfClients(int serverPort) {
            return null;
        }
    }

    private static final Identity PROC = new Identity() {
        @Override
        public long uidOfClient(int clientPort, int serverPort) {
            return PeerCredentials.uidOfClient(clientPort, serverPort);
        }

        @Override
        public Map<Integer, Long> uidsOfClients(int serverPort) {
            return PeerCredentials.uidsOfClients(serverPort);
        }

        @Override
        public long uidOfProcess(long pid) {
            return PeerCredentials.uidOfProcess(pid);
        }
    };

    private volatile Relay relay;
    /** What one job and one uid may hold ({@link PmiLimits}), read at each handshake and idle check. */
    private volatile Supplier<PmiLimits> limits = () -> PmiLimits.DEFAULT;
    private final Consumer<String> problems;
    private final Identity identity;
    /** The time the handshake's limits are counted in, {@link System#nanoTime()}'s. */
    private final LongSupplier clock;
    private final PmiRanks expected = new PmiRanks();
    private final Map<Long, PmiJob> jobs = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Thread thread;
    private final int port;
    private volatile boolean closed;
    /** The connections that have not named their rank, shared fairly among uids. */
    private final PmiWaitingPool waiting;

    /**
     * Opens the server on 127.0.0.1 and starts its thread.
     *
     * @param relay    where a rank's job-wide lines go (its PMI stream)
     * @param problems gets one line per bad connection or request
     * @throws IOException when the socket cannot be opened
     */
    public PmiServer(Relay relay, Consumer<String> problems) throws IOException {
        this(relay, problems, PROC, System::nanoTime);
    }

    /**
     * As {@link #PmiServer(Relay, Consumer)}, with who owns connections and processes, and the
     * time: a test gives its own.
     *
     * @param clock the time the limits of a handshake are counted in (nanoseconds)
     */
    PmiServer(Relay relay, Consumer<String> problems, Identity identity, LongSupplier clock) throws IOException {
        this.relay = relay;
        this.problems = problems;
        this.identity = identity;
        this.clock = clock;
        this.waiting = new PmiWaitingPool(MAX_UNIDENTIFIED, problems, clock, HANDSHAKE_NANOS);
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        server.configureBlocking(false);
        port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        selector = Selector.open();
        server.register(selector, SelectionKey.OP_ACCEPT);
        thread = new Thread(this::run, "mpiproxy-pmi");
        thread.setDaemon(true);
        thread.start();
    }

    /** @return the job's key-value space name, {@code kvs_<16 hex digits>} */
    public static String kvsName(long jobId) {
        return "kvs_" + hex(jobId);
    }

    /** Passes a rank's job-wide line on: {@link Relay#line}. */
    boolean relay(long jobId, int rank, String line) {
        return relay.line(jobId, rank, line);
    }

    /** @return the port MPICH programs connect to */
    public int port() {
        return port;
    }

    /**
     * Sends the ranks' job-wide lines elsewhere from now on: a new revision of the proxy that took
     * over the running jobs, and this server with them, relays them through its own streams.
     *
     * @param relay where a rank's job-wide lines go from now on
     */
    public void relay(Relay relay) {
        this.relay = java.util.Objects.requireNonNull(relay, "relay");
    }

    /**
     * Bounds what one job and one uid may hold from now on; read anew at each handshake.
     *
     * @param limits the limits in force, {@link PmiLimits#DEFAULT} until called
     */
    public void limits(Supplier<PmiLimits> limits) {
        this.limits = java.util.Objects.requireNonNull(limits, "limits");
    }

    /**
     * A rank of a plain EXEC that may connect.
     *
     * @return the variables that point it here: {@code PMI_PORT}, {@code PMI_ID}
     */
    public Map<String, String> register(long jobId, int rank, int size) {
        return register(jobId, rank, size, Map.of());
    }

    /**
     * As {@link #register(long, int, int)}, with pairs the job's space holds from the start, as
     * a process manager provides them ({@code PMI_process_mapping}: which ranks share a node).
     */
    public Map<String, String> register(long jobId, int rank, int size, Map<String, String> preset) {
        PmiJob space = jobs.computeIfAbsent(jobId, j -> new PmiJob(j, size));
        synchronized (space) {
            space.space.merge(preset);
        }
        int id = expected.expect(jobId, rank, size);
        return Map.of("PMI_PORT", "127.0.0.1:" + port, "PMI_ID", Integer.toString(id));
    }

    /** The rank's process runs: connections for it are checked against the uid it runs as. */
    public void started(long jobId, int rank, long pid) {
        if (expected.started(jobId, rank, pid)) {
            selector.wakeup();
        }
    }

    /** Forgets a job: its space, its ids, its connections. */
    public void forget(long jobId) {
        expected.forget(jobId);
        PmiJob job = jobs.remove(jobId);
        if (job != null) {
            post(() -> {
                synchronized (job) {
                    new ArrayList<>(job.connections).forEach(this::close);
                }
            });
        }
    }

    /**
     * One fragment of a fence from the job's launcher; or, as fence 0, node attributes that a rank
     * of this machine put at another server of the job (PMI-2), which the ranks here that wait
     * for them get at once.
     *
     * @param epoch   the fence, from 1; 0 for node attributes
     * @param index   the fragment, from 0; for node attributes, their number, from 0
     * @param count   fragments of the fence; 1 for node attributes
     * @param payload the pairs
     * @return {@code MPI_SUCCESS}, {@code MPI_ERR_COMM} for a job without PMI here, or
     *         {@code MPI_ERR_ARG} for a malformed fragment (the reason goes to the problems)
     */
    public int onFence(long jobId, long epoch, long index, long count, ByteBuffer payload, int offset, int length) {
        PmiJob job = jobs.get(jobId);
        if (job == null) {
            return MpiErrors.ERR_COMM;
        }
        if (epoch == 0 && count == 1 && index >= 0) {
            return nodeAttributes(job, payload, offset, length);
        }
        if (epoch < 1 || epoch > Integer.MAX_VALUE || count < 1 || count > 65535 || index < 0 || index >= count) {
            problems.accept("PMI fence of job " + hex(jobId) + ": epoch " + epoch + ", fragment " + index + " of "
                    + count + " is not a fragment; refused");
            return MpiErrors.ERR_ARG;
        }
        Map<String, String> pairs = new HashMap<>();
        try {
            PmiSpace.decode(payload, offset, length, pairs);
        } catch (IllegalArgumentException e) {
            problems.accept("PMI fence of job " + hex(jobId) + ": " + e.getMessage() + "; refused");
            return MpiErrors.ERR_ARG;
        }
        synchronized (job) {
            if (job.fragment((int) epoch, (int) index, (int) count, pairs)) {
                post(() -> releaseIfFenced(job));
            }
        }
        return MpiErrors.SUCCESS;
    }

    /** Node attributes a rank of this machine put at another server of the job (fence 0, sequence: its number). */
    private int nodeAttributes(PmiJob job, ByteBuffer payload, int offset, int length) {
        Map<String, String> pairs = new HashMap<>();
        try {
            PmiSpace.decode(payload, offset, length, pairs);
        } catch (IllegalArgumentException e) {
            problems.accept("PMI node attributes of job " + hex(job.jobId) + ": " + e.getMessage() + "; refused");
            return MpiErrors.ERR_ARG;
        }
        synchronized (job) {
            pairs.forEach(job::putNodeAttribute);
        }
        post(() -> wakeNodeWaiters(job));
        return MpiErrors.SUCCESS;
    }

    /** @return a job id as 16 lower-case hexadecimal digits */
    static String hex(long jobId) {
        return String.format("%016x", jobId);
    }

    void post(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    // ------------------------------------------------------------------ PMI thread

    private void run() {
        while (!closed) {
            try {
                selector.select(100);
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey k = keys.next();
                    keys.remove();
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.isAcceptable()) {
                        accept();
                    } else {
                        PmiConnection c = (PmiConnection) k.attachment();
                        if (k.isWritable()) {
                            flush(c);
                        }
                        if (k.isValid() && k.isReadable()) {
                            read(c);
                        }
                    }
                }
                checkWaiting();
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    problems.accept("PMI server: " + e);
                }
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel channel;
        PmiWaitingPool.Owners owners = null;
        while ((channel = server.accept()) != null) {
            PmiConnection c = new PmiConnection(this, channel, clock.getAsLong(), channel.socket().getPort());
            List<PmiConnection> unidentified = unidentified();
            if (owners == null && unidentified.size() >= MAX_UNIDENTIFIED) {
                // the kernel's table is read only when the pool is full, at most twice per batch
                owners = new PmiWaitingPool.Owners(() -> identity.uidsOfClients(port),
                        client -> identity.uidOfClient(client, port));
            }
            if (!waiting.admit(unidentified, c, owners, this::close)) {
                // a flood of connections that never say who they are: the ranks' own still get in
                // as those time out, and the connections of other uids take the flood's places
                channel.close();
                continue;
            }
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ, c);
        }
    }

    /** @return the open connections that have not completed their handshake */
    private List<PmiConnection> unidentified() {
        List<PmiConnection> found = new ArrayList<>();
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof PmiConnection c && c.channel.isOpen() && c.session == null) {
                found.add(c);
            }
        }
        return found;
    }

    /** @return the open connections that {@code which} holds for */
    private int count(Predicate<PmiConnection> which) {
        int n = 0;
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof PmiConnection c && c.channel.isOpen() && which.test(c)) {
                n++;
            }
        }
        return n;
    }

    private void read(PmiConnection c) {
        int n;
        try {
            n = c.in.read(c.channel);
        } catch (IOException e) {
            n = -1;
        }
        c.active = clock.getAsLong();
        if (n < 0) {
            if (c.session != null && !c.session.finalized()) {
                problems.accept("PMI: rank " + c.who.rank + " of job " + hex(c.who.jobId)
                        + " closed its connection before finalize");
            }
            close(c);
            return;
        }
        try {
            String message;
            while (c.channel.isOpen() && (message = c.in.next()) != null) {
                onMessage(c, message);
            }
        } catch (IllegalArgumentException e) {
            refuse(c, who(c) + " sent " + e.getMessage());
        }
    }

    private String who(PmiConnection c) {
        return c.who == null ? "an unidentified connection"
                : "rank " + c.who.rank + " of job " + hex(c.who.jobId);
    }

    private void onMessage(PmiConnection c, String text) {
        if (c.session == null) {
            if (c.in.isFramed()) {
                fullinit(c, text);
            } else {
                handshake(c, text);
            }
            return;
        }
        PmiSession.Reply r = c.session.onMessage(text);
        if (r.problem() != null) {
            problems.accept("PMI: " + who(c) + ": " + r.problem());
        }
        write(c, r.reply());
        if (r.close()) {
            flush(c);
            close(c);
        }
    }

    /** A PMI-1 connection's first line names its id; a PMI-2 client's asks for PMI-2 first. */
    private void handshake(PmiConnection c, String text) {
        if (c.pendingHandshake != null) {
            return;
        }
        PmiLine line;
        try {
            line = PmiLine.parse(text);
        } catch (IllegalArgumentException e) {
            refuse(c, "first line is not cmd=initack pmiid=N: " + e.getMessage());
            return;
        }
        if (line.command().equals("init") && Pmi2Session.VERSION.equals(line.get("pmi_version"))) {
            write(c, PmiLine.format("response_to_init", "pmi_version", Pmi2Session.VERSION, "pmi_subversion",
                    Pmi2Session.SUBVERSION, "rc", "0"));
            c.in.framed();
            return;
        }
        String id = line.get("pmiid");
        if (!line.command().equals("initack") || id == null) {
            refuse(c, "first line is cmd=" + PmiLine.shorten(line.command()) + ", not cmd=initack pmiid=N (PMI-1)"
                    + " or cmd=init pmi_version=2 (PMI-2): the program is not started with PMI_PORT and PMI_ID");
            return;
        }
        identify(c, id, text);
    }

    /** A PMI-2 connection's first message is {@code fullinit}, naming its id. */
    private void fullinit(PmiConnection c, String body) {
        if (c.pendingHandshake != null) {
            return;
        }
        Pmi2Wire m;
        try {
            m = Pmi2Wire.parse(body);
        } catch (IllegalArgumentException e) {
            refuse(c, "first PMI-2 message is not cmd=fullinit: " + e.getMessage());
            return;
        }
        // MPICH's client names its id pmiid=, Slurm's srcid=
        String id = m.get("pmiid") != null ? m.get("pmiid") : m.get("srcid");
        if (!m.command().equals("fullinit") || id == null) {
            refuse(c, "first PMI-2 message is cmd=" + PmiLine.shorten(m.command()) + (id == null ? " without an id"
                    : "") + ", not cmd=fullinit;pmiid=N; (the program is not started with PMI_PORT and PMI_ID)");
            return;
        }
        identify(c, id, body);
    }

    private void identify(PmiConnection c, String id, String firstMessage) {
        PmiRanks.Expected e = expected.take(id);
        if (e == null) {
            refuse(c, "pmiid " + PmiLine.shorten(id) + " was not given out or is used already");
            return;
        }
        c.who = e;
        c.pendingHandshake = firstMessage;
        c.pidWaitStart = clock.getAsLong();
        checkIdentity(c);
    }

    /** Completes the handshake once the rank's pid is known and the connection's owner matches it. */
    private void checkIdentity(PmiConnection c) {
        PmiRanks.Expected e = c.who;
        if (e.pid < 0) {
            if (clock.getAsLong() - c.pidWaitStart > PID_WAIT_NANOS) {
                refuse(c, "rank " + e.rank + " of job " + hex(e.jobId) + " did not start");
            }
            return;
        }
        InetSocketAddress remote;
        try {
            remote = (InetSocketAddress) c.channel.getRemoteAddress();
        } catch (IOException ex) {
            close(c);
            return;
        }
        long peer = identity.uidOfClient(remote.getPort(), port);
        long rankUid = identity.uidOfProcess(e.pid);
        if (peer < 0 || peer != rankUid) {
            refuse(c, "connection for rank " + e.rank + " of job " + hex(e.jobId) + " comes from uid " + peer
                    + ", the rank runs as uid " + rankUid);
            return;
        }
        PmiJob job = jobs.get(e.jobId);
        if (job == null) {
            refuse(c, "job " + hex(e.jobId) + " is gone");
            return;
        }
        String over;
        synchronized (job) {
            over = limits.get().refusal(e.jobId, job.connections.size(), peer,
                    count(other -> other.session != null && other.uid == peer));
        }
        if (over != null) {
            refuse(c, "rank " + e.rank + " of job " + hex(e.jobId) + " refused: " + over);
            return;
        }
        String first = c.pendingHandshake;
        c.pendingHandshake = null;
        c.job = job;
        c.uid = peer;
        String reply;
        if (c.in.isFramed()) {
            Pmi2Session session = new Pmi2Session(e.rank, c);
            c.session = session;
            reply = session.fullinitResponse(Pmi2Wire.parse(first));
        } else {
            PmiSession session = new PmiSession(e.rank, c);
            c.session = session;
            reply = session.handshake();
        }
        synchronized (job) {
            job.connections.add(c);
        }
        write(c, reply);
    }

    private void checkWaiting() {
        PmiLimits bounds = limits.get();
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof PmiConnection) {
                PmiConnection c = (PmiConnection) k.attachment();
                if (c.pendingHandshake != null) {
                    checkIdentity(c);
                } else if (c.session == null && clock.getAsLong() - c.accepted > HANDSHAKE_NANOS) {
                    refuse(c, "no " + (c.in.isFramed() ? "cmd=fullinit" : "cmd=initack") + " within "
                            + HANDSHAKE_NANOS / 1_000_000_000L + " s");
                } else if (c.session != null && bounds.idle(clock.getAsLong() - c.active, c.session.inBarrier())) {
                    refuse(c, who(c) + " was idle for more than pmi.idle.seconds="
                            + bounds.idleNanos() / 1_000_000_000L);
                }
            }
        }
    }

    /** Answers the ranks of the job here that wait for a node attribute a rank has put since. */
    void wakeNodeWaiters(PmiJob job) {
        List<PmiConnection> waiting;
        synchronized (job) {
            waiting = new ArrayList<>(job.connections);
        }
        for (PmiConnection c : waiting) {
            write(c, c.session.nodeAttributeSet());
        }
    }

    void releaseIfFenced(PmiJob job) {
        List<PmiConnection> release = new ArrayList<>();
        synchronized (job) {
            for (PmiConnection c : job.connections) {
                if (c.session != null && c.session.inBarrier() && c.barriers <= job.fenced) {
                    release.add(c);
                }
            }
        }
        for (PmiConnection c : release) {
            write(c, c.session.barrierOut());
        }
    }

    private void refuse(PmiConnection c, String why) {
        problems.accept("PMI: " + why + "; connection closed");
        close(c);
    }

    private void write(PmiConnection c, String text) {
        if (text.isEmpty() || !c.channel.isOpen()) {
            return;
        }
        c.out.add(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        c.active = clock.getAsLong();
        flush(c);
    }

    private void flush(PmiConnection c) {
        try {
            while (!c.out.isEmpty()) {
                ByteBuffer b = c.out.peekFirst();
                c.channel.write(b);
                if (b.hasRemaining()) {
                    break;
                }
                c.out.pollFirst();
            }
            SelectionKey k = c.channel.keyFor(selector);
            if (k != null && k.isValid()) {
                k.interestOps(c.out.isEmpty() ? SelectionKey.OP_READ : SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            }
        } catch (IOException e) {
            close(c);
        }
    }

    private void close(PmiConnection c) {
        if (c.job != null) {
            synchronized (c.job) {
                c.job.connections.remove(c);
            }
        }
        try {
            c.channel.close();
        } catch (IOException e) {
            // closing: nothing to keep
        }
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            for (SelectionKey k : selector.keys()) {
                k.channel().close();
            }
            selector.close();
            server.close();
        } catch (IOException e) {
            // closing: nothing to keep
        }
    }
}
