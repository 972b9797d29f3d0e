package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_PLAIN;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/**
 * The launcher's own side of a v2 job whose ranks 1..N-1 it starts itself, whatever the program
 * (docs/protocol-v2.md 5.1, plain EXEC): it EXECs every rank from rank 0's port (so rank 0, when
 * it uses our library, owns the job on every node and talks to the ranks as before), with the
 * PLAIN flag and the port of its own output socket, which then receives every rank's output
 * (OUTPUT, acknowledged per stream and printed tagged) and watches the ranks with STATUS, so the
 * launcher learns at once when a rank failed or every rank ended. The ranks' output streams are
 * taken by {@link V2RankOutput}, the PMI fences sent to the nodes by {@link V2Fences}; a node
 * the job lost (silent, or its port closed) is found by {@link NodeWatch}.
 * <p>
 * Threads: {@link #exec} on the caller's; afterwards one daemon thread owns the output socket;
 * {@link #states} and {@link #close} may be called from any thread.
 */
final class V2Session implements AutoCloseable {

    /** How often a proxy is asked for the job's ranks while they run. */
    static final Duration WATCH_INTERVAL = Duration.ofMillis(250);
    /** How often right after {@link #watchClosely}: the end of a job is seen at once, then less often. */
    static final Duration CLOSE_WATCH_INTERVAL = Duration.ofMillis(5);
    private static final long EXEC_RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** A rank's state as its node last listed it. */
    record RankState(int state, int exitStatus) {
        boolean ended() {
            return state == V2StatusDescriptor.STATE_EXITED || state == V2StatusDescriptor.STATE_FAILED
                    || state == V2StatusDescriptor.STATE_FINISHED;
        }
    }

    /** An EXEC that failed: which rank, and the proxy's reason. */
    record Failure(int rank, String reason) {
    }

    private final long jobId;
    private final List<Placement> ranks;
    private final V2Control.Signer signer;
    private final DatagramChannel output;
    private final Selector selector;
    private final PrintStream err;
    private final Map<InetSocketAddress, List<Integer>> ranksByNode = new LinkedHashMap<>();
    private final Map<Integer, RankState> states = new HashMap<>();
    /** The rank {@link #failedRank} named first, 0 until one failed; guarded by {@code lock}. */
    private int firstFailed;
    private final Object lock = new Object();
    private final Runnable onChange;
    /** Every rank's output streams: printed, PMI lines handed on, acknowledged. */
    private final V2RankOutput rankOutput;
    /** The PMI fences to send to every node. */
    private final V2Fences fences;
    /** The dead-node rule: which node the job lost (docs/protocol-v2.md 7, "Dead"). */
    private NodeWatch watch;
    private volatile boolean closed;
    private Thread thread;
    /** The current interval between STATUS requests; doubles from the close watch back to the normal one. */
    private volatile long watchNanos = WATCH_INTERVAL.toNanos();

    /**
     * Opens the output socket.
     *
     * @param jobId the job
     * @param keys  the cluster keys
     * @param ranks placement of rank r at element r-1
     * @param out   where the ranks' standard output goes; also its lock
     * @param err   where their standard error goes; also its lock
     * @param tag      prefix lines with {@code [rank] }
     * @param onChange run (on the session's thread) whenever a node listed the ranks
     * @throws IOException when the socket cannot be opened
     */
    V2Session(long jobId, ClusterKeys keys, List<Placement> ranks, PrintStream out, PrintStream err, boolean tag,
              Runnable onChange) throws IOException {
        this(jobId, keys, null, ranks, out, err, tag, onChange);
    }

    /** As the constructor above; {@code credential}: the job's, when {@code keys} is its job key, else {@code null}. */
    V2Session(long jobId, ClusterKeys keys, V2Credential credential, List<Placement> ranks, PrintStream out,
              PrintStream err, boolean tag, Runnable onChange) throws IOException {
        this.jobId = jobId;
        this.onChange = onChange;
        this.ranks = ranks;
        this.signer = new V2Control.Signer(keys, credential);
        this.err = err;
        for (int r = 1; r <= ranks.size(); r++) {
            ranksByNode.computeIfAbsent(address(r), a -> new ArrayList<>()).add(r);
        }
        output = DatagramChannel.open();
        output.bind(new InetSocketAddress(0));
        output.configureBlocking(false);
        selector = Selector.open();
        output.register(selector, SelectionKey.OP_READ);
        fences = new V2Fences(jobId, signer, output, ranksByNode.keySet(), err);
        rankOutput = new V2RankOutput(jobId, ranks, signer, output, out, err, tag);
        watch = new NodeWatch(ranksByNode, NodeWatch.Times.DEFAULT, System::nanoTime, signer, selector);
    }

