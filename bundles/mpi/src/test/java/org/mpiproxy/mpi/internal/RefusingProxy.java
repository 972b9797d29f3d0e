package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_END_OF_MESSAGE;
import static org.mpiproxy.protocol.V2HeaderDescriptor.FLAG_REPLY;
import static org.mpiproxy.protocol.V2HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;
import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A fake v2 proxy of node {@code 127.0.0.1} for the host library's handling of SEND refusals
 * (docs/protocol-v2.md 5.2): it answers EXEC, TERMINATE and STATUS, stores the SEND fragments of
 * its ranks in order, and leaves those to a {@link #silent} rank unanswered until the test has it
 * refuse one ({@link #refuseAtRecv}) while the host asks a rank for data (RECV); a rank given a
 * message ({@link #deliverAt}) sends it with a RECV reply. It logs, in order, {@code SEND r s},
 * {@code RECV r}, {@code refused SEND r s} and {@code data RECV r}.
 */
public final class RefusingProxy implements AutoCloseable {

    private final List<String> log = new ArrayList<>();
    private final Set<Long> silent = ConcurrentHashMap.newKeySet();
    private final Map<Long, Long> expected = new ConcurrentHashMap<>();
    private final Map<Long, Long> lastSilentSend = new ConcurrentHashMap<>();
    private final Map<Long, Integer> recvs = new ConcurrentHashMap<>();
    private final V2Authenticator auth;
    private final DatagramChannel channel;
    private final long nodeId = NodeIds.of("127.0.0.1");
    private final Thread thread;
    private final ByteBuffer in = ByteBuffer.allocate(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1)
            .order(V2HeaderDescriptor.BYTE_ORDER);
    private final ByteBuffer out = ByteBuffer.allocate(V2HeaderDescriptor.MAX_DATAGRAM_LENGTH)
            .order(V2HeaderDescriptor.BYTE_ORDER);
    /** The rank whose last SEND is refused at the next RECV from {@link #refuseAt}, 0 = none; with what. */
    private volatile long refused;
    private volatile long refuseAt;
    private volatile int refusal;
    /** The rank that sends {@link #message} with its {@link #deliverAtRecv}-th RECV reply, 0 = none. */
    private volatile long deliverRank;
    private volatile int deliverAtRecv;
    private volatile int[] message;
    private long nonce = 1;

    public RefusingProxy(ClusterKeys cluster) throws IOException {
        this.auth = new V2Authenticator(cluster, nodeId, 30_000, 4096);
        this.channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        this.thread = new Thread(this::serve, "refusing-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    public int port() {
        return channel.socket().getLocalPort();
    }

    /** SEND fragments to {@code rank} go unanswered from now on. */
    public void silent(long rank) {
        silent.add(rank);
    }

    /** SEND fragments to {@code rank} are stored and acknowledged from now on. */
    public void accept(long rank) {
        silent.remove(rank);
    }

    /** The last SEND fragment to the silent rank {@code rank} is refused with {@code result} at the next RECV from {@code at}. */
    public void refuseAtRecv(long rank, long at, int result) {
        refusal = result;
        refuseAt = at;
        refused = rank;
    }

    /** Rank {@code rank} sends {@code ints} (one message, tag 0) with the reply to its {@code n}-th RECV. */
    public void deliverAt(long rank, int n, int[] ints) {
        message = ints.clone();
        deliverAtRecv = n;
        deliverRank = rank;
    }

    /** @return the log so far */
    public List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    /** Waits until {@code entry} is logged; the ceiling of a minute only stops a hang. */
    public void await(String entry) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        synchronized (log) {
            while (!log.contains(entry)) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("no " + entry + " in " + log);
                }
                log.wait(left);
            }
        }
    }

    private void log(String entry) {
        synchronized (log) {
            log.add(entry);
            log.notifyAll();
        }
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
                int op = h.operation();
                boolean replay = op != OP_SEND && op != OP_RECV;
                if (auth.verify(in, 0, length, System.currentTimeMillis(), replay) == V2Authenticator.OK) {
                    answer(h, from);
                }
            }
        } catch (IOException e) {
            // closed by the test
        }
    }

    private void answer(V2HeaderFlyweight h, InetSocketAddress from) throws IOException {
        long rank = h.rank();
        switch (h.operation()) {
            case OP_EXEC, OP_TERMINATE -> {
                reply(h).core(h.core());
                send(from);
            }
            case OP_STATUS -> {
                reply(h).sequence(h.sequence()).result(MpiErrors.ERR_COMM);
                send(from);
            }
            case OP_SEND -> {
                long s = h.sequence();
                if (silent.contains(rank)) {
                    lastSilentSend.put(rank, s);
                    log("SEND " + rank + " " + s);
                    return;
                }
                long e = expected.getOrDefault(rank, 0L);
                if (s == e) {
                    log("SEND " + rank + " " + s);
                    expected.put(rank, ++e);
                }
                reply(h).sequence(s).ack(e).argument(64);
                send(from);
            }
            case OP_RECV -> {
                int n = recvs.merge(rank, 1, Integer::sum);
                log("RECV " + rank);
                long q = refused;
                if (q != 0 && rank == refuseAt) {
                    refused = 0;
                    long s = lastSilentSend.get(q);
                    reply(h).rank(q).operation(OP_SEND).sequence(s).ack(s).argument(0).result(refusal);
                    // logged before it goes: the host may act on it before this thread logs anything after
                    log("refused SEND " + q + " " + s);
                    send(from);
                }
                int[] ints = message;
                if (rank == deliverRank && n >= deliverAtRecv && h.sequence() == 0 && ints != null) {
                    reply(h).flags(FLAG_REPLY | FLAG_END_OF_MESSAGE).datatype(MpiDatatype.INT.code()).sequence(0)
                            .argument(ints.length).payloadLength(ints.length * Integer.BYTES);
                    for (int i = 0; i < ints.length; i++) {
                        out.putInt(HEADER_LENGTH + i * Integer.BYTES, ints[i]);
                    }
                    log("data RECV " + rank);
                    send(from);
                } else {
                    reply(h).sequence(h.sequence());
                    send(from);
                }
            }
            default -> {
                // not served here
            }
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

    @Override
    public void close() throws Exception {
        channel.close();
        thread.join(5000);
    }
}
