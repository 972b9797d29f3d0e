package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * A v1 host on this node, for jobs started from the console: it speaks to the proxy over
 * loopback exactly as a remote host would, so the proxy needs no second way in. The proxy
 * keys the job by this host's address. Not thread-safe: one caller at a time.
 */
final class ConsoleHost implements AutoCloseable {

    /** A reply of the proxy. */
    record Reply(int op, int result, int rankId, int coreId, long datacount, String text) {
    }

    private final DatagramSocket socket;
    private final InetSocketAddress proxy;
    private final byte[] buffer = new byte[65536];

    /**
     * @param proxy   the proxy's socket address; a wildcard address means this node's loopback
     * @param timeout how long each wait for a reply lasts
     * @throws IOException when no socket can be opened
     */
    ConsoleHost(InetSocketAddress proxy, Duration timeout) throws IOException {
        InetAddress target = proxy.getAddress().isAnyLocalAddress() ? InetAddress.getLoopbackAddress()
                : proxy.getAddress();
        this.proxy = new InetSocketAddress(target, proxy.getPort());
        this.socket = new DatagramSocket(new InetSocketAddress(target, 0));
        this.socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis())));
    }

    /** @return the owner text the proxy shows for this host's jobs, {@code address:port} */
    String owner() {
        return socket.getLocalAddress().getHostAddress() + ":" + socket.getLocalPort();
    }

    /**
     * Validates and encodes an EXEC command line.
     *
     * @throws IllegalArgumentException when the command is not one the proxy would accept
     */
    static byte[] commandBytes(String program, List<String> args) {
        for (String a : args) {
            if (a.isEmpty() || a.indexOf(' ') >= 0) {
                throw new IllegalArgumentException("argument '" + a + "' is empty or contains a space; v1 separates"
                        + " arguments by spaces");
            }
        }
        byte[] text = new ExecCommand(program, args).toCommandLine().getBytes(StandardCharsets.UTF_8);
        if (text.length > MAX_PAYLOAD_LENGTH) {
            throw new IllegalArgumentException("command is " + text.length + " bytes, more than " + MAX_PAYLOAD_LENGTH
                    + " fit in one v1 EXEC");
        }
        ExecCommand.parse(ByteBuffer.wrap(text), 0, text.length);
        return text;
    }

    /**
     * Sends EXEC for ranks 1..n and waits for every answer.
     *
     * @param command from {@link #commandBytes}
     * @param cores   core of rank r at index r - 1
     * @return the EXEC replies by rank id
     * @throws IOException when a reply does not arrive in time
     */
    TreeMap<Integer, Reply> exec(byte[] command, List<Integer> cores) throws IOException {
        int world = cores.size() + 1;
        for (int r = 1; r < world; r++) {
            send(OP_EXEC, r, cores.get(r - 1), world, command);
        }
        return await(OP_EXEC, world - 1);
    }

    /**
     * Sends TERMINATE for the given ranks and waits for every answer.
     *
     * @param ranks rank id to core id
     * @return the TERMINATE replies by rank id
     * @throws IOException when a reply does not arrive in time
     */
    TreeMap<Integer, Reply> terminate(java.util.Map<Integer, Integer> ranks) throws IOException {
        for (var e : ranks.entrySet()) {
            send(OP_TERMINATE, e.getKey(), e.getValue(), 0, new byte[0]);
        }
        return await(OP_TERMINATE, ranks.size());
    }

    private void send(int op, int rankId, int coreId, int world, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        new V1HeaderFlyweight().wrap(b, 0).set(op, 0, rankId, coreId, world, 0);
        b.put(HEADER_LENGTH, payload);
        socket.send(new DatagramPacket(b.array(), b.capacity(), proxy));
    }

    private TreeMap<Integer, Reply> await(int op, int count) throws IOException {
        TreeMap<Integer, Reply> replies = new TreeMap<>();
        List<String> others = new ArrayList<>();
        while (replies.size() < count) {
            DatagramPacket p = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(p);
            } catch (SocketTimeoutException e) {
                throw new IOException("the proxy at " + proxy + " answered " + replies.size() + " of " + count
                        + " requests in time" + (others.isEmpty() ? "" : "; other replies: " + others), e);
            }
            if (p.getLength() < HEADER_LENGTH || p.getLength() > MAX_DATAGRAM_LENGTH) {
                continue;
            }
            V1HeaderFlyweight h = new V1HeaderFlyweight().wrap(ByteBuffer.wrap(buffer, 0, p.getLength())
                    .order(ByteOrder.LITTLE_ENDIAN), 0);
            if (h.operation() != op) {
                others.add(h.operation() + "/" + MpiErrors.name(h.result()));
                continue;
            }
            String text = new String(buffer, HEADER_LENGTH, p.getLength() - HEADER_LENGTH, StandardCharsets.UTF_8);
            replies.put(h.rankId(), new Reply(h.operation(), h.result(), h.rankId(), h.coreId(), h.datacount(), text));
        }
        return replies;
    }

    @Override
    public void close() {
        socket.close();
    }
}
