package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.RankOutputHandler;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.OutputStreamReceiver;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * Rank 0 over protocol v2 (docs/protocol-v2.md): a random job id, authenticated datagrams,
 * SEND fragments sent eagerly within a window, kept until acknowledged and sent again from a hole
 * the proxy's replies show or after a timeout with back-off, RECV pulled by
 * sequence number, idempotent EXEC and TERMINATE repeated until answered. A node that stays
 * silent while a call waits for it gets a probe (STATUS of job 0) from a socket connected to it,
 * so that a port where nothing listens shows at once (ICMP port unreachable); a refusal
 * (docs/protocol-v2.md 3.5) that answers a request sent here tells that authentication failed;
 * a node that answers nothing for the dead-node silence is declared dead. With a {@link RankOutputHandler}, every rank's
 * output lines are streamed here (OUTPUT): they are received and acknowledged during every call
 * and, between calls, by a daemon thread, so ranks never wait for the host program to call.
 * One thread at a time; the output thread takes turns with it through a lock.
 *
 * <p>Longer than 500 lines for a reason that is temporary: it is the whole host side of v2 for
 * the library (requests, the send window, pulls, output), to be split into the one host-side
 * client library shared with the launcher (docs/architecture.md, "What is still to move").
 */
public final class V2HostTransport implements TaggedTransport {

    /** First retransmit timeout; doubled per retry up to {@link #MAX_RTO_NANOS}. */
    static final long INITIAL_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * The floor of the SEND retransmit timeout once round trips are measured
     * ({@link RoundTripEstimator}): well above a loopback or cluster round trip, so that only a
     * loss or a long stall of the proxy's thread sends a fragment again.
     */
    static final long MIN_SEND_RTO_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    static final long MAX_RTO_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Fragments asked for per RECV. */
    static final int RECV_WINDOW = 256;
    /** Data received since the last RECV after which an empty queue asks again (acknowledging it). */
    static final int EARLY_ACK_BYTES = 64 * 1024;
    /** Fragments in flight before the first acknowledgement tells the window. */
    static final int INITIAL_WINDOW = 8;
    /**
     * Fragments kept per rank for retransmission at most (fewer for large datagrams: about 1 MiB
     * per rank). Every message is sent eagerly: {@code send} returns once its last fragment is
     * sent and kept, before the proxy acknowledges it.
     */
    static final int EAGER_SLOTS = 256;
    static final int EAGER_BYTES_PER_RANK = 1 << 20;
    /** How often the kept copies are checked for an overdue acknowledgement (the first timeout is 20 ms). */
    static final long OVERDUE_SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** A launch taking longer than this reports its progress; again when it changed, at most this often. */
    static final long PROGRESS_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A launch whose progress does not change reports it again after this long. */
    static final long PROGRESS_REPEAT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** OUTPUT datagrams handled between acknowledgements while more keep arriving. */
    static final int ACK_EVERY = 16;

