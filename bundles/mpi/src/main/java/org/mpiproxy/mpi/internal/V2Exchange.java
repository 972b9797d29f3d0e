package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.ACK_EVERY;
import static org.mpiproxy.mpi.internal.V2HostTransport.PROBE_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.WAIT_GAP_NANOS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_OUTPUT;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;
import static org.mpiproxy.protocol.V2RefusalDescriptor.REASON_NO_CREDENTIAL;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * The request/reply exchange of a v2 host (docs/protocol-v2.md): the socket, requests built in
 * one buffer and signed with a fresh nonce, every reply verified and handed to the stream it
 * answers ({@link V2SendStreams}, {@link V2RecvStreams}, {@link V2HostOutput}) or recorded on its
 * {@link V2Rank}, and the watch over the nodes a call waits for: probes (STATUS of job 0) from a
 * socket connected to a silent node, refusals matched to our nonces (busy ones back off, the
 * others fail the call), ICMP port unreachable and the dead-node silence. Signing with a job key,
 * it presents the job's credential ({@link V2HostCredential}) and probes with STATUS of its own job,
 * since a job key cannot sign for job 0. No allocation per datagram. Not thread-safe: every call
 * holds the transport's lock.
 */
final class V2Exchange {

    /** {@link #awaitReplies}: watch every rank whose EXEC is not answered. */
    static final int WATCH_EXECS = -1;
    /** {@link #awaitReplies}: watch every rank whose TERMINATE reply is awaited; give its node up. */
    static final int WATCH_TERMINATING = -2;
    /** Watch every rank that may still send (a caller receiving from all of them). */
    static final int WATCH_RUNNING = -3;

    private static final int SOCKET_BUFFER = 4 * 1024 * 1024;

    /** Element 0 is rank 0 (this host) and stays null. */
    final V2Rank[] ranks;
    final Map<InetSocketAddress, V2Node> nodes = new LinkedHashMap<>();
    final long jobId;
    final int keyId;
    /** The job the probes ask about: 0, or this job when signing with its job key. */
    private final long probeJobId;
    /** The job's credential when signing with its job key, else null. */
    final V2HostCredential credential;
    /** How long {@code finish} waits for TERMINATE replies beyond a proxy's own wait; {@link Long#MAX_VALUE} = forever. */
    final long timeoutNanos;
    final int datagramSize;
    final int maxPayload;
    final PrintStream diagnostics;
    final DatagramChannel channel;
    /** The request being built: {@link #header}, then its payload, then {@link #transmit}. */
    final ByteBuffer out;
    final SplittableRandom random = new SplittableRandom(new SecureRandom().nextLong());
    private final Selector selector;
    private final ByteBuffer in;
    private final V2HeaderFlyweight outHeader = new V2HeaderFlyweight();
    private final V2HeaderFlyweight inHeader = new V2HeaderFlyweight();
    private final ByteBuffer probeOut;
    private final V2HeaderFlyweight probeHeader = new V2HeaderFlyweight();
    /** Silence after which a node is declared dead; {@link #timeoutNanos} unless set otherwise. */
    private long silenceNanos;
    /** How long a node whose proxy stopped may take to come back; 0 = not at all. */
    private volatile long restartWaitNanos;
    private long refused;
    /** Milliseconds since the epoch: the requests' timestamps and the check of the replies'. */
    final LongSupplier epochClock;
    /** EXECs are awaited: an unreachable port fails the launch after {@link V2HostTransport#PROBE_NANOS}. */
    private boolean launching;
    private volatile boolean closed;
    private V2SendStreams send;
    private V2RecvStreams recv;
    /** Null when output is not streamed. */
    private V2HostOutput output;

