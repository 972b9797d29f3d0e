package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.OutputStreamReceiver;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/**
 * What the launcher does over v2 besides running rank 0: probe proxies with an authenticated
 * request, and terminate a job's ranks by job id as the job's owner (a v2 job belongs to the
 * address and port of its first EXEC, rank 0's port). Every datagram is signed with the
 * cluster key (or a job's key, {@link V2Credential}) and every reply checked. Requests are repeated every second until answered; a node
 * that refused one as busy (docs/protocol-v2.md 3.5) is asked again only after its back-off.
 * Not thread-safe.
 */
final class V2Control {

    /** Environment variable naming the key file(s), as the MPI library reads it. */
    static final String KEY_FILE_ENV = "MPIPROXY_KEY_FILE";

    /**
     * The dead-node silence while TERMINATE replies are awaited (docs/protocol-v2.md 7 and 8): a
     * node that sends no valid reply, not even the interim one, for this long is given up.
     */
    static final Duration DEAD_AFTER = Duration.ofSeconds(30);

    private static final long RESEND_NANOS = Duration.ofSeconds(1).toNanos();
    private static final long SKEW_MILLIS = 30_000;

    private V2Control() {
    }

    /**
     * @param spec a key file list
     * @return the keys
     * @throws IllegalArgumentException saying what is wrong with a file
     */
    static ClusterKeys keys(String spec) {
        // a weak key is refused here as the nodes refuse it: a job signed with it would be forgeable
        return ClusterKeys.loadStrong(ClusterKeys.parseFileList(spec, Path.of("").toAbsolutePath()));
    }

    /**
     * Probes proxies with STATUS of job 0 (docs/protocol-v2.md 5.6), which every v2 proxy answers
     * at once and counts as a probe: a reply signed with the cluster key shows the proxy is up and
     * shares the key; a refusal that names one of the probes sent (3.5) tells why it did not verify.
     *
     * @param proxies the proxies; each one's node name is its address
     * @param keys    the cluster keys
     * @param wait    how long to wait for all answers
     * @return each proxy and what its probe learned
     * @throws IOException when a socket fails
     */
    static Map<InetSocketAddress, Prober.Answer> probe(List<InetSocketAddress> proxies, ClusterKeys keys,
                                                       Duration wait) throws IOException {
        return probe(proxies, keys, null, wait);
    }

    /**
     * As {@link #probe(List, ClusterKeys, Duration)}; signing with a job key ({@code credential}
     * not {@code null}, presented to the proxies before), with STATUS of the credential's job,
     * since a job key cannot sign for job 0: any reply, MPI_ERR_COMM (unknown job) too, shows the
     * proxy alive. A proxy that refuses a probe as without credential gets it again.
     */
    static Map<InetSocketAddress, Prober.Answer> probe(List<InetSocketAddress> proxies, ClusterKeys keys,
                                                       V2Credential credential, Duration wait) throws IOException {
        Signer signer = new Signer(keys, credential);
        long jobId = V2Credential.probeJob(credential);
        Map<InetSocketAddress, List<Long>> sent = new HashMap<>();
        Prober.Exchange exchange = new Prober.Exchange() {
            @Override
            public ByteBuffer request(InetSocketAddress proxy) {
                long token = signer.random.nextLong();
                sent.computeIfAbsent(proxy, p -> new ArrayList<>()).add(token);
                return signer.request(proxy, OP_STATUS, jobId, 0, 0, h -> h.sequence(token).nonce(token), null);
            }

            @Override
            public Prober.Answer check(InetSocketAddress proxy, ByteBuffer in) {
                List<Long> tokens = sent.getOrDefault(proxy, List.of());
                if (signer.refused(proxy)) {
                    // busy is no answer yet: the probe goes again after the node's back-off (no credential: now)
                    String problem = signer.refusals.problem(proxy);
                    return signer.refusals.busy(proxy) || problem == null ? null : new Prober.Answer(false, problem);
                }
                V2HeaderFlyweight h = signer.verify(proxy, jobId);
                return h != null && h.operation() == OP_STATUS && tokens.contains(h.sequence())
                        ? Prober.Answer.ANSWERED : null;
            }

            @Override
            public boolean holdsOff(InetSocketAddress proxy) {
                return signer.holdsOff(proxy);
            }

            @Override
            public Prober.Answer unanswered(InetSocketAddress proxy) {
                String problem = signer.refusals.problem(proxy);
                return problem != null ? new Prober.Answer(false, problem) : Prober.Answer.SILENT;
            }
        };
        return Prober.probe(proxies, wait, exchange, signer.in);
    }