    /** The dead-node silence of programs that do not set one ({@code MPIPROXY_DEAD_AFTER_MS}). */
    public static final Duration DEFAULT_DEAD_AFTER = Duration.ofSeconds(5);
    /** A node silent this long while a call waits for it gets a probe, and again this often. */
    static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * A node's port reported unreachable this long (ICMP, with no valid reply since) fails a call:
     * longer than a restart of the proxy's UDP transport bundle, which a running job survives.
     * A launch fails after {@link #PROBE_NANOS} already.
     */
    static final long UNREACHABLE_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A node no call waited for this long: its silence counts from the next wait. */
    static final long WAIT_GAP_NANOS = TimeUnit.SECONDS.toNanos(2);
    /** {@link #awaitReplies}: watch every rank whose EXEC is not answered. */
    private static final int WATCH_EXECS = -1;
    /** {@link #awaitReplies}: watch every rank whose TERMINATE reply is awaited; give its node up. */
    private static final int WATCH_TERMINATING = -2;
    /** Watch every rank that may still send (a caller receiving from all of them). */
    private static final int WATCH_RUNNING = -3;
    /** Nonces of the latest requests to a node, remembered to match refusals. */
    static final int NONCES = 64;

    private static final int SOCKET_BUFFER = 4 * 1024 * 1024;

    /**
     * Per proxy (address and port; its ranks share it): when it was last heard, the nonces sent to
     * it lately, its probe socket and what is known to be wrong with it.
     */
    private static final class Node {
        final HostfileEntry entry;
        final InetSocketAddress address;
        final V2Authenticator auth;
        final long[] nonces = new long[NONCES];
        int nonceAt;
        long lastHeard;
        /** When its silence began to count: the start of a wait after a gap without one. */
        long silentFrom;
        long lastWatched;
        DatagramChannel probe;
        long probeSentAt;
        /** ICMP port unreachable since {@link #unreachableSince}, with no valid reply after it. */
        boolean unreachable;
        long unreachableSince;
        /** Why the node refused a request of ours (a matched refusal), or null. */
        String refusal;
        /** Given up while TERMINATE replies were awaited. */
        boolean dead;

        Node(HostfileEntry entry, InetSocketAddress address, V2Authenticator auth) {
            this.entry = entry;
            this.address = address;
            this.auth = auth;
        }

        void sent(long nonce) {
            nonces[nonceAt] = nonce;
            nonceAt = (nonceAt + 1) % NONCES;
        }

        boolean wasSent(long nonce) {
            for (long n : nonces) {
                if (n == nonce && n != 0) {
                    return true;
                }
            }
            return false;
        }

        void heard(long now) {
            lastHeard = now;
            unreachable = false;
            refusal = null;
        }

        String where() {
            return address.getAddress().getHostAddress() + ":" + address.getPort();
        }
    }

    /** Per rank: where it runs and both streams' positions. */
    private static final class RankState {
        HostfileEntry node;
        Node at;
        InetSocketAddress address;
        V2Authenticator auth;
        int execResult = -1;
        String execReason;
        long terminateStatus = Long.MIN_VALUE;
        int terminateResult = -1;
        /** Interim replies to TERMINATE (STATUS: alive, still terminating) received. */
        long terminateInterims;
        long sendNext;
        long sendAcked;
        int window = INITIAL_WINDOW;
        /** A fragment was refused for a full ring (window 0): the next window above 0 sends again from sendAcked. */
        boolean sendStalled;
        int sendResult;
        /** Copies of eager fragments not yet acknowledged; made with the first eager send. */
        RetainedFragments retained;
        /** When {@link #sendAcked} last moved or an eager fragment was (re)sent, and their retransmit timeout. */
        long sendProgressAt;
        final RoundTripEstimator sendTimer = new RoundTripEstimator(INITIAL_RTO_NANOS, MIN_SEND_RTO_NANOS,
                MAX_RTO_NANOS);
        /** The fragment whose acknowledgement times a round trip, -1 when none; when it was sent. */
        long timedSequence = -1;
        long timedAt;
        /**
         * Replies to fragments from this sequence on may start a resend from a hole: those to
         * fragments sent before the last such resend ({@link #onSendReply}) report the same hole.
         */
        long resentFrom;
        /** A fragment the proxy's replies show missing, to send again at the next chance; -1 when none. */
        long hole = -1;
        /** The last hole sent again, -1 once its reply came, and the end of the fragments sent before it. */
        long holeResent = -1;
        long holeSentBefore;
        /** One past the highest fragment sent (first time or again) since the last refusal. */
        long sentEnd;
        /** The argument of a refused SEND's reply (the proxy's maximum message size for that refusal). */
        long sendRefusalArgument;
        long recvNext;
        long recvEnd;
        /** recvNext when the last RECV was sent. */
        long recvAskedFrom;
        int recvResult;
        /** Fragments received and not yet delivered, in order: RECV_WINDOW slots of a datagram each. */
        ByteBuffer queue;
        int[] queueType;
        int[] queueLength;
        int queueHead;
        int queued;
        /** Bytes of the head fragment already delivered. */
        int headAt;
        /** Per queued fragment: its tag and whether it ends its message (for {@link #nextMessage}). */
        int[] queueTag;
        boolean[] queueEnd;
        /** The message {@link #nextMessage} is assembling: elements so far, datatype, tag. */
        MessageAssembly assembly;
        /** RECV pulls of {@link #nextMessage}, which may return before a message is complete. */
        boolean pullAsked;
        long pullRto = INITIAL_RTO_NANOS;
        long pullLastProgress;
        /** OUTPUT per stream (0 stdout, 1 stderr), made with its first fragment; whether an acknowledgement is due. */
        final OutputStreamReceiver[] out = new OutputStreamReceiver[2];
        final boolean[] ackDue = new boolean[2];
    }

    private final RankState[] ranks;
    private final Map<InetSocketAddress, Node> nodes = new java.util.LinkedHashMap<>();
    private final ByteBuffer probeOut;
    private final V2HeaderFlyweight probeHeader = new V2HeaderFlyweight();
    private final long jobId;
    private final long timeoutNanos;
    /** Silence after which a node is declared dead; {@link #timeoutNanos} unless set by {@link #deadAfter}. */
    private long silenceNanos;
    private final int datagramSize;
    private final int maxPayload;
    private final PrintStream diagnostics;
    private final DatagramChannel channel;
    private final Selector selector;
    private final ByteBuffer out;
    private final ByteBuffer in;
    private final V2HeaderFlyweight outHeader = new V2HeaderFlyweight();
    /** When {@link #resendOverdue} last looked through the ranks. */
    private long lastOverdueScan = System.nanoTime() - OVERDUE_SCAN_NANOS;
    private final V2HeaderFlyweight inHeader = new V2HeaderFlyweight();
    private final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
    private final int keyId;
    private long refused;
    private int[] exitStatuses;
    private final RankOutputHandler output;
    private final ReentrantLock io = new ReentrantLock();
    private final ByteBuffer ackOut;
    private final V2HeaderFlyweight ackHeader = new V2HeaderFlyweight();
    private volatile boolean closed;
    /** EXECs are awaited: an unreachable port fails the launch after {@link #PROBE_NANOS}. */
    private boolean launching;
    private Selector outputSelector;
    private Thread outputThread;

    private V2HostTransport(List<HostfileEntry> nodes, ClusterKeys keys, int datagramSize, Duration timeout,
                            PrintStream diagnostics, RankOutputHandler output, long jobId, int localPort)
            throws IOException {
        this.output = output;
        this.ackOut = ByteBuffer.allocateDirect(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ackHeader.wrap(ackOut, 0);
        this.ranks = new RankState[nodes.size() + 1];
        this.probeOut = ByteBuffer.allocateDirect(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        probeHeader.wrap(probeOut, 0);
        Map<String, V2Authenticator> byNode = new HashMap<>();
        long skew = TimeUnit.SECONDS.toMillis(30);
        for (int r = 1; r < ranks.length; r++) {
            RankState s = new RankState();
            s.node = nodes.get(r - 1);
            s.address = s.node.socketAddress();
            String name = s.address.getAddress().getHostAddress();
            s.auth = byNode.computeIfAbsent(name, n -> new V2Authenticator(keys,
                    org.mpiproxy.protocol.NodeIds.of(n), skew, 1));
            HostfileEntry entry = s.node;
            V2Authenticator auth = s.auth;
            s.at = this.nodes.computeIfAbsent(s.address, a -> new Node(entry, a, auth));
            ranks[r] = s;
        }
        long id = jobId;
        SecureRandom sr = new SecureRandom();
        while (id == 0) {
            id = sr.nextLong();
        }
        this.jobId = id;
        this.keyId = keys.sendKeyId();
        this.timeoutNanos = timeout.isZero() ? Long.MAX_VALUE : timeout.toNanos();
        this.silenceNanos = timeoutNanos;
        this.datagramSize = datagramSize;
        this.maxPayload = V2HeaderDescriptor.maxPayload(datagramSize);
        this.diagnostics = diagnostics;
        this.out = ByteBuffer.allocateDirect(datagramSize).order(ByteOrder.LITTLE_ENDIAN);
        this.in = ByteBuffer.allocateDirect(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1).order(ByteOrder.LITTLE_ENDIAN);
        outHeader.wrap(out, 0);
        DatagramChannel ch = DatagramChannel.open();
        Selector sel = null;
        try {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
            ch.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
            ch.bind(new InetSocketAddress(localPort));
            ch.configureBlocking(false);
            sel = Selector.open();
            ch.register(sel, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
        this.channel = ch;
        this.selector = sel;
    }

    /**
     * Opens the socket and starts every rank, waiting for each EXEC's answer.
     *
     * @param nodes        the hostfile's nodes, element 0 = rank 1
     * @param program      the program name
     * @param args         its arguments
     * @param keys         the cluster keys
     * @param datagramSize the largest datagram to send
     * @param timeout      silence after which a node is dead; zero = never
     * @param diagnostics  where problems that do not fail a call are reported
     * @return the started transport
     * @throws MpiException when a proxy refuses a rank or does not answer in time
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, PrintStream diagnostics) {
        return start(nodes, program, args, keys, datagramSize, timeout, timeout, diagnostics);
    }

    /**
     * Opens the socket and starts every rank, waiting for each EXEC's answer; output is not
     * streamed (it stays in the nodes' log files).
     *
     * @param nodes        the hostfile's nodes, element 0 = rank 1
     * @param program      the program name
     * @param args         its arguments
     * @param keys         the cluster keys
     * @param datagramSize the largest datagram to send
     * @param timeout      how long {@link #finish} waits for TERMINATE replies beyond a proxy's own wait;
     *                     zero = forever
     * @param deadAfter    silence after which a node is dead (see {@link #deadAfter(Duration)}); zero = never
     * @param diagnostics  where problems that do not fail a call are reported
     * @return the started transport
     * @throws MpiException when a proxy refuses a rank or does not answer in time
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, Duration deadAfter,
                                        PrintStream diagnostics) {
        return start(nodes, program, args, keys, datagramSize, timeout, deadAfter, diagnostics, null, 0, 0);
    }

    /**
     * As {@link #start(List, String, List, ClusterKeys, int, Duration, PrintStream)}, asking
     * every proxy to stream its rank's output here.
     *
     * @param nodes        the hostfile's nodes, element 0 = rank 1
     * @param program      the program name
     * @param args         its arguments
     * @param keys         the cluster keys
     * @param datagramSize the largest datagram to send
     * @param timeout      silence after which a node is dead; zero = never
     * @param diagnostics  where problems that do not fail a call are reported
     * @param output       receives the ranks' output lines; {@code null}: not streamed (they stay
     *                     in the nodes' log files)
     * @return the started transport
     * @throws MpiException when a proxy refuses a rank or does not answer in time
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, PrintStream diagnostics,
                                        RankOutputHandler output) {
        return start(nodes, program, args, keys, datagramSize, timeout, timeout, diagnostics, output, 0, 0);
    }

    /**
     * Opens the socket and starts every rank, waiting for each EXEC's answer, with a given job id
     * and local port (a launcher that must act as the job's owner later).
     *
     * @param nodes        the hostfile's nodes, element 0 = rank 1
     * @param program      the program name
     * @param args         its arguments
     * @param keys         the cluster keys
     * @param datagramSize the largest datagram to send
     * @param timeout      how long {@link #finish} waits for TERMINATE replies beyond a proxy's own wait;
     *                     zero = forever
     * @param deadAfter    silence after which a node is dead (see {@link #deadAfter(Duration)}); zero = never
     * @param diagnostics  where problems that do not fail a call are reported
     * @param output       receives the ranks' output lines; {@code null}: not streamed
     * @param jobId        the job id; 0 = a random one
     * @param localPort    the UDP port to send from; 0 = any free port
     * @return the started transport
     * @throws MpiException when a proxy refuses a rank or does not answer in time
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, Duration deadAfter,
                                        PrintStream diagnostics, RankOutputHandler output, long jobId,
                                        int localPort) {
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new MpiException(MpiErrors.ERR_ARG, problem);
        }
        byte[] command = new ExecCommand(program, args).toCommandLine().getBytes(StandardCharsets.UTF_8);
        V2HostTransport t;
        try {
            t = new V2HostTransport(nodes, keys, datagramSize, timeout, diagnostics, output, jobId, localPort);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot open a UDP socket: " + e.getMessage(), e);
        }
        if (command.length > t.maxPayload) {
            t.closeSocket();
            throw new MpiException(MpiErrors.ERR_ARG, "command line is " + command.length + " bytes, more than "
                    + t.maxPayload);
        }
        try {
            t.deadAfter(deadAfter);
            t.io.lock();
            try {
                t.exec(command);
            } finally {
                t.io.unlock();
            }
            if (output != null) {
                t.startOutputThread();
            }
            return t;
        } catch (RuntimeException e) {
            t.finish();
            throw e;
        }
    }

    /** @return the world size, rank 0 included */
    public int size() {
        return ranks.length;
    }

    /** @return this job's id */
    public long jobId() {
        return jobId;
    }

    /**
     * Sets how long a node may stay silent (no valid reply while a call waits for it) before it
     * is declared dead, apart from the reply timeout given to {@link #start}.
     *
     * @param silence the silence; zero = never declare a node dead
     * @return this transport
     */
    public V2HostTransport deadAfter(Duration silence) {
        if (silence.isNegative()) {
            throw new IllegalArgumentException("dead-node silence " + silence + " is negative");
        }
        this.silenceNanos = silence.isZero() ? Long.MAX_VALUE : silence.toNanos();
        return this;
    }

    /** @return the silence after which a node is declared dead; zero = never */
    public Duration deadAfter() {
        return silenceNanos == Long.MAX_VALUE ? Duration.ZERO : Duration.ofNanos(silenceNanos);
    }

    /** @return datagrams received and refused (not authentic, not for this job, malformed) */
    public long refusedDatagrams() {
        return refused;
    }

    /**
     * Sends every rank's EXEC at once (all nodes start in parallel) and a probe to every node
     * (so that a port where nothing listens or a refusal shows within a second), repeats the
     * unanswered EXECs with back-off, and, when the launch takes longer than
     * {@link #PROGRESS_NANOS}, reports {@code mpi: k of n ranks started} to the diagnostics
     * stream: once, then whenever k changed (at most once a second) and every
     * {@link #PROGRESS_REPEAT_NANOS} while it does not.
     */
    private void exec(byte[] command) {
        long now = System.nanoTime();
        for (Node n : nodes.values()) {
            n.lastHeard = now;
            n.silentFrom = now;
            n.lastWatched = now;
            probe(n, now);
        }
        launching = true;
        long rto = INITIAL_RTO_NANOS;
        long begin = now;
        long nextProgress = now + PROGRESS_NANOS;
        int shownDone = -1;
        long shownAt = now;
        boolean progressShown = false;
        while (true) {
            boolean pending = false;
            for (int r = 1; r < ranks.length; r++) {
                RankState s = ranks[r];
                if (s.execResult < 0) {
                    pending = true;
                    header(OP_EXEC, r).flags(output != null ? FLAG_OUTPUT : 0).argument(ranks.length)
                            .core(s.node.coreId()).payloadLength(command.length);
                    out.put(HEADER_LENGTH, command);
                    transmit(r);
                }
            }
            if (!pending) {
                break;
            }
            // output of ranks already started arrives meanwhile: repeat EXECs only after the timeout
            awaitRepliesFor(rto, WATCH_EXECS, this::execsAnswered);
            rto = Math.min(rto * 2, MAX_RTO_NANOS);
            long t = System.nanoTime();
            if (t - nextProgress >= 0 && !execsAnswered()) {
                int done = execsDone();
                if (done != shownDone || t - shownAt >= PROGRESS_REPEAT_NANOS) {
                    diagnostics.println("mpi: " + done + " of " + (ranks.length - 1) + " ranks started");
                    shownDone = done;
                    shownAt = t;
                    progressShown = true;
                }
                nextProgress = t + PROGRESS_NANOS;
            }
        }
        launching = false;
        if (progressShown) {
            diagnostics.println("mpi: all " + (ranks.length - 1) + " ranks answered in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin) + " ms");
        }
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].execResult != MpiErrors.SUCCESS) {
                throw new MpiException(ranks[r].execResult, "rank " + r + " on " + ranks[r].node + " was not started: "
                        + MpiErrors.name(ranks[r].execResult)
                        + (ranks[r].execReason != null ? ": " + ranks[r].execReason : ""));
            }
        }
    }

    @Override
    public void send(int datatype, ByteBuffer src, int offset, int count, int dest) {
        send(datatype, 0, src, offset, count, dest);
    }

    /**
     * Sends one message of any size, eagerly: every fragment is sent and a copy kept for
     * retransmission, and {@code send} returns once the last one is; it waits only while the
     * window or the kept copies ({@link #EAGER_BYTES_PER_RANK}) are full, so a message larger
     * than they are streams through them. The proxy's acknowledgements come during later calls,
     * and a refusal is thrown by the next call to that rank ({@link #flush} waits for it).
     * {@link #finish} waits for every acknowledgement before it terminates ranks.
     *
     * @param datatype MPI datatype code
     * @param tag      the message's tag, &gt;= 0
     * @param src      the elements
     * @param offset   absolute index of the first element
     * @param count    number of elements, &gt;= 1
     * @param dest     the receiving rank
     */
    public void send(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
        io.lock();
        try {
            sendLocked(datatype, tag, src, offset, count, dest);
        } finally {
            io.unlock();
        }
    }

    private void sendLocked(int datatype, int tag, ByteBuffer src, int offset, int count, int dest) {
        RankState s = ranks[dest];
        // what arrived since the last call: acknowledgements free kept copies, a refusal is thrown now
        try {
            receiveAvailable();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
        }
        resendOverdue();
        throwRefusal(s, dest);
        int size = MpiDatatype.sizeOf(datatype);
        int perFragment = maxPayload / size;
        long bytes = (long) count * size;
        for (int from = 0; from < count; from += perFragment) {
            int n = Math.min(perFragment, count - from);
            // the first fragment states the message's size, so a proxy can refuse it before storing any
            sendKept(datatype, tag, src, offset + from * size, n, size, dest, from + n == count,
                    from == 0 ? bytes : 0);
        }
    }

    /**
     * Waits until every message sent to rank {@code dest} has been stored by its proxy, and throws
     * the refusal of one that was not (what a synchronous send waits for).
     *
     * @param dest the rank
     */
    public void flush(int dest) {
        io.lock();
        try {
            RankState s = ranks[dest];
            // a node that falls silent fails the wait (awaitReplies)
            while (unacknowledged(s) && s.sendResult == MpiErrors.SUCCESS) {
                pumpKept(dest);
                awaitReplies(s.sendTimer.timeoutNanos(), dest);
            }
            throwRefusal(s, dest);
        } finally {
            io.unlock();
        }
    }

    /**
     * One fragment: sent and kept. The acknowledgement comes during a later call; until then the
     * kept copy is sent again after the retransmit timeout ({@link #resendOverdue}) or at once
     * when a reply shows the proxy missed it ({@link #onSendReply}). Waits only while the window
     * or the kept copies are full.
     *
     * @param at        the byte index of the fragment's first element in {@code src}
     * @param n         the fragment's elements
     * @param last      whether it ends its message
     * @param statedSize the message's size in bytes on its first fragment, else 0
     */
    private void sendKept(int datatype, int tag, ByteBuffer src, int at, int n, int size, int dest, boolean last,
                          long statedSize) {
        RankState s = ranks[dest];
        if (s.retained == null) {
            s.retained = new RetainedFragments(Math.max(1, Math.min(EAGER_SLOTS, EAGER_BYTES_PER_RANK / datagramSize)),
                    datagramSize);
        }
        RetainedFragments kept = s.retained;
        while (true) {
            long next = Math.max(s.sendNext, kept.end());
            long inFlight = next - s.sendAcked;
            // with nothing in flight a full ring (window 0) still gets this one, as the probe
            long window = Math.max(s.window, kept.isEmpty() ? 1 : 0);
            if (s.sendNext >= kept.end() && inFlight < window && kept.size() < kept.slots()) {
                break;
            }
            pumpKept(dest);
            awaitReplies(s.sendTimer.timeoutNanos(), dest);
            throwRefusal(s, dest);
        }
        resendHole(dest);
        int bytes = n * size;
        long sequence = Math.max(s.sendNext, kept.end());
        header(OP_SEND, dest).flags(last ? FLAG_END_OF_MESSAGE : 0).datatype(datatype).tag(tag).sequence(sequence)
                .ack(statedSize).argument(n).payloadLength(bytes);
        out.put(HEADER_LENGTH, src, at, bytes);
        long now = System.nanoTime();
        if (kept.isEmpty()) {
            s.sendProgressAt = now;
            s.sendTimer.progress();
        }
        kept.keep(sequence, out, HEADER_LENGTH + bytes);
        transmit(dest);
        s.sendNext = sequence + 1;
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        if (s.timedSequence < 0) {
            s.timedSequence = sequence;
            s.timedAt = now;
        }
    }

    /** Sends the hole the proxy's replies showed again, if it is still not acknowledged. */
    private void resendHole(int dest) {
        RankState s = ranks[dest];
        long hole = s.hole;
        if (hole >= 0) {
            s.hole = -1;
            if (hole >= s.sendAcked && s.retained != null && s.retained.holds(hole)) {
                s.holeResent = hole;
                s.holeSentBefore = s.sentEnd;
                resendKept(dest, hole);
            }
        }
    }

    /** Sends the kept fragments from {@code sendNext} on, as far as the window allows. */
    private void pumpKept(int dest) {
        resendHole(dest);
        RankState s = ranks[dest];
        long limit = s.sendAcked + Math.max(s.window, 0);
        s.sendNext = Math.max(s.sendNext, s.sendAcked);
        while (s.retained != null && s.sendNext < s.retained.end() && s.sendNext < limit) {
            resendKept(dest, s.sendNext);
            s.sendNext++;
        }
    }

    private void resendKept(int dest, long sequence) {
        RankState s = ranks[dest];
        if (sequence <= s.timedSequence) {
            s.timedSequence = -1; // its acknowledgement could answer either copy
        }
        s.sentEnd = Math.max(s.sentEnd, sequence + 1);
        out.clear();
        ranks[dest].retained.copy(sequence, out);
        transmit(dest);
    }

    /**
     * Eager fragments whose acknowledgement is overdue go out again from the first one not
     * acknowledged (one only while the window is 0: a probe), with the timeout doubled; called
     * after every wait for datagrams, whatever the call waits for, so that a rank waiting for an
     * eager message that was lost gets it while the host waits in {@code recv} or {@code finish}.
     */
    private void resendOverdue() {
        long now = System.nanoTime();
        // every send comes here: the ranks are looked through once per millisecond at most
        if (now - lastOverdueScan < OVERDUE_SCAN_NANOS) {
            return;
        }
        lastOverdueScan = now;
        for (int r = 1; r < ranks.length; r++) {
            RankState s = ranks[r];
            RetainedFragments kept = s.retained;
            if (kept == null || s.sendResult != MpiErrors.SUCCESS) {
                continue;
            }
            // acknowledgements released what they covered as they came
            if (kept.isEmpty() || s.at.dead) {
                continue;
            }
            resendHole(r);
            if (now - s.sendProgressAt >= s.sendTimer.timeoutNanos()) {
                s.sendNext = s.sendAcked;
                if (s.window <= 0) {
                    if (kept.holds(s.sendNext)) {
                        resendKept(r, s.sendNext);
                        s.sendNext++;
                    }
                } else {
                    pumpKept(r);
                }
                s.sendTimer.backOff();
                s.sendProgressAt = now;
            } else if (s.sendNext < kept.end()) {
                // a window update after a full ring sent us back: the kept ones go out again now
                pumpKept(r);
            }
        }
    }

    /**
     * Throws the refusal of a SEND to rank {@code dest} (once), of a message sent by this call or
     * an earlier one. The fragments after the refused one were not stored: they are dropped, and
     * the next message starts from the refused fragment's sequence.
     */
    private void throwRefusal(RankState s, int dest) {
        int result = s.sendResult;
        if (result == MpiErrors.SUCCESS) {
            return;
        }
        s.sendResult = MpiErrors.SUCCESS;
        // the refused fragment is the first not acknowledged; its kept copy states its message's size
        long bytes = -1;
        if (s.retained != null) {
            if (s.retained.holds(s.sendAcked)) {
                bytes = s.retained.statedSize(s.sendAcked);
            }
            s.retained.dropFrom(s.sendAcked);
        }
        s.sendNext = s.sendAcked;
        s.resentFrom = s.sendAcked;
        s.hole = -1;
        s.holeResent = -1;
        s.sentEnd = s.sendAcked;
        s.timedSequence = -1;
        if (result == MpiErrors.ERR_MESSAGE_TOO_LARGE) {
            throw new MpiException(result, "rank " + dest + " on " + s.node + " refused a message"
                    + (bytes > 0 ? " of " + bytes + " bytes" : "")
                    + ": the proxy's maximum message size (v2.max.message.bytes) is " + s.sendRefusalArgument
                    + " bytes (" + MpiErrors.name(result) + "); the messages sent after it were dropped");
        }
        throw new MpiException(result, "rank " + dest + " refused data: " + MpiErrors.name(result)
                + "; the messages sent after it were dropped");
    }

    /** @return whether fragments sent to the rank wait for the proxy's acknowledgement */
    private static boolean unacknowledged(RankState s) {
        return s.retained != null && s.sendAcked < s.retained.end();
    }

    /** Waits until every eager fragment was acknowledged, or its node is given up; before TERMINATE. */
    private void drainEager() {
        long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE : System.nanoTime() + timeoutNanos;
        for (int r = 1; r < ranks.length; r++) {
            RankState s = ranks[r];
            while (unacknowledged(s) && s.sendResult == MpiErrors.SUCCESS
                    && !s.at.dead && s.execResult == MpiErrors.SUCCESS && System.nanoTime() < deadline) {
                try {
                    pumpKept(r);
                    awaitReplies(s.sendTimer.timeoutNanos(), r);
                } catch (MpiException e) {
                    diagnostics.println("mpi: " + e.getMessage() + "; " + (s.retained.end() - s.sendAcked)
                            + " fragments sent to rank " + r + " were not acknowledged");
                    break;
                }
            }
            if (s.sendResult != MpiErrors.SUCCESS) {
                diagnostics.println("mpi: rank " + r + " refused data sent without waiting: "
                        + MpiErrors.name(s.sendResult));
            }
        }
    }

    @Override
    public void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
        io.lock();
        try {
            recvLocked(datatype, dst, offset, count, source);
        } finally {
            io.unlock();
        }
    }

    private void recvLocked(int datatype, ByteBuffer dst, int offset, int count, int source) {
        RankState s = ranks[source];
        int size = MpiDatatype.sizeOf(datatype);
        int got = 0;
        long rto = INITIAL_RTO_NANOS;
        long lastProgress = System.nanoTime();
        boolean asked = false;
        while (got < count) {
            if (s.queued > 0) {
                int type = s.queueType[s.queueHead];
                if (type != datatype) {
                    throw new MpiException(MpiErrors.ERR_TYPE, "rank " + source + " sent "
                            + MpiDatatype.ofCode(type) + ", not " + MpiDatatype.ofCode(datatype));
                }
                int base = s.queueHead * datagramSize;
                int n = Math.min(count - got, (s.queueLength[s.queueHead] - s.headAt) / size);
                dst.put(offset + got * size, s.queue, base + s.headAt, n * size);
                s.headAt += n * size;
                got += n;
                if (s.headAt == s.queueLength[s.queueHead]) {
                    s.queueHead = (s.queueHead + 1) % RECV_WINDOW;
                    s.queued--;
                    s.headAt = 0;
                }
                lastProgress = System.nanoTime();
                rto = INITIAL_RTO_NANOS;
                continue;
            }
            if (s.recvResult != MpiErrors.SUCCESS) {
                int result = s.recvResult;
                throw new MpiException(result, "rank " + source + " ended before sending " + count + " elements ("
                        + MpiErrors.name(result) + ")");
            }
            // the queue is empty here: a new window cannot overflow it
            boolean drained = asked && drained(s);
            if (!asked || s.recvNext >= s.recvEnd || drained || System.nanoTime() - lastProgress >= rto) {
                if (asked && s.recvNext < s.recvEnd && !drained) {
                    rto = Math.min(rto * 2, MAX_RTO_NANOS);
                }
                header(OP_RECV, source).sequence(s.recvNext).argument(RECV_WINDOW);
                transmit(source);
                s.recvEnd = s.recvNext + RECV_WINDOW;
                s.recvAskedFrom = s.recvNext;
                asked = true;
                lastProgress = System.nanoTime();
            }
            awaitReplies(rto, source);
        }
    }

    /**
     * Whether enough fragments arrived since the last RECV to acknowledge them early: the proxy
     * keeps unacknowledged data in the rank's ring, so a rank with a full ring waits for this
     * acknowledgement. Called with the queue empty (every arrived fragment was delivered).
     */
    private boolean drained(RankState s) {
        return s.recvNext - s.recvAskedFrom >= EARLY_ACK_BYTES / maxPayload + 1;
    }

    @Override
    public int[] sources() {
        int[] sources = new int[ranks.length - 1];
        for (int r = 1; r < ranks.length; r++) {
            sources[r - 1] = r;
        }
        return sources;
    }

    @Override
    public TaggedMessage nextMessage(int source, long waitNanos) {
        io.lock();
        try {
            return nextMessageLocked(source, waitNanos);
        } finally {
            io.unlock();
        }
    }

    private TaggedMessage nextMessageLocked(int source, long waitNanos) {
        RankState s = ranks[source];
        long start = System.nanoTime();
        long deadline = waitNanos >= Long.MAX_VALUE - start ? Long.MAX_VALUE : start + waitNanos;
        while (true) {
            TaggedMessage m = takeQueued(s, source);
            if (m != null) {
                return m;
            }
            if (s.recvResult != MpiErrors.SUCCESS) {
                throw new MpiException(s.recvResult, "rank " + source + " ended before sending a whole message ("
                        + MpiErrors.name(s.recvResult) + ")");
            }
            long now = System.nanoTime();
            if (now >= deadline) {
                return null;
            }
            askIfDue(s, source, now);
            awaitReplies(Math.min(s.pullRto, deadline - now), source);
        }
    }

    /** @return the next whole message of the rank's queued fragments, or null (a partial one is kept) */
    private TaggedMessage takeQueued(RankState s, int source) {
        while (s.queued > 0) {
            int head = s.queueHead;
            if (s.assembly == null) {
                s.assembly = new MessageAssembly(s.queueType[head], s.queueTag[head]);
            }
            int bytes = s.queueLength[head] - s.headAt;
            s.assembly.append(s.queueType[head], s.queue, head * datagramSize + s.headAt, bytes);
            boolean end = s.queueEnd[head];
            s.queueHead = (s.queueHead + 1) % RECV_WINDOW;
            s.queued--;
            s.headAt = 0;
            s.pullLastProgress = System.nanoTime();
            s.pullRto = INITIAL_RTO_NANOS;
            if (end) {
                TaggedMessage m = s.assembly.message(source);
                s.assembly = null;
                return m;
            }
        }
        return null;
    }

    /** Asks the rank's proxy for its next fragments when no ask is out or the last one is overdue. */
    private void askIfDue(RankState s, int source, long now) {
        if (s.queued > 0) {
            return;
        }
        // the queue is empty here: a new window cannot overflow it
        boolean drained = s.pullAsked && drained(s);
        if (!s.pullAsked || s.recvNext >= s.recvEnd || drained || now - s.pullLastProgress >= s.pullRto) {
            if (s.pullAsked && s.recvNext < s.recvEnd && !drained) {
                s.pullRto = Math.min(s.pullRto * 2, MAX_RTO_NANOS);
            }
            header(OP_RECV, source).sequence(s.recvNext).argument(RECV_WINDOW);
            transmit(source);
            s.recvEnd = s.recvNext + RECV_WINDOW;
            s.recvAskedFrom = s.recvNext;
            s.pullAsked = true;
            s.pullLastProgress = now;
        }
    }

    /**
     * Receives from every rank at once, for a caller that matches messages itself: keeps a RECV
     * out to every rank that may still send, takes what arrived within {@code waitNanos}, and hands
     * each whole message to {@code sink} in the order of each rank's stream.
     *
     * @param waitNanos how long to wait for datagrams when none is queued; 0 polls the socket once
     * @param sink      receives whole messages
     * @return the number of messages handed to {@code sink}
     * @throws MpiException when a rank's node stopped answering (after {@code deadAfter} of silence)
     */
    public int pollMessages(long waitNanos, java.util.function.Consumer<TaggedMessage> sink) {
        io.lock();
        try {
            int n = drainQueued(sink);
            if (n > 0) {
                return n;
            }
            long now = System.nanoTime();
            for (int r = 1; r < ranks.length; r++) {
                if (ranks[r].recvResult == MpiErrors.SUCCESS) {
                    askIfDue(ranks[r], r, now);
                }
            }
            if (waitNanos <= 0) {
                try {
                    receiveAvailable();
                    receiveProbes();
                } catch (IOException e) {
                    throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
                }
                resendOverdue();
            } else {
                awaitReplies(waitNanos, WATCH_RUNNING);
            }
            return drainQueued(sink);
        } finally {
            io.unlock();
        }
    }

    private int drainQueued(java.util.function.Consumer<TaggedMessage> sink) {
        int n = 0;
        for (int r = 1; r < ranks.length; r++) {
            TaggedMessage m;
            while ((m = takeQueued(ranks[r], r)) != null) {
                sink.accept(m);
                n++;
            }
        }
        return n;
    }

    /**
     * Checks the nodes of every rank that may still send, probing a silent one.
     *
     * @throws MpiException when one stopped answering
     */
    public void checkNodes() {
        io.lock();
        try {
            awaitReplies(0, WATCH_RUNNING);
        } finally {
            io.unlock();
        }
    }

    @Override
    public TaggedMessage takePartial(int source) {
        io.lock();
        try {
            MessageAssembly a = ranks[source].assembly;
            ranks[source].assembly = null;
            return a == null ? null : a.message(source);
        } finally {
            io.unlock();
        }
    }

    @Override
    public int[] finish() {
        io.lock();
        try {
            return finishLocked();
        } finally {
            io.unlock();
        }
    }

    private int[] finishLocked() {
        if (exitStatuses != null) {
            return exitStatuses.clone();
        }
        launching = false;
        int[] statuses = new int[ranks.length];
        try {
            drainEager();
            long rto = INITIAL_RTO_NANOS;
            long now = System.nanoTime();
            for (Node n : nodes.values()) {
                n.lastHeard = now;
                n.silentFrom = now;
                n.lastWatched = now;
            }
            // a proxy answers TERMINATE once the rank exited; until then its interim replies show it alive
            long deadline = timeoutNanos == Long.MAX_VALUE ? Long.MAX_VALUE
                    : now + timeoutNanos + TimeUnit.SECONDS.toNanos(45);
            while (true) {
                boolean pending = false;
                for (int r = 1; r < ranks.length; r++) {
                    if (awaitsTerminate(r)) {
                        pending = true;
                        header(OP_TERMINATE, r).core(ranks[r].node.coreId());
                        transmit(r);
                    }
                }
                if (!pending || System.nanoTime() >= deadline) {
                    break;
                }
                try {
                    awaitRepliesFor(rto, WATCH_TERMINATING, this::terminatesAnswered);
                } catch (MpiException e) {
                    diagnostics.println("mpi: " + e.getMessage());
                    break;
                }
                // ask at least four times per silence: each repetition earns an interim reply from a live node
                rto = Math.min(Math.min(rto * 2, MAX_RTO_NANOS), Math.max(INITIAL_RTO_NANOS, silenceNanos / 4));
            }
            for (int r = 1; r < ranks.length; r++) {
                RankState s = ranks[r];
                if (s.terminateResult < 0) {
                    statuses[r] = -1;
                    if (s.execResult >= 0 && !s.at.dead) {
                        diagnostics.println("mpi: no TERMINATE reply for rank " + r + " from " + s.node);
                    }
                } else {
                    statuses[r] = s.terminateResult == MpiErrors.SUCCESS ? (int) s.terminateStatus : -1;
                    if (statuses[r] != 0) {
                        diagnostics.println("mpi: rank " + r + " on " + s.node + " exited with status " + statuses[r]);
                    }
                }
            }
        } finally {
            closeSocket();
        }
        exitStatuses = statuses;
        return statuses.clone();
    }

    private void closeSocket() {
        closed = true;
        Selector own = outputSelector;
        if (own != null) {
            own.wakeup();
        }
        try {
            selector.close();
            channel.close();
            for (Node n : nodes.values()) {
                if (n.probe != null) {
                    n.probe.close();
                }
            }
        } catch (IOException e) {
            diagnostics.println("mpi: closing the socket failed: " + e);
        }
    }

    // ------------------------------------------------------------------ datagrams

    private V2HeaderFlyweight header(int op, int rank) {
        out.clear();
        return outHeader.reset(op, 0).keyId(keyId).nodeId(ranks[rank].auth.nodeId()).jobId(jobId).rank(rank);
    }

    private void transmit(int rank) {
        long nonce = random.nextLong();
        ranks[rank].at.sent(nonce);
        outHeader.timestamp(System.currentTimeMillis()).nonce(nonce);
        int length = ranks[rank].auth.sign(out, 0);
        out.limit(length).position(0);
        try {
            // 0 bytes sent (socket buffer full) is a loss like any other: retransmission recovers it
            channel.send(out, ranks[rank].address);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "sending to " + ranks[rank].node + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * Waits up to {@code waitNanos} for datagrams and handles every one that arrived, then checks
     * the nodes the caller waits for: probes those silent for {@link #PROBE_NANOS}, and fails the
     * call for a node that refused a request of ours, whose port is unreachable or that stayed
     * silent for the dead-node silence.
     *
     * @param waitNanos how long to wait for the first datagram
     * @param watched   the rank whose node's silence fails the call ({@link #WATCH_EXECS}: every rank
     *                  with a pending EXEC; {@link #WATCH_TERMINATING}: every rank whose TERMINATE
     *                  reply is awaited, whose node is then given up instead; 0: none)
     */
    private void awaitReplies(long waitNanos, int watched) {
        try {
            long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos));
            if (selector.select(millis) > 0) {
                selector.selectedKeys().clear();
            }
            receiveAvailable();
            receiveProbes();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
        }
        resendOverdue();
        if (watched == 0) {
            return;
        }
        long now = System.nanoTime();
        for (int r = 1; r < ranks.length; r++) {
            boolean watchedRank = watched == r || (watched == WATCH_EXECS && ranks[r].execResult < 0)
                    || (watched == WATCH_TERMINATING && awaitsTerminate(r))
                    || (watched == WATCH_RUNNING && ranks[r].recvResult == MpiErrors.SUCCESS);
            if (!watchedRank) {
                continue;
            }
            Node n = ranks[r].at;
            if (n.lastWatched != now) {
                if (now - n.lastWatched > WAIT_GAP_NANOS) {
                    // no call waited for the node meanwhile: silence counts only while one waits
                    n.silentFrom = now;
                }
                n.lastWatched = now;
                if (now - Math.max(n.lastHeard, n.silentFrom) >= PROBE_NANOS && now - n.probeSentAt >= PROBE_NANOS) {
                    probe(n, now);
                }
            }
            String failure = failure(n, now);
            if (failure == null) {
                continue;
            }
            if (watched == WATCH_TERMINATING) {
                n.dead = true;
                diagnostics.println("mpi: rank " + r + " on " + ranks[r].node + ": " + failure
                        + "; not waiting for its TERMINATE reply");
                continue;
            }
            throw new MpiException(MpiErrors.ERR_OTHER, "rank " + r + " on " + ranks[r].node + ": " + failure);
        }
    }

    /** @return why the node fails the calls that wait for it, or null while it may still answer */
    private String failure(Node n, long now) {
        if (n.refusal != null) {
            return n.refusal;
        }
        if (n.unreachable && now - n.unreachableSince >= (launching ? PROBE_NANOS : UNREACHABLE_NANOS)) {
            return "no proxy answers at " + n.where() + ": nothing listens on that UDP port (ICMP port unreachable"
                    + (launching ? "" : "; the proxy stopped") + ")";
        }
        if (silenceNanos != Long.MAX_VALUE && now - Math.max(n.lastHeard, n.silentFrom) > silenceNanos) {
            return "no proxy answers at " + n.where() + ": nothing heard for "
                    + TimeUnit.NANOSECONDS.toMillis(silenceNanos) + " ms, no refusal and no ICMP error (the node may"
                    + " be down or unreachable): declared dead";
        }
        return null;
    }

    /**
     * Sends the node a probe, STATUS of job 0 (docs/protocol-v2.md 5.6), from a socket connected to
     * it: a live proxy answers at once, even while it launches or stops a rank; a port where
     * nothing listens makes the next receive on that socket fail (ICMP port unreachable), which
     * the shared unconnected socket never reports.
     */
    private void probe(Node n, long now) {
        n.probeSentAt = now;
        try {
            if (n.probe == null) {
                DatagramChannel c = DatagramChannel.open();
                try {
                    c.configureBlocking(false);
                    c.connect(n.address);
                    c.register(selector, SelectionKey.OP_READ);
                } catch (IOException | RuntimeException e) {
                    c.close();
                    throw e;
                }
                n.probe = c;
            }
            long nonce = random.nextLong();
            n.sent(nonce);
            probeOut.clear();
            probeHeader.reset(OP_STATUS, 0).keyId(keyId).nodeId(n.auth.nodeId()).jobId(0).rank(0).sequence(nonce)
                    .timestamp(System.currentTimeMillis()).nonce(nonce);
            int length = n.auth.sign(probeOut, 0);
            probeOut.limit(length).position(0);
            n.probe.write(probeOut);
        } catch (PortUnreachableException e) {
            unreachable(n, now);
        } catch (IOException e) {
            // not fatal: a lost probe is like a lost reply; the dead-node silence still applies
            diagnostics.println("mpi: probing " + n.entry + " failed: " + e.getMessage());
        }
    }

    private static void unreachable(Node n, long now) {
        if (!n.unreachable) {
            n.unreachable = true;
            n.unreachableSince = now;
        }
    }

    /** Reads every probe socket: replies to probes, refusals and ICMP errors. */
    private void receiveProbes() {
        long now = System.nanoTime();
        for (Node n : nodes.values()) {
            if (n.probe == null) {
                continue;
            }
            while (true) {
                in.clear();
                int length;
                try {
                    length = n.probe.read(in);
                } catch (PortUnreachableException e) {
                    unreachable(n, now);
                    continue;
                } catch (IOException e) {
                    break;
                }
                if (length <= 0) {
                    break;
                }
                in.flip();
                if (V2RefusalDescriptor.isRefusal(in, 0, length)) {
                    onRefusal(n);
                } else if (length >= V2HeaderDescriptor.MIN_DATAGRAM_LENGTH
                        && n.auth.verifyReply(in, 0, length, System.currentTimeMillis()) == V2Authenticator.OK
                        && inHeader.wrap(in, 0).operation() == OP_STATUS && (inHeader.flags() & FLAG_REPLY) != 0
                        && inHeader.jobId() == 0 && n.wasSent(inHeader.sequence())) {
                    n.heard(now);
                } else {
                    refused++;
                }
            }
        }
    }

    /**
     * A refusal (docs/protocol-v2.md 3.5) is not authenticated: it counts only when it names the
     * nonce of a request sent to that node lately. Forging one needs that nonce, i.e. seeing our
     * requests on their way, which already allows dropping them.
     */
    private void onRefusal(Node n) {
        if (n != null && n.wasSent(V2RefusalDescriptor.nonce(in, 0))) {
            n.refusal = V2RefusalDescriptor.describe(V2RefusalDescriptor.reason(in, 0), V2RefusalDescriptor.keyId(in, 0));
        } else {
            refused++;
        }
    }

    /** Waits up to {@code nanos} for replies, less when {@code done} turns true. */
    private void awaitRepliesFor(long nanos, int watched, java.util.function.BooleanSupplier done) {
        long end = System.nanoTime() + nanos;
        long left = nanos;
        do {
            awaitReplies(left, watched);
            left = end - System.nanoTime();
        } while (left > 0 && !done.getAsBoolean());
    }

    private int execsDone() {
        int n = 0;
        for (int r = 1; r < ranks.length; r++) {
            n += ranks[r].execResult == MpiErrors.SUCCESS ? 1 : 0;
        }
        return n;
    }

    private boolean execsAnswered() {
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].execResult < 0) {
                return false;
            }
        }
        return true;
    }

