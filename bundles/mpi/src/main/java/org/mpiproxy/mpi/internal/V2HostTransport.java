package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;

import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.RankOutputHandler;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Rank 0 over protocol v2 (docs/protocol-v2.md): a random job id, authenticated datagrams,
 * SEND fragments sent eagerly within a window, kept until acknowledged and sent again from a hole
 * the proxy's replies show or after a timeout with back-off, RECV pulled by sequence number,
 * idempotent EXEC and TERMINATE repeated until answered. A node that stays silent while a call
 * waits for it gets a probe (STATUS of job 0) from a socket connected to it, so that a port where
 * nothing listens shows at once (ICMP port unreachable); a refusal (docs/protocol-v2.md 3.5) that
 * answers a request sent here tells that authentication failed, or, when the proxy is busy (its
 * replay cache full), holds that node's requests back for a back-off after which they are sent
 * again, or, signing with a job key, has the job's credential presented to that node (5.9); a node
 * that answers nothing for the dead-node silence is declared dead. With a {@link RankOutputHandler},
 * every rank's output lines are streamed here (OUTPUT): they are received and acknowledged during
 * every call and, between calls, by a daemon thread, so ranks never wait for the host program to call.
 *
 * <p>A façade over its parts, which share one socket: {@link V2Exchange} (requests, replies and
 * the watch over silent nodes), {@link V2JobControl} (EXEC, TERMINATE), {@link V2SendStreams},
 * {@link V2RecvStreams} and {@link V2HostOutput}; the tunables of all of them are here.
 * One thread at a time: every call holds a lock, and the output thread takes turns with the
 * calls through it; the parts are not thread-safe and run only under it.
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
     * Fragments kept per rank for retransmission at most (fewer for large datagrams: about 2 MiB
     * per rank, allocated with the first eager send to it). Every message is sent eagerly:
     * {@code send} returns once its last fragment is sent and kept, before the proxy acknowledges
     * it. 2 MiB lets the host go on sending through the round trip that recovers a lost fragment
     * at 64 KiB datagrams: with 1 MiB it waited, and the stream under 10% loss lost a fifth of
     * its speed (docs/benchmarks.md, packet loss).
     */
    static final int EAGER_SLOTS = 256;
    static final int EAGER_BYTES_PER_RANK = 2 << 20;
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
    /** Nonces of the latest requests to a node, remembered to match refusals. */
    static final int NONCES = 64;

    private final V2Exchange exchange;
    private final V2SendStreams send;
    private final V2RecvStreams recv;
    /** Null when output is not streamed. */
    private final V2HostOutput output;
    private final V2JobControl job;
    private final ReentrantLock io = new ReentrantLock();

    private V2HostTransport(List<HostfileEntry> nodes, ClusterKeys keys, int datagramSize, Duration timeout,
                            PrintStream diagnostics, RankOutputHandler output, long jobId, int localPort,
                            LongSupplier epochClock, byte[] credential) throws IOException {
        this.exchange = new V2Exchange(nodes, keys, datagramSize, timeout, diagnostics, jobId, localPort, epochClock,
                credential);
        this.send = new V2SendStreams(exchange);
        this.recv = new V2RecvStreams(exchange, send);
        this.output = output == null ? null : new V2HostOutput(exchange, output);
        this.job = new V2JobControl(exchange, send, output != null);
        exchange.handTo(send, recv, this.output);
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
        return start(nodes, program, args, keys, datagramSize, timeout, deadAfter, diagnostics, output, jobId, localPort,
                System::currentTimeMillis);
    }

    /**
     * As {@link #start(List, String, List, ClusterKeys, int, Duration, Duration, PrintStream, RankOutputHandler,
     * long, int)}, with the wall clock of the requests' timestamps and of the check of the replies'
     * (the system's by default), so that a test can move the time the proxies see.
     *
     * @param epochClock milliseconds since the epoch
     * @return the started transport
     * @throws MpiException when a proxy refuses a rank or does not answer in time
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, Duration deadAfter,
                                        PrintStream diagnostics, RankOutputHandler output, long jobId,
                                        int localPort, LongSupplier epochClock) {
        return start(nodes, program, args, keys, datagramSize, timeout, deadAfter, diagnostics, output, jobId, localPort,
                epochClock, null);
    }

    /**
     * As {@link #start(List, String, List, ClusterKeys, int, Duration, Duration, PrintStream, RankOutputHandler,
     * long, int, LongSupplier)}, for a host that holds no cluster key (docs/protocol-v2.md 4.1): {@code keys}
     * is the job key ({@link ClusterKeys#ofJobKey}), and the job's credential is presented to every node
     * before the first EXEC and again to a node that refuses a request for want of it (5.9).
     *
     * @param jobId      the credential's job
     * @param credential the job's credential, 88 bytes; {@code null} when {@code keys} are cluster keys
     * @throws MpiException as the others, and when a node refuses the credential (with its reason)
     */
    public static V2HostTransport start(List<HostfileEntry> nodes, String program, List<String> args, ClusterKeys keys,
                                        int datagramSize, Duration timeout, Duration deadAfter,
                                        PrintStream diagnostics, RankOutputHandler output, long jobId,
                                        int localPort, LongSupplier epochClock, byte[] credential) {
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new MpiException(MpiErrors.ERR_ARG, problem);
        }
        byte[] command = new ExecCommand(program, args).toCommandLine().getBytes(StandardCharsets.UTF_8);
        V2HostTransport t;
        try {
            t = new V2HostTransport(nodes, keys, datagramSize, timeout, diagnostics, output, jobId, localPort,
                    epochClock, credential);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot open a UDP socket: " + e.getMessage(), e);
        }
        if (command.length > t.exchange.maxPayload) {
            t.exchange.closeSocket();
            throw new MpiException(MpiErrors.ERR_ARG, "command line is " + command.length + " bytes, more than "
                    + t.exchange.maxPayload);
        }
        try {
            t.deadAfter(deadAfter);
            t.io.lock();
            try {
                t.job.exec(command);
            } finally {
                t.io.unlock();
            }
            if (output != null) {
                t.output.start(t.io);
            }
            return t;
        } catch (RuntimeException e) {
            t.finish();
            throw e;
        }
    }

    /** @return the world size, rank 0 included */
    public int size() {
        return exchange.ranks.length;
    }

    /** @return this job's id */
    public long jobId() {
        return exchange.jobId;
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
        exchange.silenceNanos(silence.isZero() ? Long.MAX_VALUE : silence.toNanos());
        return this;
    }

    /**
     * Sets how long a node whose proxy stopped (its port closed, or silent) may take to come back
     * once the job runs, for jobs that outlive a restart of their nodes: the closed port and the
     * silence fail a call only after it. Without it a stopped proxy fails the job within seconds.
     *
     * @param wait the wait; zero = none
     * @return this transport
     */
    public V2HostTransport restartWait(Duration wait) {
        if (wait.isNegative()) {
            throw new IllegalArgumentException("restart wait " + wait + " is negative");
        }
        exchange.restartWaitNanos(wait.toNanos());
        return this;
    }

    /**
     * Sets the clock of the SEND streams' timers: their retransmit timeouts, their hole probes and
     * the age after which a kept copy is signed again ({@link System#nanoTime} by default), so that
     * a test can drive that time instead of waiting for it. The node watch, the launch and
     * {@code finish} keep the system's clock. Call it before the first send.
     *
     * @param nanoClock nanoseconds, never going back
     * @return this transport
     */
    public V2HostTransport sendClock(LongSupplier nanoClock) {
        io.lock();
        try {
            send.clock(nanoClock);
        } finally {
            io.unlock();
        }
        return this;
    }

    /** @return the silence after which a node is declared dead; zero = never */
    public Duration deadAfter() {
        long silenceNanos = exchange.silenceNanos();
        return silenceNanos == Long.MAX_VALUE ? Duration.ZERO : Duration.ofNanos(silenceNanos);
    }

    /** @return datagrams received and refused (not authentic, not for this job, malformed) */
    public long refusedDatagrams() {
        return exchange.refused();
    }

    /**
     * @return the SEND streams' counters: {@code send.fragments} (sent, first time or again),
     *         {@code send.resent.hole} (sent again at once for a hole a reply showed),
     *         {@code send.timeouts} (retransmit timeouts) and {@code send.resent.timeout} (sent
     *         again by them), {@code send.timeout.wait.micros} (how long the streams waited for
     *         them in all), {@code send.hole.probes} (holes sent once more when the reply to their
     *         resend was late); a snapshot
     */
    public Map<String, Long> sendCounters() {
        io.lock();
        try {
            return send.counters();
        } finally {
            io.unlock();
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
     * than they are streams through them. The proxy's acknowledgements come during later calls;
     * a refusal is thrown by the next call to that rank or by a wait for data from it, whichever
     * comes first ({@link #flush} waits for it). {@link #finish} waits for every acknowledgement.
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
            send.send(datatype, tag, src, offset, count, dest);
        } finally {
            io.unlock();
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
            send.flush(dest);
        } finally {
            io.unlock();
        }
    }

    @Override
    public void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
        io.lock();
        try {
            recv.recv(datatype, dst, offset, count, source);
        } finally {
            io.unlock();
        }
    }

    @Override
    public int[] sources() {
        return IntStream.range(1, exchange.ranks.length).toArray();
    }

    @Override
    public TaggedMessage nextMessage(int source, long waitNanos) {
        io.lock();
        try {
            return recv.nextMessage(source, waitNanos);
        } finally {
            io.unlock();
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
    public int pollMessages(long waitNanos, Consumer<TaggedMessage> sink) {
        io.lock();
        try {
            return recv.pollMessages(waitNanos, sink);
        } finally {
            io.unlock();
        }
    }

    /**
     * Checks the nodes of every rank that may still send, probing a silent one, for a caller that
     * waits for data from rank {@code awaited}: a refusal of a message sent to it is thrown now.
     *
     * @param awaited the rank waited for; negative: any rank; 0: none
     * @throws MpiException when one stopped answering, or when rank {@code awaited} refused a message
     */
    public void checkNodes(int awaited) {
        io.lock();
        try {
            exchange.awaitReplies(0, V2Exchange.WATCH_RUNNING);
            send.throwRefusalTo(awaited);
        } finally {
            io.unlock();
        }
    }

    @Override
    public TaggedMessage takePartial(int source) {
        io.lock();
        try {
            return recv.takePartial(source);
        } finally {
            io.unlock();
        }
    }

    @Override
    public int[] finish() {
        io.lock();
        try {
            return job.finish();
        } finally {
            io.unlock();
        }
    }

    /** @return interim replies ("alive, still terminating") received for rank {@code rank}'s TERMINATE */
    public long terminateInterims(int rank) {
        io.lock();
        try {
            return exchange.ranks[rank].terminateInterims;
        } finally {
            io.unlock();
        }
    }

    @Override
    public String toString() {
        return "V2HostTransport[job=" + Long.toHexString(exchange.jobId) + ", ranks=" + Arrays.toString(exchange.ranks)
                + "]";
    }
}
