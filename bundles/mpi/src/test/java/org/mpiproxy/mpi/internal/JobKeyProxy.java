package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_CREDENTIAL;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * A fake v2 proxy of node {@code 127.0.0.1} that holds the cluster key but serves jobs signed with
 * their job key only (key id 0, docs/protocol-v2.md 4.1, 5.9), as the real one does: its
 * {@link V2Authenticator} checks a CREDENTIAL with the job key of the credential in its payload
 * (which the test decodes again with {@link JobCredential#decode}) and learns that key with
 * {@link V2Authenticator#acceptCredential}; a request of a job whose key it does not know is
 * refused with reason 6. Its one rank echoes every message sent to it: each SEND fragment stored
 * becomes the next fragment its RECVs get. It answers EXEC, TERMINATE (exit status 0) and STATUS,
 * and logs, in order, what it took and what it refused.
 */
public final class JobKeyProxy implements AutoCloseable {

    /** What it took ({@code CREDENTIAL}, {@code EXEC 1}, {@code SEND 1 0}, ...) and refused ({@code refused ...}). */
    public final List<String> log = new CopyOnWriteArrayList<>();
    /** The key id of every request. */
    public final Set<Integer> keyIds = ConcurrentHashMap.newKeySet();
    /** Every credential presented, as {@link JobCredential#decode} reads it under the cluster key. */
    public final List<JobCredential> presented = new CopyOnWriteArrayList<>();
    /** Forgets the job keys at the first SEND, as a restarted node, so that SEND is refused with reason 6. */
    public volatile boolean forgetAtFirstSend;
    /** The first presentation (1 = the first) refused with {@link #refusal} instead of accepted. */
    public volatile int refuseFrom = Integer.MAX_VALUE;
    /** The result of a refused presentation. */
    public volatile int refusal = MpiErrors.ERR_PERMISSION;
    /** The reason text of a refused presentation. */
    public volatile String refusalReason = "";

    private final ClusterKeys cluster;
    private final V2Authenticator auth;
    private final DatagramChannel channel;
    private final long nodeId = NodeIds.of("127.0.0.1");
    private final Thread thread;
    /** The echoed fragments: datatype, tag, flags, count, then the elements. */
    private final Map<Long, List<byte[]>> echo = new ConcurrentHashMap<>();
    private final Map<Long, Long> expected = new ConcurrentHashMap<>();
    private final ByteBuffer in = ByteBuffer.allocate(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1)
            .order(V2HeaderDescriptor.BYTE_ORDER);
    private final ByteBuffer out = ByteBuffer.allocate(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH)
            .order(V2HeaderDescriptor.BYTE_ORDER);
    private long nonce = 1;

    public JobKeyProxy(ClusterKeys cluster) throws IOException {
        this.cluster = cluster;
        this.auth = new V2Authenticator(cluster, nodeId, 30_000, 4096);
        this.channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        this.thread = new Thread(this::serve, "job-key-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    public int port() {
        return channel.socket().getLocalPort();
    }

    /** @return the log without the refusals */
    public List<String> taken() {
        return log.stream().filter(e -> !e.startsWith("refused")).toList();
    }

    private void serve() {
        try {
            while (true) {
                InetSocketAddress from = (InetSocketAddress) channel.receive(in.clear());
                int length = in.position();
                if (length < V2HeaderDescriptor.MIN_DATAGRAM_LENGTH) {
                    continue;
                }
                V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                keyIds.add(h.keyId());
                if (h.operation() == OP_SEND && forgetAtFirstSend) {
                    forgetAtFirstSend = false;
                    auth.forgetJob(h.jobId());
                }
                int op = h.operation();
                boolean replay = op != OP_SEND && op != OP_RECV && op != V2HeaderDescriptor.OP_OUTPUT;
                int result = auth.verify(in, 0, length, System.currentTimeMillis(), replay);
                if (result != V2Authenticator.OK) {
                    log.add("refused " + name(h) + ": " + V2Authenticator.reason(result));
                    int reason = V2RefusalDescriptor.reasonOf(result);
                    if (reason != 0) {
                        V2RefusalDescriptor.put(in, 0, reason, out.clear(), 0);
                        channel.send(out.limit(V2RefusalDescriptor.LENGTH).position(0), from);
                    }
                    continue;
                }
                answer(h, from);
            }
        } catch (IOException e) {
            // closed by the test
        }
    }

    private void answer(V2HeaderFlyweight h, InetSocketAddress from) throws IOException {
        long rank = h.rank();
        String name = name(h);
        switch (h.operation()) {
            case OP_CREDENTIAL: {
                JobCredential c = JobCredential.decode(cluster, in, HEADER_LENGTH, h.payloadLength());
                presented.add(c);
                log.add(name);
                if (presented.size() >= refuseFrom) {
                    byte[] why = refusalReason.getBytes(StandardCharsets.UTF_8);
                    reply(h).result(refusal).payloadLength(why.length);
                    out.put(HEADER_LENGTH, why);
                } else {
                    auth.acceptCredential(auth.credential(), System.currentTimeMillis());
                    reply(h);
                }
                send(from);
                return;
            }
            case OP_EXEC:
            case OP_TERMINATE:
                log.add(name);
                reply(h).core(h.core());
                send(from);
                return;
            case OP_STATUS:
                log.add(name);
                reply(h).sequence(h.sequence()).result(MpiErrors.ERR_COMM);
                send(from);
                return;
            case OP_SEND: {
                long s = h.sequence();
                long e = expected.getOrDefault(rank, 0L);
                if (s == e) {
                    log.add(name);
                    byte[] fragment = new byte[16 + h.payloadLength()];
                    ByteBuffer f = ByteBuffer.wrap(fragment).order(V2HeaderDescriptor.BYTE_ORDER);
                    f.putInt(h.datatype()).putInt(h.tag()).putInt(h.flags() & FLAG_END_OF_MESSAGE)
                            .putInt((int) h.argument());
                    in.get(HEADER_LENGTH, fragment, 16, h.payloadLength());
                    echo.computeIfAbsent(rank, r -> new CopyOnWriteArrayList<>()).add(fragment);
                    expected.put(rank, ++e);
                }
                reply(h).sequence(s).ack(e).argument(64);
                send(from);
                return;
            }
            case OP_RECV: {
                List<byte[]> fragments = echo.getOrDefault(rank, List.of());
                long first = h.sequence();
                long last = Math.min(fragments.size(), first + h.argument());
                if (first >= last) {
                    reply(h).sequence(first);
                    send(from);
                }
                for (long i = first; i < last; i++) {
                    ByteBuffer f = ByteBuffer.wrap(fragments.get((int) i)).order(V2HeaderDescriptor.BYTE_ORDER);
                    int bytes = f.capacity() - 16;
                    reply(h).flags(FLAG_REPLY | f.getInt(8)).datatype(f.getInt(0)).tag(f.getInt(4)).sequence(i)
                            .argument(f.getInt(12)).payloadLength(bytes);
                    out.put(HEADER_LENGTH, f.array(), 16, bytes);
                    send(from);
                }
                return;
            }
            default:
                log.add("refused " + name + ": not served here");
        }
    }

    /** Starts the reply to {@code h} in {@link #out}: its operation, key id, job and rank. */
    private V2HeaderFlyweight reply(V2HeaderFlyweight h) {
        out.clear();
        return new V2HeaderFlyweight().wrap(out, 0).reset(h.operation(), FLAG_REPLY).keyId(h.keyId()).nodeId(nodeId)
                .jobId(h.jobId()).rank(h.rank()).timestamp(System.currentTimeMillis()).nonce(nonce++);
    }

    private void send(InetSocketAddress to) throws IOException {
        int length = auth.sign(out, 0);
        channel.send(out.limit(length).position(0), to);
    }

    private static String name(V2HeaderFlyweight h) {
        switch (h.operation()) {
            case OP_CREDENTIAL: return "CREDENTIAL";
            case OP_EXEC: return "EXEC " + h.rank();
            case OP_SEND: return "SEND " + h.rank() + " " + h.sequence();
            case OP_RECV: return "RECV " + h.rank();
            case OP_TERMINATE: return "TERMINATE " + h.rank();
            case OP_STATUS: return "STATUS " + HexFormat.of().toHexDigits(h.jobId());
            default: return "op " + h.operation();
        }
    }

    @Override
    public void close() throws Exception {
        channel.close();
        thread.join(5000);
    }
}