    private boolean terminatesAnswered() {
        for (int r = 1; r < ranks.length; r++) {
            if (awaitsTerminate(r)) {
                return false;
            }
        }
        return true;
    }

    /** Whether rank r's TERMINATE reply is still awaited (its node not given up). */
    private boolean awaitsTerminate(int r) {
        return ranks[r].terminateResult < 0 && ranks[r].execResult >= 0 && !ranks[r].at.dead;
    }

    /** @return interim replies ("alive, still terminating") received for rank {@code rank}'s TERMINATE */
    public long terminateInterims(int rank) {
        io.lock();
        try {
            return ranks[rank].terminateInterims;
        } finally {
            io.unlock();
        }
    }

    /** Handles every datagram waiting in the socket, then acknowledges the output streams that moved. */
    private void receiveAvailable() throws IOException {
        int handled = 0;
        while (true) {
            in.clear();
            InetSocketAddress from = (InetSocketAddress) channel.receive(in);
            if (from == null) {
                break;
            }
            in.flip();
            if (V2RefusalDescriptor.isRefusal(in, 0, in.remaining())) {
                onRefusal(nodes.get(from));
                continue;
            }
            onDatagram(in.remaining());
            // while output keeps coming, acknowledge as we go, or the proxies would time out and send again
            if (output != null && ++handled % ACK_EVERY == 0) {
                sendOutputAcks();
            }
        }
        if (output != null) {
            sendOutputAcks();
        }
    }