    /** @param credential the job's credential when {@code keys} is its job key ({@code jobId} its job), else null */
    V2Exchange(List<HostfileEntry> nodes, ClusterKeys keys, int datagramSize, Duration timeout, PrintStream diagnostics,
               long jobId, int localPort, LongSupplier epochClock, byte[] credential) throws IOException {
        this.epochClock = epochClock;
        this.ranks = new V2Rank[nodes.size() + 1];
        this.probeOut = ByteBuffer.allocateDirect(V2HeaderDescriptor.MIN_DATAGRAM_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        probeHeader.wrap(probeOut, 0);
        Map<String, V2Authenticator> byNode = new HashMap<>();
        long skew = TimeUnit.SECONDS.toMillis(30);
        for (int r = 1; r < ranks.length; r++) {
            HostfileEntry entry = nodes.get(r - 1);
            InetSocketAddress address = entry.socketAddress();
            String name = address.getAddress().getHostAddress();
            V2Authenticator auth = byNode.computeIfAbsent(name, n -> new V2Authenticator(keys, NodeIds.of(n), skew, 1));
            V2Node at = this.nodes.computeIfAbsent(address, a -> new V2Node(entry, a, auth));
            ranks[r] = new V2Rank(entry, at, address, auth);
        }
        long id = jobId;
        SecureRandom sr = new SecureRandom();
        while (id == 0) {
            id = sr.nextLong();
        }
        this.jobId = id;
        this.keyId = keys.sendKeyId();
        this.probeJobId = keyId == JobCredential.JOB_KEY_ID ? id : 0;
        this.timeoutNanos = timeout.isZero() ? Long.MAX_VALUE : timeout.toNanos();
        this.silenceNanos = timeoutNanos;
        this.datagramSize = datagramSize;
        this.maxPayload = V2HeaderDescriptor.maxPayload(datagramSize);
        this.diagnostics = diagnostics;
        this.out = ByteBuffer.allocateDirect(datagramSize).order(ByteOrder.LITTLE_ENDIAN);
        this.in = ByteBuffer.allocateDirect(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1).order(ByteOrder.LITTLE_ENDIAN);
        outHeader.wrap(out, 0);
        HostSocket socket = HostSocket.open(localPort, SOCKET_BUFFER, true);
        this.channel = socket.channel();
        this.selector = socket.selector();
        this.credential = credential == null ? null : new V2HostCredential(credential, id, channel, random, epochClock);
    }

    /** Where replies go; {@code output} is null when output is not streamed. */
    void handTo(V2SendStreams send, V2RecvStreams recv, V2HostOutput output) {
        this.send = send;
        this.recv = recv;
        this.output = output;
    }

    /** @param silenceNanos the dead-node silence; {@link Long#MAX_VALUE} = never */
    void silenceNanos(long silenceNanos) {
        this.silenceNanos = silenceNanos;
    }

    /** @param restartWaitNanos how long a node whose proxy stopped may take to come back; 0 = not at all */
    void restartWaitNanos(long restartWaitNanos) {
        this.restartWaitNanos = restartWaitNanos;
    }

    long silenceNanos() {
        return silenceNanos;
    }

    void launching(boolean launching) {
        this.launching = launching;
    }

    long refused() {
        return refused;
    }

    boolean closed() {
        return closed;
    }

    /** Starts a request to rank {@code rank} in {@link #out}; its payload goes after the header. */
    V2HeaderFlyweight header(int op, int rank) {
        out.clear();
        return outHeader.reset(op, 0).keyId(keyId).nodeId(ranks[rank].auth.nodeId()).jobId(jobId).rank(rank);
    }

    /** Signs the request in {@link #out} with a fresh nonce and sends it to rank {@code rank}. */
    void transmit(int rank) {
        transmit(rank, epochClock.getAsLong());
    }

    /**
     * As {@link #transmit(int)}, with {@code nowMillis} as the timestamp.
     *
     * @return the datagram's length: {@link #out} holds it, signed, from index 0
     */
    int transmit(int rank, long nowMillis) {
        long nonce = random.nextLong();
        ranks[rank].at.sent(nonce);
        outHeader.timestamp(nowMillis).nonce(nonce);
        int length = ranks[rank].auth.sign(out, 0);
        sendOut(rank, length);
        return length;
    }

    /**
     * Sends the signed datagram in {@link #out} again as it is (a SEND fragment resent soon: SEND
     * skips the proxy's replay cache, docs/protocol-v2.md 3.2).
     */
    void transmitSigned(int rank, int length) {
        ranks[rank].at.sent(outHeader.nonce());
        sendOut(rank, length);
    }

    private void sendOut(int rank, int length) {
        out.limit(length).position(0);
        try {
            // 0 bytes sent (socket buffer full) is a loss like any other: retransmission recovers it
            channel.send(out, ranks[rank].address);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "sending to " + ranks[rank].node + " failed: " + e.getMessage(), e);
        }
    }

