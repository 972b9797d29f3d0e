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
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.mpiproxy.protocol.MpiErrors;

/**
 * A PMI-1 server, the process manager MPICH programs talk to (docs/protocol-v2.md 5.7): a
 * node's proxy runs one for the ranks it starts, the launcher one for rank 0. A rank started by a plain EXEC gets {@code PMI_PORT} (this server, on 127.0.0.1) and a
 * random {@code PMI_ID}; its connection counts only if it names an id given out and not used
 * yet, and its socket belongs to the uid the rank's process runs as, so no other local user can
 * pose as a rank. Requests about the rank itself are answered here; those that concern the whole
 * job (put, barrier_in, abort) also go to the job's launcher on the rank's PMI stream, and a
 * barrier ends when the launcher's fence ({@link #onFence}) brought the pairs of every rank.
 * <p>
 * One thread serves every connection; {@link #register}, {@link #started}, {@link #onFence} and
 * {@link #forget} may be called from any thread.
 * <p>
 * Longer than 500 lines for a reason: it is that one thread (accepting, the handshake and its
 * uid check, reading and writing lines, releasing barriers) with the calls that hand it work,
 * and a connection's state stays confined to it in this file; the PMI-1 commands are in
 * {@link PmiSession}, the key-value space in {@link PmiSpace}, the line format in {@link PmiLine}.
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
    /** How long a connection that came before its rank's pid was known waits for it. */
    private static final long PID_WAIT_NANOS = 5_000_000_000L;

    /** A rank that may connect. */
    private static final class Expected {
        final long jobId;
        final int rank;
        final int size;
        volatile long pid = -1;

        Expected(long jobId, int rank, int size) {
            this.jobId = jobId;
            this.rank = rank;
            this.size = size;
        }
    }

    /** What this node holds of a job's key-value space, and its fences. */
    private static final class JobSpace {
        final long jobId;
        final int size;
        final PmiSpace space = new PmiSpace();
        /** The highest fence that ended here. */
        int fenced;
        /** Fences arriving: epoch -> fragment -> pairs. */
        final Map<Integer, Map<Integer, Map<String, String>>> arriving = new HashMap<>();
        final List<Connection> connections = new ArrayList<>();

        JobSpace(long jobId, int size) {
            this.jobId = jobId;
            this.size = size;
        }
    }

    /** One rank's connection. PMI thread only. */
    private final class Connection implements PmiSession.Job {
        final SocketChannel channel;
        final long accepted = clock.getAsLong();
        final ByteBuffer in = ByteBuffer.allocate(PmiLine.MAX_LINE);
        final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
        Expected who;
        JobSpace job;
        PmiSession session;
        /** Barriers this rank entered. */
        int barriers;
        long pidWaitStart;
        String pendingHandshake;

        Connection(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public int size() {
            return who.size;
        }

        @Override
        public String kvsName() {
            return PmiServer.kvsName(who.jobId);
        }

        @Override
        public String put(int rank, String key, String value) {
            String problem;
            synchronized (job) {
                problem = job.space.put(key, value);
            }
            if (problem == null && !relay.line(who.jobId, rank, PmiLine.format("put", "key", key, "value", value)
                    .stripTrailing())) {
                problem = "cannot reach the job's launcher: the rank's EXEC did not ask for its output";
            }
            return problem;
        }

        @Override
        public String get(String key) {
            synchronized (job) {
                return job.space.get(key);
            }
        }

        @Override
        public void barrierIn(int rank) {
            barriers++;
            relay.line(who.jobId, rank, "cmd=barrier_in");
            releaseIfFenced(job);
        }

        @Override
        public void abort(int rank, int exitCode, String message) {
            relay.line(who.jobId, rank, message == null ? "cmd=abort exitcode=" + exitCode
                    : "cmd=abort exitcode=" + exitCode + " message=" + message);
        }
    }

    /** Who owns a connection, and as whom a rank runs (Linux: {@link PeerCredentials}). */
    interface Identity {
        long uidOfClient(int clientPort, int serverPort);

        long uidOfProcess(long pid);
    }

    private static final Identity PROC = new Identity() {
        @Override
        public long uidOfClient(int clientPort, int serverPort) {
            return PeerCredentials.uidOfClient(clientPort, serverPort);
        }

        @Override
        public long uidOfProcess(long pid) {
            return PeerCredentials.uidOfProcess(pid);
        }
    };

    private volatile Relay relay;
    private final Consumer<String> problems;
    private final Identity identity;
    /** The time the handshake's limits are counted in, {@link System#nanoTime()}'s. */
    private final LongSupplier clock;
    private final SecureRandom random = new SecureRandom();
    private final Map<Integer, Expected> byId = new ConcurrentHashMap<>();
    private final Map<Long, Expected> byRank = new ConcurrentHashMap<>();
    private final Map<Long, JobSpace> jobs = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ServerSocketChannel server;
    private final Selector selector;
    private final Thread thread;
    private final int port;
    private volatile boolean closed;

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
        Expected e = new Expected(jobId, rank, size);
        JobSpace space = jobs.computeIfAbsent(jobId, j -> new JobSpace(j, size));
        synchronized (space) {
            space.space.merge(preset);
        }
        int id;
        do {
            id = 1 + random.nextInt(Integer.MAX_VALUE - 1);
        } while (byId.putIfAbsent(id, e) != null);
        byRank.put(key(jobId, rank), e);
        jobs.computeIfAbsent(jobId, j -> new JobSpace(j, size));
        return Map.of("PMI_PORT", "127.0.0.1:" + port, "PMI_ID", Integer.toString(id));
    }

    /** The rank's process runs: connections for it are checked against the uid it runs as. */
    public void started(long jobId, int rank, long pid) {
        Expected e = byRank.get(key(jobId, rank));
        if (e != null) {
            e.pid = pid;
            selector.wakeup();
        }
    }

    /** Forgets a job: its space, its ids, its connections. */
    public void forget(long jobId) {
        byId.values().removeIf(e -> e.jobId == jobId);
        byRank.values().removeIf(e -> e.jobId == jobId);
        JobSpace job = jobs.remove(jobId);
        if (job != null) {
            post(() -> {
                synchronized (job) {
                    new ArrayList<>(job.connections).forEach(this::close);
                }
            });
        }
    }

    /**
     * One fragment of a fence from the job's launcher.
     *
     * @param epoch   the fence, from 1
     * @param index   the fragment, from 0
     * @param count   fragments of the fence
     * @param payload the pairs
     * @return {@code MPI_SUCCESS}, {@code MPI_ERR_COMM} for a job without PMI here, or
     *         {@code MPI_ERR_ARG} for a malformed fragment (the reason goes to the problems)
     */
    public int onFence(long jobId, long epoch, long index, long count, ByteBuffer payload, int offset, int length) {
        JobSpace job = jobs.get(jobId);
        if (job == null) {
            return MpiErrors.ERR_COMM;
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
            if (epoch <= job.fenced) {
                return MpiErrors.SUCCESS;
            }
            Map<Integer, Map<String, String>> fragments = job.arriving.computeIfAbsent((int) epoch, e -> new HashMap<>());
            fragments.putIfAbsent((int) index, pairs);
            if (fragments.size() == count) {
                for (int e = job.fenced + 1; e <= epoch; e++) {
                    Map<Integer, Map<String, String>> done = job.arriving.remove(e);
                    if (done != null) {
                        done.values().forEach(job.space::merge);
                    }
                }
                job.fenced = (int) epoch;
                post(() -> releaseIfFenced(job));
            }
        }
        return MpiErrors.SUCCESS;
    }

    /** @return a job id as 16 lower-case hexadecimal digits */
    static String hex(long jobId) {
        return String.format("%016x", jobId);
    }

    private static long key(long jobId, int rank) {
        return jobId * 31 + rank;
    }

    private void post(Runnable task) {
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
                        Connection c = (Connection) k.attachment();
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
        while ((channel = server.accept()) != null) {
            channel.configureBlocking(false);
            Connection c = new Connection(channel);
            channel.register(selector, SelectionKey.OP_READ, c);
        }
    }

    private void read(Connection c) {
        int n;
        try {
            n = c.channel.read(c.in);
        } catch (IOException e) {
            n = -1;
        }
        if (n < 0) {
            if (c.session != null && !c.session.finalized()) {
                problems.accept("PMI: rank " + c.who.rank + " of job " + hex(c.who.jobId)
                        + " closed its connection before finalize");
            }
            close(c);
            return;
        }
        c.in.flip();
        while (c.channel.isOpen()) {
            int nl = -1;
            for (int i = c.in.position(); i < c.in.limit(); i++) {
                if (c.in.get(i) == '\n') {
                    nl = i;
                    break;
                }
            }
            if (nl < 0) {
                break;
            }
            byte[] bytes = new byte[nl - c.in.position()];
            c.in.get(bytes);
            c.in.get();
            onLine(c, new String(bytes, StandardCharsets.UTF_8));
        }
        c.in.compact();
        if (!c.in.hasRemaining() && c.channel.isOpen()) {
            problems.accept("PMI: " + who(c) + " sent a line longer than " + (PmiLine.MAX_LINE - 1)
                    + " bytes; connection closed");
            close(c);
        }
    }

    private String who(Connection c) {
        return c.who == null ? "an unidentified connection"
                : "rank " + c.who.rank + " of job " + hex(c.who.jobId);
    }

    private void onLine(Connection c, String text) {
        if (c.session == null) {
            handshake(c, text);
            return;
        }
        PmiSession.Reply r = c.session.onLine(text);
        if (r.problem() != null) {
            problems.accept("PMI: " + who(c) + ": " + r.problem());
        }
        write(c, r.reply());
        if (r.close()) {
            flush(c);
            close(c);
        }
    }

    private void handshake(Connection c, String text) {
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
        String id = line.get("pmiid");
        if (!line.command().equals("initack") || id == null) {
            refuse(c, "first line is cmd=" + PmiLine.parse(text).command() + ", not cmd=initack pmiid=N (the"
                    + " program is not started with PMI_PORT and PMI_ID)");
            return;
        }
        Expected e;
        try {
            e = byId.remove(Integer.parseInt(id));
        } catch (NumberFormatException ex) {
            e = null;
        }
        if (e == null) {
            refuse(c, "pmiid " + PmiLine.shorten(id) + " was not given out or is used already");
            return;
        }
        c.who = e;
        c.pendingHandshake = text;
        c.pidWaitStart = clock.getAsLong();
        checkIdentity(c);
    }

    /** Completes the handshake once the rank's pid is known and the connection's owner matches it. */
    private void checkIdentity(Connection c) {
        Expected e = c.who;
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
        JobSpace job = jobs.get(e.jobId);
        if (job == null) {
            refuse(c, "job " + hex(e.jobId) + " is gone");
            return;
        }
        c.pendingHandshake = null;
        c.job = job;
        c.session = new PmiSession(e.rank, c);
        synchronized (job) {
            job.connections.add(c);
        }
        write(c, c.session.handshake());
    }

    private void checkWaiting() {
        for (SelectionKey k : selector.keys()) {
            if (k.attachment() instanceof Connection) {
                Connection c = (Connection) k.attachment();
                if (c.pendingHandshake != null) {
                    checkIdentity(c);
                } else if (c.session == null && clock.getAsLong() - c.accepted > HANDSHAKE_NANOS) {
                    refuse(c, "no cmd=initack within " + HANDSHAKE_NANOS / 1_000_000_000L + " s");
                }
            }
        }
    }

    private void releaseIfFenced(JobSpace job) {
        List<Connection> release = new ArrayList<>();
        synchronized (job) {
            for (Connection c : job.connections) {
                if (c.session != null && c.session.inBarrier() && c.barriers <= job.fenced) {
                    release.add(c);
                }
            }
        }
        for (Connection c : release) {
            write(c, c.session.barrierOut());
        }
    }

    private void refuse(Connection c, String why) {
        problems.accept("PMI: " + why + "; connection closed");
        close(c);
    }

    private void write(Connection c, String text) {
        if (text.isEmpty() || !c.channel.isOpen()) {
            return;
        }
        c.out.add(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        flush(c);
    }

    private void flush(Connection c) {
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

    private void close(Connection c) {
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