    private void onDatagram(int length) {
        if (length < V2HeaderDescriptor.MIN_DATAGRAM_LENGTH) {
            refused++;
            return;
        }
        inHeader.wrap(in, 0);
        long rankId = inHeader.rank();
        if (inHeader.magic() != V2HeaderDescriptor.MAGIC || rankId < 1 || rankId >= ranks.length) {
            refused++;
            return;
        }
        RankState s = ranks[(int) rankId];
        if (s.auth.verifyReply(in, 0, length, System.currentTimeMillis()) != V2Authenticator.OK
                || inHeader.jobId() != jobId || (inHeader.flags() & FLAG_REPLY) == 0) {
            refused++;
            return;
        }
        s.at.heard(System.nanoTime());
        int result = inHeader.result();
        switch (inHeader.operation()) {
            case OP_EXEC:
                if (s.execResult < 0) {
                    s.execResult = result;
                    if (result != MpiErrors.SUCCESS && inHeader.payloadLength() > 0) {
                        byte[] text = new byte[inHeader.payloadLength()];
                        in.get(HEADER_LENGTH, text);
                        s.execReason = new String(text, StandardCharsets.UTF_8);
                    }
                }
                break;
            case OP_SEND:
                onSendReply(s, result);
                break;
            case OP_RECV:
                onData(s, result);
                break;
            case OP_OUTPUT:
                onOutput(s, (int) rankId);
                break;
            case OP_TERMINATE:
                if (s.terminateResult < 0) {
                    s.terminateResult = result;
                    s.terminateStatus = inHeader.argument();
                }
                break;
            case OP_STATUS:
                // the interim reply to a repeated TERMINATE (docs/protocol-v2.md 5.4): the node is
                // alive (lastHeard moved above), the rank still terminating; keep waiting
                s.terminateInterims++;
                break;
            default:
                refused++;
                break;
        }
    }