    /** Handles every datagram waiting in the socket, without waiting; the caller resends what is overdue. */
    void receive() {
        try {
            receiveAvailable();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
        }
    }

    /** Handles every datagram waiting in the socket and the probe sockets, then resends what is overdue. */
    void poll() {
        try {
            receiveAvailable();
            receiveProbes();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
        }
        send.resendOverdue();
    }

    /**
     * Waits up to {@code waitNanos} for datagrams and handles every one that arrived, then checks
     * the nodes the caller waits for: probes those silent for {@link V2HostTransport#PROBE_NANOS},
     * and fails the call for a node that refused a request of ours, whose port is unreachable or
     * that stayed silent for the dead-node silence.
     *
     * @param waitNanos how long to wait for the first datagram
     * @param watched   the rank whose node's silence fails the call ({@link #WATCH_EXECS}: every rank
     *                  with a pending EXEC; {@link #WATCH_TERMINATING}: every rank whose TERMINATE
     *                  reply is awaited, whose node is then given up instead; {@link #WATCH_RUNNING}:
     *                  every rank that may still send; 0: none)
     */
    void awaitReplies(long waitNanos, int watched) {
        awaitReplies(waitNanos, watched, 0);
    }

    /** As {@link #awaitReplies(long, int)} for the next fragments of a stream: polls for them first ({@link HostSocket}). */
    void awaitData(long waitNanos, int watched) {
        awaitReplies(waitNanos, watched, HostSocket.POLL_BEFORE_SLEEP_NANOS);
    }