    /** One rank as a node's STATUS reply lists it (docs/protocol-v2.md 5.6). */
    record RankState(long rank, int state, int core, long pid, int exitStatus) {
    }

    /** What one node said about a job. */
    static final class NodeStatus {
        /** Whether the node answered (every page of the list, or that it does not know the job). */
        boolean answered;
        /** The node answered MPI_ERR_COMM: it has no such job (never had, or forgot it after the linger time). */
        boolean unknownJob;
        /** Another result than success or unknown job (0 otherwise). */
        int result;
        final List<RankState> ranks = new ArrayList<>();
        /** The rank the next page starts at. */
        long from;
    }

    /**
     * Asks every proxy for the job's ranks on its node (STATUS, rank 0), page by page. Any
     * holder of the cluster key may ask, from any port.
     *
     * @param proxies the proxies; each one's node name is its address
     * @param jobId   the job
     * @param keys    the cluster keys
     * @param wait    how long to wait for all answers
     * @return each proxy and what it answered
     * @throws IOException when the socket fails
     */
    static Map<InetSocketAddress, NodeStatus> status(List<InetSocketAddress> proxies, long jobId, ClusterKeys keys,
                                                     Duration wait) throws IOException {
        return status(proxies, jobId, keys, null, wait);
    }

    /** As {@link #status(List, long, ClusterKeys, Duration)}, with the job's credential (a job key signs). */
    static Map<InetSocketAddress, NodeStatus> status(List<InetSocketAddress> proxies, long jobId, ClusterKeys keys,
                                                     V2Credential credential, Duration wait) throws IOException {
        Map<InetSocketAddress, NodeStatus> nodes = new LinkedHashMap<>();
        proxies.forEach(p -> nodes.put(p, new NodeStatus()));
        Signer signer = new Signer(keys, credential);
        RequestRounds.run(0, signer.in, wait, Math.min(RESEND_NANOS, Math.max(1, wait.toNanos() / 4)),
                new RequestRounds.Exchange() {
                    private int left = nodes.size();

                    @Override
                    public void send(DatagramChannel channel) throws IOException {
                        for (Map.Entry<InetSocketAddress, NodeStatus> e : nodes.entrySet()) {
                            if (!e.getValue().answered && !signer.holdsOff(e.getKey())) {
                                sendStatus(channel, signer, e.getKey(), jobId, e.getValue().from);
                            }
                        }
                    }

                    @Override
                    public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in)
                            throws IOException {
                        NodeStatus node = nodes.get(source);
                        if (signer.refused(source)) {
                            return; // busy: asked again after its back-off; another refusal: never answered
                        }
                        V2HeaderFlyweight h = node != null && !node.answered ? signer.verify(source, jobId) : null;
                        if (h == null || h.operation() != OP_STATUS || h.sequence() != node.from) {
                            return;
                        }
                        if (h.result() != MpiErrors.SUCCESS) {
                            node.unknownJob = h.result() == MpiErrors.ERR_COMM;
                            node.result = h.result();
                            node.answered = true;
                            left--;
                            return;
                        }
                        int count = (int) Math.min(h.argument(), h.payloadLength() / V2StatusDescriptor.ENTRY_LENGTH);
                        for (int i = 0; i < count; i++) {
                            int o = HEADER_LENGTH + i * V2StatusDescriptor.ENTRY_LENGTH;
                            node.ranks.add(new RankState(V2StatusDescriptor.rank(in, o), V2StatusDescriptor.state(in, o),
                                    V2StatusDescriptor.core(in, o), V2StatusDescriptor.pid(in, o),
                                    V2StatusDescriptor.exitStatus(in, o)));
                        }
                        long next = h.ack();
                        if (next == 0 || next <= node.from) {
                            node.answered = true;
                            left--;
                        } else {
                            node.from = next;
                            sendStatus(channel, signer, source, jobId, next);
                        }
                    }

                    @Override
                    public boolean done() {
                        return left == 0;
                    }
                });
        return nodes;
    }

    private static void sendStatus(DatagramChannel channel, Signer signer, InetSocketAddress node, long jobId,
                                   long from) throws IOException {
        channel.send(signer.request(node, OP_STATUS, jobId, 0, 0, h -> h.sequence(from), null), node);
    }

    /**
     * Sends TERMINATE for ranks 1..N-1 of a job from the job's own port and collects the replies.
     *
     * @param localPort rank 0's UDP port (free again: rank 0 has exited)
     * @param jobId     the job
     * @param keys      the cluster keys
     * @param ranks     placement of rank r at element r-1
     * @param statuses  element r: the exit status already known (&gt;= 0, nothing is sent) or
     *                  a negative value (TERMINATE is sent); updated in place with the replies
     * @param wait      how long to wait for the replies
     * @param stop      polled while waiting; {@code true} ends the wait early
     * @throws IOException when the port cannot be bound or the socket fails
     */
    static void terminate(int localPort, long jobId, ClusterKeys keys, List<Placement> ranks, int[] statuses,
                          Duration wait, BooleanSupplier stop) throws IOException {
        terminate(localPort, jobId, keys, ranks, statuses, false, wait, DEAD_AFTER, stop, (rank, stderr, line) -> { });
    }

    /** Receives the ranks' last output lines while their TERMINATE replies are awaited. */
    interface Lines {
        /**
         * @param rank   the rank
         * @param stderr its standard error, else its standard output
         * @param line   the line, without line end
         */
        void onLine(int rank, boolean stderr, String line);
    }

    /**
     * As {@link #terminate(int, long, ClusterKeys, List, int[], Duration, BooleanSupplier)}; the
     * ranks' output that rank 0 did not acknowledge before it ended reaches this port now: it is
     * acknowledged (a proxy answers TERMINATE only once a rank's output is acknowledged) and
     * handed to {@code lines}, in order per stream, from the first fragment seen.
     */
    static void terminate(int localPort, long jobId, ClusterKeys keys, List<Placement> ranks, int[] statuses,
                          Duration wait, BooleanSupplier stop, Lines lines) throws IOException {
        terminate(localPort, jobId, keys, ranks, statuses, false, wait, DEAD_AFTER, stop, lines);
    }

    /**
     * As {@link #terminate(int, long, ClusterKeys, List, int[], Duration, BooleanSupplier, Lines)},
     * with the STOP bit when the job is being stopped, and the dead-node rule: an interim reply
     * (a STATUS reply for a rank whose TERMINATE is pending, docs/protocol-v2.md 5.4) shows its
     * node alive, and a rank whose node sends nothing valid for {@code silence} is given up as
     * {@link V1Control#NODE_DOWN}.
     *
     * @param stopNow {@code true}: TERMINATE with STOP, the proxies signal the ranks at once
     *                (SIGTERM, SIGKILL after their stop grace) instead of waiting for their exit
     * @param silence how long a node may stay silent; TERMINATE is repeated at least four times in it
     */
    static void terminate(int localPort, long jobId, ClusterKeys keys, List<Placement> ranks, int[] statuses,
                          boolean stopNow, Duration wait, Duration silence, BooleanSupplier stop, Lines lines)
            throws IOException {
        terminate(localPort, jobId, keys, ranks, statuses, stopNow, wait, silence, stop, lines, System::nanoTime);
    }

    /**
     * As {@link #terminate(int, long, ClusterKeys, List, int[], boolean, Duration, Duration, BooleanSupplier, Lines)},
     * with the silence measured on {@code silenceClock} (the repetitions and {@code wait} stay on
     * the system clock), so that a test drives the time a node stays silent.
     *
     * @param silenceClock nanoseconds as {@link System#nanoTime}; read when the wait starts, when a
     *                     valid datagram arrives and before each wait
     */
    static void terminate(int localPort, long jobId, ClusterKeys keys, List<Placement> ranks, int[] statuses,
                          boolean stopNow, Duration wait, Duration silence, BooleanSupplier stop, Lines lines,
                          LongSupplier silenceClock) throws IOException {
        terminate(localPort, jobId, keys, null, ranks, statuses, stopNow, wait, silence, stop, lines, silenceClock);
    }

    /** As the method above, with the job's credential when it signs with a job key ({@code null} otherwise). */
    static void terminate(int localPort, long jobId, ClusterKeys keys, V2Credential credential, List<Placement> ranks,
                          int[] statuses, boolean stopNow, Duration wait, Duration silence, BooleanSupplier stop,
                          Lines lines, LongSupplier silenceClock) throws IOException {
        InetSocketAddress[] addresses = new InetSocketAddress[ranks.size() + 1];
        boolean[] pending = new boolean[ranks.size() + 1];
        int left = 0;
        for (int r = 1; r <= ranks.size(); r++) {
            addresses[r] = new InetSocketAddress(ranks.get(r - 1).address(), ranks.get(r - 1).port());
            pending[r] = statuses[r] < 0 && statuses[r] != V1Control.NODE_DOWN;
            left += pending[r] ? 1 : 0;
        }
        if (left == 0) {
            return;
        }
        Signer signer = new Signer(keys, credential);
        Map<Long, OutputStreamReceiver> streams = new HashMap<>();
        Map<InetSocketAddress, Long> lastHeard = new HashMap<>();
        long argument = stopNow ? V2HeaderDescriptor.TERMINATE_STOP : 0;
        long silenceNanos = silence.toNanos();
        long resendNanos = Math.max(1_000_000L, Math.min(RESEND_NANOS, silenceNanos / 4));
        long start = silenceClock.getAsLong();
        for (int r = 1; r < pending.length; r++) {
            lastHeard.put(addresses[r], start);
        }
        int waiting = left;
        RequestRounds.run(localPort, signer.in, wait, resendNanos, new RequestRounds.Exchange() {
            private int left = waiting;

            @Override
            public void send(DatagramChannel channel) throws IOException {
                for (int r = 1; r < pending.length; r++) {
                    if (pending[r] && !signer.holdsOff(addresses[r])) {
                        int core = ranks.get(r - 1).coreId();
                        channel.send(signer.request(addresses[r], OP_TERMINATE, jobId, r, core,
                                h -> h.argument(argument), null), addresses[r]);
                    }
                }
            }

            @Override
            public void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in) throws IOException {
                if (signer.refused(source)) {
                    if (signer.refusals.busy(source) && lastHeard.containsKey(source)) {
                        // busy: the proxy read the TERMINATE; alive, asked again after its back-off
                        lastHeard.put(source, silenceClock.getAsLong());
                    }
                    return;
                }
                V2HeaderFlyweight h = signer.verify(source, jobId);
                if (h != null && lastHeard.containsKey(source)) {
                    lastHeard.put(source, silenceClock.getAsLong());
                }
                if (h != null && h.operation() == OP_OUTPUT) {
                    onOutput(channel, signer, source, h, jobId, streams, lines);
                    return;
                }
                // a STATUS reply is the interim answer (alive, still terminating): keep waiting
                if (h == null || h.operation() != OP_TERMINATE) {
                    return;
                }
                long r = h.rank();
                if (r < 1 || r >= pending.length || !pending[(int) r] || !addresses[(int) r].equals(source)) {
                    return;
                }
                pending[(int) r] = false;
                left--;
                int result = h.result();
                statuses[(int) r] = result == MpiErrors.SUCCESS ? (int) h.argument()
                        : result == MpiErrors.ERR_RANK || result == MpiErrors.ERR_COMM ? V1Control.NOT_RUNNING
                        : V1Control.FAILED_TO_START;
            }

            @Override
            public boolean done() {
                if (left > 0) {
                    left -= giveUpSilentNodes(pending, addresses, statuses, lastHeard, silenceClock.getAsLong(),
                            silenceNanos);
                }
                return left == 0 || stop.getAsBoolean();
            }
        });
    }

    /** @return how many pending ranks were given up because their node stayed silent for the silence */
    private static int giveUpSilentNodes(boolean[] pending, InetSocketAddress[] addresses, int[] statuses,
                                         Map<InetSocketAddress, Long> lastHeard, long now, long silenceNanos) {
        int given = 0;
        for (int r = 1; r < pending.length; r++) {
            if (pending[r] && now - lastHeard.get(addresses[r]) > silenceNanos) {
                pending[r] = false;
                statuses[r] = V1Control.NODE_DOWN;
                given++;
            }
        }
        return given;
    }

    private static void onOutput(DatagramChannel channel, Signer signer, InetSocketAddress source, V2HeaderFlyweight h,
                                 long jobId, Map<Long, OutputStreamReceiver> streams, Lines lines) throws IOException {
        int rank = (int) h.rank();
        int stream = h.tag();
        boolean stderr = stream == V2HeaderDescriptor.STREAM_STDERR;
        // -1: rank 0 acknowledged everything before the oldest fragment the proxy still sends
        OutputStreamReceiver s = streams.computeIfAbsent(((long) rank << 8) | (stream & 0xff),
                k -> new OutputStreamReceiver(new OutputStreamReceiver.Lines() {
                    @Override
                    public void onLine(String line, boolean partial) {
                        lines.onLine(rank, stderr, line);
                    }

                    @Override
                    public void onDropped(long count) {
                        lines.onLine(rank, stderr, "[mpiproxy: " + count + " lines dropped: no host acknowledged"
                                + " the output for too long]");
                    }
                }, -1));
        s.onFragment(h, signer.in, 0);
        long next = s.next();
        channel.send(signer.request(source, OP_OUTPUT, jobId, rank, 0, a -> a.tag(stream).ack(next), null), source);
    }

    /** Builds signed requests for, and checks replies from, nodes named by their address. */
    static final class Signer {
        final ByteBuffer out = ByteBuffer.allocate(V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH)
                .order(V2HeaderDescriptor.BYTE_ORDER);
        final ByteBuffer in = ByteBuffer.allocate(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1)
                .order(V2HeaderDescriptor.BYTE_ORDER);
        final V2HeaderFlyweight outHeader = new V2HeaderFlyweight();
        final V2HeaderFlyweight inHeader = new V2HeaderFlyweight();
        final ClusterKeys keys;
        final Map<String, V2Authenticator> byNode = new HashMap<>();
        final SecureRandom random = new SecureRandom();
        /** The refusals of the requests signed here, and the back-off of busy nodes (docs/protocol-v2.md 3.5). */
        final V2Refusals refusals = new V2Refusals();
        /** The job's credential when {@link #keys} is its job key: presented again on a refusal of reason 6. */
        final V2Credential credential;

        Signer(ClusterKeys keys) {
            this(keys, null);
        }

        Signer(ClusterKeys keys, V2Credential credential) {
            this.keys = keys;
            this.credential = credential;
        }

        V2Authenticator auth(InetSocketAddress node) {
            String name = node.getAddress().getHostAddress();
            return byNode.computeIfAbsent(name, n -> new V2Authenticator(keys, NodeIds.of(n), SKEW_MILLIS, 1));
        }

        ByteBuffer request(InetSocketAddress node, int op, long jobId, int rank, int core,
                           java.util.function.Consumer<V2HeaderFlyweight> fields, byte[] payload) {
            out.clear();
            V2Authenticator auth = auth(node);
            outHeader.wrap(out, 0).reset(op, 0).keyId(keys.sendKeyId()).nodeId(auth.nodeId()).jobId(jobId).rank(rank)
                    .core(core).timestamp(System.currentTimeMillis()).nonce(random.nextLong());
            fields.accept(outHeader);
            refusals.sent(node, outHeader.nonce());
            if (payload != null) {
                out.put(HEADER_LENGTH, payload);
                outHeader.payloadLength(payload.length);
            }
            int length = auth.sign(out, 0);
            return out.limit(length).position(0);
        }

        /** @return whether {@link #in} holds a refusal of a request sent to {@code source} lately (busy: a back-off) */
        boolean refused(InetSocketAddress source) {
            if (!refusals.onRefusal(source, in, System.nanoTime())) {
                return false;
            }
            if (credential != null && refusals.takeNoCredential(source)) {
                try {
                    credential.presentAgain(source); // the refused request goes again with its next round
                } catch (IOException e) {
                    // not presented: the request is refused again, and the credential presented again
                }
            }
            return true;
        }

        /** @return whether requests to {@code node} wait for its back-off after a busy refusal */
        boolean holdsOff(InetSocketAddress node) {
            return refusals.holdsOff(node, System.nanoTime());
        }

        /** @return the header of an authentic reply for the job from {@code source}, else {@code null} */
        V2HeaderFlyweight verify(InetSocketAddress source, long jobId) {
            int length = in.position();
            if (auth(source).verifyReply(in, 0, length, System.currentTimeMillis()) != V2Authenticator.OK) {
                return null;
            }
            refusals.answered(source);
            V2HeaderFlyweight h = inHeader.wrap(in, 0);
            return (h.flags() & FLAG_REPLY) != 0 && h.jobId() == jobId ? h : null;
        }
    }
}