    /**
     * The reply to a SEND fragment: a cumulative acknowledgement (every fragment before {@code ack}
     * is stored) with the window, or a refusal. A reply to fragment {@code sequence} whose
     * acknowledgement stops below it says the proxy missed the fragments between (lost or
     * reordered on the way; the proxy holds a few past a hole): the first not acknowledged goes
     * out again at once, instead of after the retransmit timeout. Once per loss: replies to
     * fragments sent before that resend say the same and are not acted on again. The reply to
     * that resend acknowledging less than was sent before it shows the next one lost too.
     */
    private void onSendReply(RankState s, int result) {
        long ack = inHeader.ack();
        int window = (int) inHeader.argument();
        boolean advanced = ack > s.sendAcked;
        if (advanced) {
            s.sendAcked = ack;
            s.sendNext = Math.max(s.sendNext, ack);
            long now = System.nanoTime();
            s.sendProgressAt = now;
            if (s.timedSequence >= 0 && ack > s.timedSequence) {
                s.sendTimer.sample(now - s.timedAt);
                s.timedSequence = -1;
            } else {
                s.sendTimer.progress();
            }
            if (s.retained != null) {
                s.retained.release(ack);
            }
        }
        if (result != MpiErrors.SUCCESS) {
            s.sendResult = result;
            s.sendRefusalArgument = inHeader.argument();
            return;
        }
        if (ack < s.sendAcked) {
            return; // an old reply, overtaken by a later one
        }
        long sequence = inHeader.sequence();
        if (sequence > ack && window > 0 && sequence >= s.resentFrom && s.sendResult == MpiErrors.SUCCESS
                && s.retained != null && s.retained.holds(ack)) {
            // the proxy got a fragment past a hole (and holds it): the hole goes out again now
            s.resentFrom = s.retained.end();
            s.hole = ack;
        } else if (sequence == s.holeResent && ack > sequence && window > 0 && s.sendResult == MpiErrors.SUCCESS) {
            // the hole sent again filled it, but the proxy still misses a fragment sent before it:
            // datagrams between two nodes keep their order, so that one was lost too
            s.holeResent = -1;
            if (ack < s.holeSentBefore && s.retained != null && s.retained.holds(ack)) {
                s.resentFrom = s.retained.end();
                s.hole = ack;
            }
        }
        if (advanced) {
            s.window = window;
            s.sendStalled = window == 0;
        } else {
            onWindow(s, window);
        }
    }