    private void awaitReplies(long waitNanos, int watched, long pollNanos) {
        boolean timedOut;
        try {
            // whole milliseconds (the selector's unit), rounded up: a retransmit is not looked for too early
            long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(waitNanos, Long.MAX_VALUE - 999_999)
                    + 999_999));
            timedOut = HostSocket.select(selector, millis, pollNanos) == 0;
            selector.selectedKeys().clear();
            receiveAvailable();
            receiveProbes();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "receiving failed: " + e.getMessage(), e);
        }
        if (timedOut) {
            send.resendOverdueNow(); // the wait ran to what was due: every rank, however recently looked at
        } else {
            // woken by datagrams, maybe many a millisecond: the rank waited for at once, the others once per ms
            if (watched > 0) {
                send.resendOverdueFor(watched);
            }
            send.resendOverdue();
        }
        if (watched == 0) {
            return;
        }
        long now = System.nanoTime();
        for (int r = 1; r < ranks.length; r++) {
            boolean watchedRank = watched == r || (watched == WATCH_EXECS && ranks[r].execResult < 0)
                    || (watched == WATCH_TERMINATING && ranks[r].awaitsTerminate())
                    || (watched == WATCH_RUNNING && recv.maySend(r));
            if (!watchedRank) {
                continue;
            }
            V2Node n = ranks[r].at;
            if (n.lastWatched != now) {
                if (now - n.lastWatched > WAIT_GAP_NANOS) {
                    // no call waited for the node meanwhile: silence counts only while one waits
                    n.silentFrom = now;
                }
                n.lastWatched = now;
                if (now - n.aliveAt() >= PROBE_NANOS && now - n.probeSentAt >= PROBE_NANOS) {
                    probe(n, now);
                }
            }
            String failure = n.failure(now, launching, silenceNanos, restartWaitNanos);
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

    /**
     * Sends the node a probe, STATUS of job 0 (docs/protocol-v2.md 5.6), from a socket connected to
     * it: a live proxy answers at once, even while it launches or stops a rank; a port where
     * nothing listens makes the next receive on that socket fail (ICMP port unreachable), which
     * the shared unconnected socket never reports.
     */
    void probe(V2Node n, long now) {
        n.probeSentAt = now;
        try {
            n.openProbe(selector);
            long nonce = random.nextLong();
            n.sent(nonce);
            probeOut.clear();
            probeHeader.reset(OP_STATUS, 0).keyId(keyId).nodeId(n.auth.nodeId()).jobId(probeJobId).rank(0)
                    .sequence(nonce).timestamp(epochClock.getAsLong()).nonce(nonce);
            int length = n.auth.sign(probeOut, 0);
            probeOut.limit(length).position(0);
            n.probe.write(probeOut);
        } catch (PortUnreachableException e) {
            n.unreachable(now);
        } catch (IOException e) {
            // not fatal: a lost probe is like a lost reply; the dead-node silence still applies
            diagnostics.println("mpi: probing " + n.entry + " failed: " + e.getMessage());
        }
    }

    /** Reads every probe socket: replies to probes, refusals and ICMP errors. */
    private void receiveProbes() {
        long now = System.nanoTime();
        for (V2Node n : nodes.values()) {
            if (n.probe == null) {
                continue;
            }
            while (true) {
                in.clear();
                int length;
                try {
                    length = n.probe.read(in);
                } catch (PortUnreachableException e) {
                    n.unreachable(now);
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
                        && n.auth.verifyReply(in, 0, length, epochClock.getAsLong()) == V2Authenticator.OK
                        && inHeader.wrap(in, 0).operation() == OP_STATUS && (inHeader.flags() & FLAG_REPLY) != 0
                        && inHeader.jobId() == probeJobId && n.wasSent(inHeader.sequence())) {
                    n.heard(now);
                } else {
                    refused++;
                }
            }
        }
    }

    /** A refusal (docs/protocol-v2.md 3.5) counts only for a nonce sent to that node lately ({@link V2Node#refused}). */
    private void onRefusal(V2Node n) {
        if (n == null || !n.refused(in, System.nanoTime(), diagnostics)) {
            refused++;
        } else if (credential != null && V2RefusalDescriptor.reason(in, 0) == REASON_NO_CREDENTIAL) {
            credential.present(n, System.nanoTime()); // the refused request goes again with its retransmission
        }
    }

    /** Handles every datagram waiting in the socket, then acknowledges the output streams that moved. */
    void receiveAvailable() throws IOException {
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
            onDatagram(in.remaining(), from);
            // while output keeps coming, acknowledge as we go, or the proxies would time out and send again
            if (output != null && ++handled % ACK_EVERY == 0) {
                output.sendAcks();
            }
        }
        if (output != null) {
            output.sendAcks();
        }
    }

    private void onDatagram(int length, InetSocketAddress from) {
        if (length < V2HeaderDescriptor.MIN_DATAGRAM_LENGTH) {
            refused++;
            return;
        }
        inHeader.wrap(in, 0);
        long rankId = inHeader.rank();
        if (credential != null && rankId == 0 && inHeader.operation() == OP_CREDENTIAL) {
            refused += credential.onReply(nodes.get(from), in, length, System.nanoTime()) ? 0 : 1;
            return;
        }
        if (inHeader.magic() != V2HeaderDescriptor.MAGIC || rankId < 1 || rankId >= ranks.length) {
            refused++;
            return;
        }
        int rank = (int) rankId;
        V2Rank s = ranks[rank];
        if (s.auth.verifyReply(in, 0, length, epochClock.getAsLong()) != V2Authenticator.OK
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
                send.onReply(rank, result, inHeader);
                break;
            case OP_RECV:
                recv.onData(rank, result, inHeader, in);
                break;
            case OP_OUTPUT:
                if (output == null || !output.onFragment(rank, inHeader, in)) {
                    refused++;
                }
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

    /** Closes the sockets; the output thread, if any, wakes up and ends. */
    void closeSocket() {
        closed = true;
        if (output != null) {
            output.wakeUp();
        }
        try {
            selector.close();
            channel.close();
            for (V2Node n : nodes.values()) {
                if (n.probe != null) {
                    n.probe.close();
                }
            }
        } catch (IOException e) {
            diagnostics.println("mpi: closing the socket failed: " + e);
        }
    }
}