    /**
     * Sets the dead-node rule's times and clock; before {@link #start}.
     *
     * @param clock nanoseconds as {@link System#nanoTime}: the nodes' silence runs on it
     */
    void watch(NodeWatch.Times times, java.util.function.LongSupplier clock) {
        watch = new NodeWatch(ranksByNode, times, clock, signer, selector);
    }

    /** @return the node the running job lost first (it is not to be waited for), or {@code null} */
    NodeWatch.Lost lost() {
        return watch.lost();
    }

    private InetSocketAddress address(int rank) {
        Placement p = ranks.get(rank - 1);
        return new InetSocketAddress(p.address(), p.port());
    }

    /** @return the port of the output socket, which the EXECs name */
    int outputPort() {
        return output.socket().getLocalPort();
    }

    /**
     * Starts ranks 1..N-1: a plain EXEC each, from {@code hostPort}, repeated until every rank's
     * proxy answered. Output that arrives meanwhile is taken.
     *
     * @param hostPort    rank 0's port, free now; it is released again before this returns
     * @param program     the program's name on the nodes
     * @param args        its arguments
     * @param environment rank r's environment at element r-1
     * @param wait        how long to wait for every answer
     * @return the failures, empty when every rank started; a rank whose node never answered
     *         has the reason "no answer ..."
     * @throws IOException when the port cannot be bound or a socket fails
     * @throws IllegalArgumentException when a rank's EXEC does not fit one datagram with the job's
     *                                  common environment apart ({@link V2ExecPayloads})
     */
    List<Failure> exec(int hostPort, String program, List<String> args, List<Map<String, String>> environment,
                       Duration wait) throws IOException {
        int size = ranks.size() + 1;
        // too large for one EXEC: the job's common environment goes to each node first (5.10)
        V2ExecPayloads payloads = V2ExecPayloads.of(program, args, environment);
        boolean[] pending = new boolean[size];
        java.util.Arrays.fill(pending, 1, size, true);
        List<Failure> failures = new ArrayList<>();
        int flags = FLAG_PLAIN | FLAG_OUTPUT | payloads.flags();
        int outputPort = outputPort();
        V2Control.Signer execSigner = new V2Control.Signer(signer.keys, signer.credential);
        Map<Integer, String> lacking = payloads.send(ranksByNode, jobId, execSigner, wait);
        lacking.forEach((r, problem) -> {
            pending[r] = false;
            failures.add(new Failure(r, problem));
        });
        RequestRounds.run(hostPort, execSigner.in, wait, EXEC_RESEND_NANOS, new RequestRounds.Exchange() {
            private int left = size - 1 - lacking.size();

            @Override
            public void send(DatagramChannel channel) throws IOException {
                payloads.sendAgain(jobId, execSigner, wait);
                for (int r = 1; r < size; r++) {
                    if (pending[r] && !execSigner.holdsOff(address(r))) {
                        InetSocketAddress to = address(r);
                        channel.send(execSigner.request(to, OP_EXEC, jobId, r, ranks.get(r - 1).coreId(),
                                h -> h.flags(flags).tag(outputPort).argument(size), payloads.payload(r)), to);
                        if (r % 64 == 0) {
                            takeOutput(0);
                        }
                    }
                }
                takeOutput(0);
            }

            @Override
            public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in) throws IOException {
                if (execSigner.refused(source)) {
                    return; // busy: nothing was done; the EXEC goes again after the node's back-off
                }
                V2HeaderFlyweight h = execSigner.verify(source, jobId);
                long r = h == null || h.operation() != OP_EXEC ? -1 : h.rank();
                if (r < 1 || r >= size || !pending[(int) r] || !address((int) r).equals(source)
                        || h.result() == MpiErrors.ERR_NO_ENVIRONMENT && payloads.lost(source)) {
                    return; // (the node lost the environment: it has it again before the EXECs go again)
                }
                pending[(int) r] = false;
                left--;
                if (h.result() != MpiErrors.SUCCESS) {
                    byte[] reason = new byte[h.payloadLength()];
                    in.get(HEADER_LENGTH, reason);
                    failures.add(new Failure((int) r, MpiErrors.name(h.result()) + ": "
                            + new String(reason, StandardCharsets.UTF_8)));
                }
            }

            @Override
            public boolean done() {
                // a node that refused the job's credential presented again ends the job (the caller says so)
                return left == 0 || signer.credential != null && signer.credential.refusal() != null;
            }
        });
        takeOutput(0);
        for (int r = 1; r < size; r++) {
            if (pending[r]) {
                String refused = execSigner.refusals.problem(address(r));
                failures.add(new Failure(r, refused != null ? "refused by its proxy for " + wait.toSeconds() + " s: "
                        + refused : "no answer from its proxy in " + wait.toSeconds() + " s"));
            }
        }
        failures.sort(java.util.Comparator.comparingInt(Failure::rank));
        return failures;
    }

    /** @param lines gets every rank's PMI lines (rank, line) and returns a problem for the log, or null */
    void pmi(java.util.function.BiFunction<Integer, String, String> lines) {
        rankOutput.pmi(lines);
    }

    /**
     * Sends a finished fence to every node, repeated until each acknowledges every fragment.
     *
     * @param epoch the fence
     * @param pairs the pairs, cut into payloads ({@link org.mpiproxy.protocol.pmi.PmiSpace#encode})
     */
    void fence(int epoch, List<byte[]> pairs) {
        fences.add(epoch, pairs);
        selector.wakeup();
    }

    /**
     * Sends node attributes (PMI-2) to some nodes as fence 0, repeated until each acknowledges.
     *
     * @param number the delivery's number in the job, from 0 (its fragment index)
     * @param pairs  the pairs, one payload
     * @param nodes  the proxies of the machine they belong to
     */
    void nodeAttributes(int number, byte[] pairs, java.util.Collection<InetSocketAddress> nodes) {
        fences.addTo(0, number, 1, pairs, nodes);
        selector.wakeup();
    }

    /**
     * Asks the nodes for the ranks' states at once and then often, backing off to the normal
     * interval: when the job is about to end (rank 0 ended), its end is seen within milliseconds.
     */
    void watchClosely() {
        watchNanos = CLOSE_WATCH_INTERVAL.toNanos();
        selector.wakeup();
    }

    /** Starts the thread that takes output and watches the ranks until {@link #close}. */
    void start() {
        watch.start();
        thread = new Thread(this::run, "v2-session");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        long nextWatch = System.nanoTime();
        try {
            while (!closed) {
                long now = System.nanoTime();
                if (now - nextWatch >= 0) {
                    askStatus();
                    long interval = watchNanos;
                    nextWatch = now + interval;
                    watchNanos = Math.min(WATCH_INTERVAL.toNanos(), interval * 2);
                }
                if (watchNanos < nextWatch - now) {
                    // watchClosely() since the last request
                    nextWatch = now + watchNanos;
                }
                fences.send();
                long wait = fences.allAcknowledged() ? nextWatch - now
                        : Math.min(nextWatch - now, V2Fences.RESEND_NANOS);
                takeOutput(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
                if (watch.check(this::needed) != null) {
                    onChange.run();
                }
            }
        } catch (IOException e) {
            if (!closed) {
                err.println("mpiproxy: the output socket failed (" + e + "): no more output of ranks 1.."
                        + ranks.size());
            }
        }
    }

    private void askStatus() throws IOException {
        for (InetSocketAddress node : ranksByNode.keySet()) {
            if (!signer.holdsOff(node)) {
                output.send(signer.request(node, OP_STATUS, jobId, 0, 0, h -> h.sequence(0), null), node);
            }
        }
    }

    /** Receives what arrived (waiting up to {@code waitMillis} for the first datagram; 0: not at all). */
    private void takeOutput(long waitMillis) throws IOException {
        if (waitMillis > 0) {
            selector.select(waitMillis);
        } else {
            selector.selectNow();
        }
        selector.selectedKeys().clear();
        InetSocketAddress source;
        int taken = 0;
        while ((source = (InetSocketAddress) output.receive(signer.in.clear())) != null) {
            if (signer.refused(source)) {
                if (signer.refusals.busy(source)) {
                    watch.busy(source); // alive: asked again after its back-off
                }
                continue;
            }
            V2HeaderFlyweight h = ranksByNode.containsKey(source) ? signer.verify(source, jobId) : null;
            if (h == null) {
                continue;
            }
            watch.heard(source);
            if (h.operation() == V2HeaderDescriptor.OP_PMI) {
                fences.onReply(source, h);
            } else if (h.operation() == OP_STATUS) {
                onStatus(source, h);
            } else if (h.operation() == OP_OUTPUT) {
                rankOutput.onOutput(source, h);
                if (++taken % 16 == 0) {
                    rankOutput.ack();
                }
            }
        }
        rankOutput.ack();
    }

    private void onStatus(InetSocketAddress node, V2HeaderFlyweight h) {
        if (h.result() == MpiErrors.ERR_COMM) {
            // the job is gone from the node: its ranks were terminated (by rank 0's library) and forgotten
            synchronized (lock) {
                for (int r : ranksByNode.get(node)) {
                    RankState known = states.get(r);
                    if (known == null || !known.ended()) {
                        states.put(r, new RankState(V2StatusDescriptor.STATE_FINISHED, V2StatusDescriptor.NO_EXIT_STATUS));
                    }
                }
                lock.notifyAll();
            }
            onChange.run();
            return;
        }
        if (h.result() != MpiErrors.SUCCESS) {
            return;
        }
        int count = (int) Math.min(h.argument(), h.payloadLength() / V2StatusDescriptor.ENTRY_LENGTH);
        synchronized (lock) {
            for (int i = 0; i < count; i++) {
                int o = HEADER_LENGTH + i * V2StatusDescriptor.ENTRY_LENGTH;
                long rank = V2StatusDescriptor.rank(signer.in, o);
                if (rank >= 1 && rank <= ranks.size()) {
                    states.put((int) rank, new RankState(V2StatusDescriptor.state(signer.in, o),
                            V2StatusDescriptor.exitStatus(signer.in, o)));
                }
            }
            lock.notifyAll();
        }
        onChange.run();
    }

    /**
     * @return the rank that failed first as this launcher saw it (the lowest of those seen failed
     *         together): could not be started, or ended with a status other than 0 (an exit code
     *         or a signal); 0 when none did. Kept once seen, so that the ranks the job's stop ends
     *         with SIGTERM afterwards never take its place in the launcher's exit status
     */
    int failedRank() {
        synchronized (lock) {
            if (firstFailed != 0) {
                return firstFailed;
            }
            for (int r = 1; r <= ranks.size(); r++) {
                RankState s = states.get(r);
                if (s != null && (s.state() == V2StatusDescriptor.STATE_FAILED
                        || s.ended() && s.exitStatus() > 0)) {
                    firstFailed = r;
                    return r;
                }
            }
            return 0;
        }
    }

    /**
     * @return whether every rank has ended as far as its node last said (a node the job lost is
     *         {@link #lost}, which ends the wait for it)
     */
    boolean allEnded() {
        for (InetSocketAddress node : ranksByNode.keySet()) {
            if (needed(node)) {
                return false;
            }
        }
        return true;
    }

    /** @return whether a rank of {@code node} has not ended as far as its node last said */
    private boolean needed(InetSocketAddress node) {
        synchronized (lock) {
            for (int r : ranksByNode.get(node)) {
                RankState s = states.get(r);
                if (s == null || !s.ended()) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * Fills in the exit statuses of the ranks already terminated on their nodes (by rank 0's
     * library); the others stay unknown, to be collected with TERMINATE.
     *
     * @param statuses element r: rank r's status; changed only where it is negative (unknown)
     */
    void fill(int[] statuses) {
        synchronized (lock) {
            for (int r = 1; r < statuses.length && r <= ranks.size(); r++) {
                RankState s = states.get(r);
                if (statuses[r] < 0 && s != null && s.state() == V2StatusDescriptor.STATE_FINISHED
                        && s.exitStatus() >= 0) {
                    statuses[r] = s.exitStatus();
                }
            }
        }
    }

    /** @return the ranks' states as their nodes last listed them (ranks never listed are left out) */
    Map<Integer, RankState> states() {
        synchronized (lock) {
            return Map.copyOf(states);
        }
    }

    /** @return the lock notified whenever a node listed the ranks; for waiting on {@link #states} */
    Object stateLock() {
        return lock;
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        if (thread != null) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        watch.close();
        try {
            selector.close();
            output.close();
        } catch (IOException e) {
            // closing: nothing is lost
        }
    }
}