    /**
     * An acknowledgement that stores nothing new: a refusal for a full ring (window 0) or, after
     * one, the proxy's window update (docs/protocol-v2.md 5.2), which makes the fragments from
     * the refused one go out again now rather than after the retransmit timeout.
     */
    private static void onWindow(RankState s, int window) {
        if (window == 0) {
            s.sendStalled = true;
        } else if (s.sendStalled) {
            s.sendStalled = false;
            s.sendNext = s.sendAcked;
        }
        s.window = window;
    }

    /** One OUTPUT fragment: taken when it is the next of its stream, acknowledged in any case. */
    private void onOutput(RankState s, int rank) {
        int code = inHeader.tag();
        if (output == null || (code != V2HeaderDescriptor.STREAM_STDOUT && code != V2HeaderDescriptor.STREAM_STDERR)) {
            refused++;
            return;
        }
        int i = code - V2HeaderDescriptor.STREAM_STDOUT;
        s.ackDue[i] = true;
        if (s.out[i] == null) {
            s.out[i] = new OutputStreamReceiver(handlerOf(rank, i == 1), 0);
        }
        s.out[i].onFragment(inHeader, in, 0);
    }

    /** @return where the lines of one stream of a rank go: the program's handler, its failures reported */
    private OutputStreamReceiver.Lines handlerOf(int rank, boolean stderr) {
        return new OutputStreamReceiver.Lines() {
            @Override
            public void onLine(String line, boolean partial) {
                try {
                    output.onLine(rank, stderr, line, partial);
                } catch (RuntimeException e) {
                    diagnostics.println("mpi: the output handler failed on a line of rank " + rank + ": " + e);
                }
            }

            @Override
            public void onDropped(long lines) {
                try {
                    output.onDropped(rank, stderr, lines);
                } catch (RuntimeException e) {
                    diagnostics.println("mpi: the output handler failed: " + e);
                }
            }
        };
    }

    private void sendOutputAcks() {
        for (int r = 1; r < ranks.length; r++) {
            RankState s = ranks[r];
            for (int i = 0; i < 2; i++) {
                if (!s.ackDue[i]) {
                    continue;
                }
                s.ackDue[i] = false;
                ackOut.clear();
                long nonce = random.nextLong();
                s.at.sent(nonce);
                ackHeader.reset(OP_OUTPUT, 0).keyId(keyId).nodeId(s.auth.nodeId()).jobId(jobId).rank(r)
                        .tag(V2HeaderDescriptor.STREAM_STDOUT + i).ack(s.out[i] == null ? 0 : s.out[i].next())
                        .timestamp(System.currentTimeMillis()).nonce(nonce);
                int length = s.auth.sign(ackOut, 0);
                ackOut.limit(length).position(0);
                try {
                    // a lost acknowledgement is repaired by the next one: the proxy sends again
                    channel.send(ackOut, s.address);
                } catch (IOException e) {
                    diagnostics.println("mpi: acknowledging output to " + s.node + " failed: " + e.getMessage());
                }
            }
        }
    }

    private void startOutputThread() {
        try {
            outputSelector = Selector.open();
            channel.register(outputSelector, SelectionKey.OP_READ);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot watch the socket for output: " + e.getMessage(), e);
        }
        outputThread = new Thread(this::outputLoop, "mpi-output-" + Long.toHexString(jobId));
        outputThread.setDaemon(true);
        outputThread.start();
    }

    /** Between calls of the program, takes the ranks' output as it comes (under the lock every call holds). */
    private void outputLoop() {
        try (Selector own = outputSelector) {
            while (!closed) {
                own.select(1000);
                own.selectedKeys().clear();
                io.lock();
                try {
                    if (closed) {
                        break;
                    }
                    receiveAvailable();
                } finally {
                    io.unlock();
                }
            }
        } catch (IOException | java.nio.channels.ClosedSelectorException e) {
            if (!closed) {
                diagnostics.println("mpi: receiving output failed: " + e);
            }
        } catch (RuntimeException e) {
            diagnostics.println("mpi: receiving output failed: " + e);
        }
    }

    private void onData(RankState s, int result) {
        if (inHeader.sequence() != s.recvNext || s.queued == RECV_WINDOW) {
            // a duplicate or one out of order: asked for again later
            return;
        }
        if (result == MpiErrors.SUCCESS && inHeader.argument() == 0) {
            // the empty answer: alive, nothing written yet
            return;
        }
        if (result != MpiErrors.SUCCESS) {
            s.recvResult = result;
            return;
        }
        int bytes = inHeader.payloadLength();
        if (s.queue == null) {
            s.queue = ByteBuffer.allocateDirect(RECV_WINDOW * datagramSize).order(ByteOrder.LITTLE_ENDIAN);
            s.queueType = new int[RECV_WINDOW];
            s.queueLength = new int[RECV_WINDOW];
            s.queueTag = new int[RECV_WINDOW];
            s.queueEnd = new boolean[RECV_WINDOW];
        }
        int slot = (s.queueHead + s.queued) % RECV_WINDOW;
        s.queue.put(slot * datagramSize, in, HEADER_LENGTH, bytes);
        s.queueType[slot] = inHeader.datatype();
        s.queueLength[slot] = bytes;
        s.queueTag[slot] = inHeader.tag();
        s.queueEnd[slot] = (inHeader.flags() & FLAG_END_OF_MESSAGE) != 0;
        s.queued++;
        s.recvNext++;
    }

    @Override
    public String toString() {
        return "V2HostTransport[job=" + Long.toHexString(jobId) + ", ranks=" + Arrays.toString(ranks) + "]";
    }
}
