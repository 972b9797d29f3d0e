package org.mpiproxy.mpi.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_SEND;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_TERMINATE;

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
import java.util.List;

import org.mpiproxy.api.ProgramNames;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/**
 * Rank 0's side of a v1 job: one UDP socket talking to the proxy of every rank's node.
 * <p>
 * v1 has no sequence numbers and no retransmission, so a lost datagram ends in a timeout.
 * Replies are matched by operation and rank id; RECV data that arrives for a rank nobody is
 * receiving from right now is kept for that rank ({@link V1Rank}). Not thread-safe.
 */
public final class UdpHostTransport implements Transport {

    /** Most payload bytes one RECV request asks for, so the proxy's burst fits the socket buffers. */
    public static final int RECV_REQUEST_BYTES = 64 * 1024;
    /** Receive buffer asked of the kernel (it may grant less, see net.core.rmem_max). */
    public static final int SOCKET_RECEIVE_BUFFER = 4 * 1024 * 1024;
    /**
     * TERMINATE waits this much longer than the timeout: the proxy may itself wait its
     * terminate timeout before stopping a rank that does not exit.
     */
    public static final Duration TERMINATE_EXTRA_WAIT = Duration.ofSeconds(15);

    private static final int LARGEST_DATAGRAM = 65507;

    private final HostfileEntry[] nodes;
    private final InetSocketAddress[] addresses;
    private final V1Rank[] ranks;
    private final long timeoutNanos;
    private final PrintStream diagnostics;
    private final DatagramChannel channel;
    private final Selector selector;
    private final SelectionKey key;
    private final ByteBuffer out = ByteBuffer.allocateDirect(MAX_DATAGRAM_LENGTH).order(V1HeaderDescriptor.BYTE_ORDER);
    private final ByteBuffer in = ByteBuffer.allocateDirect(LARGEST_DATAGRAM).order(V1HeaderDescriptor.BYTE_ORDER);
    private final V1HeaderFlyweight outHeader = new V1HeaderFlyweight().wrap(out, 0);
    private final V1HeaderFlyweight inHeader = new V1HeaderFlyweight().wrap(in, 0);
    private long droppedDatagrams;
    private int[] exitStatuses;

    private UdpHostTransport(List<HostfileEntry> nodes, Duration timeout, PrintStream diagnostics, int localPort)
            throws IOException {
        int size = nodes.size() + 1;
        this.nodes = new HostfileEntry[size];
        this.addresses = new InetSocketAddress[size];
        this.ranks = new V1Rank[size];
        for (int r = 1; r < size; r++) {
            this.nodes[r] = nodes.get(r - 1);
            this.addresses[r] = this.nodes[r].socketAddress();
            this.ranks[r] = new V1Rank();
        }
        this.timeoutNanos = timeout.toNanos();
        this.diagnostics = diagnostics;
        HostSocket socket = HostSocket.open(localPort, SOCKET_RECEIVE_BUFFER, false);
        this.channel = socket.channel();
        this.selector = socket.selector();
        this.key = socket.key();
    }

    /**
     * Opens the socket and starts the job: one EXEC per rank, then waits for every reply.
     *
     * @param nodes       the hostfile's nodes, element 0 = rank 1
     * @param program     the program name the proxies start
     * @param args        the program's arguments (no spaces: v1 separates them by spaces)
     * @param timeout     how long to wait for replies; zero = forever
     * @param diagnostics where problems that do not fail a call are reported
     * @return the started transport
     * @throws MpiException when the command cannot be sent, a proxy refuses a rank or does not
     *                      answer in time; ranks already started are told to terminate
     */
    public static UdpHostTransport start(List<HostfileEntry> nodes, String program, List<String> args,
            Duration timeout, PrintStream diagnostics) {
        return start(nodes, program, args, timeout, diagnostics, 0);
    }

    /**
     * As {@link #start(List, String, List, Duration, PrintStream)}, sending from a given local port
     * (a launcher that knows the port can terminate the job's ranks after rank 0 is gone).
     *
     * @param nodes       the hostfile's nodes, element 0 = rank 1
     * @param program     the program name the proxies start
     * @param args        the program's arguments (no spaces: v1 separates them by spaces)
     * @param timeout     how long to wait for replies; zero = forever
     * @param diagnostics where problems that do not fail a call are reported
     * @param localPort   the local UDP port, 0 = any free port
     * @return the started transport
     * @throws MpiException as {@link #start(List, String, List, Duration, PrintStream)}, or
     *                      {@code MPI_ERR_IO} when the port cannot be bound
     */
    public static UdpHostTransport start(List<HostfileEntry> nodes, String program, List<String> args,
            Duration timeout, PrintStream diagnostics, int localPort) {
        byte[] command = commandLine(program, args);
        UdpHostTransport transport;
        try {
            transport = new UdpHostTransport(nodes, timeout, diagnostics, localPort);
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "cannot open a UDP socket"
                    + (localPort == 0 ? "" : " on port " + localPort) + ": " + e.getMessage(), e);
        }
        try {
            transport.exec(command);
            return transport;
        } catch (RuntimeException e) {
            transport.abort();
            throw e;
        }
    }

    private static byte[] commandLine(String program, List<String> args) {
        String problem = ProgramNames.problem(program);
        if (problem != null) {
            throw new MpiException(MpiErrors.ERR_ARG, problem);
        }
        for (String a : args) {
            if (a.isEmpty() || a.chars().anyMatch(c -> c <= ' ' || c == 0x7f)) {
                throw new MpiException(MpiErrors.ERR_ARG, "argument '" + a
                        + "' is empty or contains a space or control character: v1 EXEC separates arguments by spaces");
            }
        }
        byte[] bytes = new ExecCommand(program, args).toCommandLine().getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_PAYLOAD_LENGTH) {
            throw new MpiException(MpiErrors.ERR_ARG, "command line is " + bytes.length + " bytes, v1 allows "
                    + MAX_PAYLOAD_LENGTH);
        }
        return bytes;
    }

    /** @return the world size, rank 0 included */
    public int size() {
        return ranks.length;
    }

    /** @return the local socket address (the source of every request) */
    public InetSocketAddress localAddress() {
        try {
            return (InetSocketAddress) channel.getLocalAddress();
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "socket closed", e);
        }
    }

    /** @return datagrams received and ignored: too short, unknown rank or operation, bad count */
    public long droppedDatagrams() {
        return droppedDatagrams;
    }

    private void exec(byte[] command) {
        try {
            for (int r = 1; r < ranks.length; r++) {
                out.clear();
                outHeader.set(OP_EXEC, 0, r, nodes[r].coreId(), ranks.length, 0);
                out.put(HEADER_LENGTH, command);
                out.limit(HEADER_LENGTH + command.length);
                transmit(r);
            }
            long deadline = System.nanoTime() + timeoutNanos;
            while (firstUnstarted() > 0 && await(deadline)) {
                continue;
            }
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "EXEC failed: " + e.getMessage(), e);
        }
        List<String> problems = new ArrayList<>();
        int code = MpiErrors.SUCCESS;
        for (int r = 1; r < ranks.length; r++) {
            V1Rank s = ranks[r];
            if (s.execResult == 0) {
                continue;
            }
            int c = s.execResult < 0 ? MpiErrors.ERR_OTHER : s.execResult;
            code = code == MpiErrors.SUCCESS ? c : code;
            problems.add(s.execResult < 0
                    ? "rank " + r + ": no EXEC reply from " + nodes[r] + " within " + seconds(timeoutNanos)
                            + " (is the proxy running? v1 does not retransmit)"
                    : "rank " + r + " on " + nodes[r] + ": " + MpiErrors.name(s.execResult)
                            + (s.execReason.isEmpty() ? "" : " " + s.execReason));
        }
        if (!problems.isEmpty()) {
            throw new MpiException(code, "cannot start the job: " + String.join("; ", problems));
        }
    }

    private int firstUnstarted() {
        for (int r = 1; r < ranks.length; r++) {
            if (ranks[r].execResult < 0) {
                return r;
            }
        }
        return 0;
    }

    /** Failed start: tells every proxy to drop its rank, without waiting, and closes. */
    private void abort() {
        for (int r = 1; r < ranks.length; r++) {
            try {
                sendTerminate(r);
            } catch (IOException e) {
                diagnostics.println("mpi: TERMINATE to rank " + r + " failed: " + e.getMessage());
            }
        }
        exitStatuses = new int[ranks.length];
        java.util.Arrays.fill(exitStatuses, 1, ranks.length, -1);
        closeSocket();
    }

    @Override
    public void send(int datatype, ByteBuffer src, int offset, int count, int dest) {
        int size = MpiDatatype.sizeOf(datatype);
        int perDatagram = MAX_PAYLOAD_LENGTH / size;
        try {
            for (int done = 0; done < count; ) {
                int k = Math.min(perDatagram, count - done);
                out.clear();
                outHeader.set(OP_SEND, 0, dest, nodes[dest].coreId(), datatype, k);
                out.put(HEADER_LENGTH, src, offset + done * size, k * size);
                out.limit(HEADER_LENGTH + k * size);
                transmit(dest);
                done += k;
            }
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "SEND to rank " + dest + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void recv(int datatype, ByteBuffer dst, int offset, int count, int source) {
        int size = MpiDatatype.sizeOf(datatype);
        int perRequest = Math.max(1, RECV_REQUEST_BYTES / size);
        V1Rank s = ranks[source];
        int got = 0;
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            while (true) {
                int taken = s.take(source, datatype, dst, offset + got * size, count - got);
                if (taken > 0) {
                    got += taken;
                    deadline = System.nanoTime() + timeoutNanos;
                }
                if (got == count) {
                    return;
                }
                s.throwRecvError(source, nodes[source], got, count);
                if (s.outstanding == 0) {
                    int k = Math.min(perRequest, count - got);
                    out.clear();
                    outHeader.set(OP_RECV, 0, source, nodes[source].coreId(), datatype, k);
                    out.limit(HEADER_LENGTH);
                    transmit(source);
                    s.outstanding = k;
                }
                if (!await(deadline)) {
                    throw new MpiException(MpiErrors.ERR_OTHER, "no RECV reply from rank " + source + " on "
                            + nodes[source] + " within " + seconds(timeoutNanos) + " (received " + got + " of " + count
                            + " elements; v1 does not retransmit)");
                }
            }
        } catch (IOException e) {
            throw new MpiException(MpiErrors.ERR_IO, "RECV from rank " + source + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public int[] finish() {
        if (exitStatuses != null) {
            return exitStatuses.clone();
        }
        int[] statuses = new int[ranks.length];
        try {
            for (int r = 1; r < ranks.length; r++) {
                statuses[r] = -1;
                try {
                    sendTerminate(r);
                } catch (IOException e) {
                    ranks[r].terminated = true;
                    diagnostics.println("mpi: TERMINATE to rank " + r + " on " + nodes[r] + " failed: " + e.getMessage());
                }
            }
            long wait = timeoutNanos == 0 ? 0 : timeoutNanos + TERMINATE_EXTRA_WAIT.toNanos();
            long deadline = System.nanoTime() + wait;
            while (firstUnterminated() > 0 && awaitFor(deadline, wait == 0)) {
                continue;
            }
        } catch (IOException e) {
            diagnostics.println("mpi: waiting for TERMINATE replies failed: " + e.getMessage());
        } finally {
            closeSocket();
        }
        for (int r = 1; r < ranks.length; r++) {
            V1Rank s = ranks[r];
            if (!s.terminated) {
                diagnostics.println("mpi: no TERMINATE reply from rank " + r + " on " + nodes[r]);
            } else if (s.terminateResult != 0) {
                diagnostics.println("mpi: TERMINATE of rank " + r + " on " + nodes[r] + " failed: "
                        + MpiErrors.name(s.terminateResult));
            } else {
                statuses[r] = s.exitStatus;
                if (s.exitStatus != 0) {
                    diagnostics.println("mpi: rank " + r + " on " + nodes[r] + " exited with status " + s.exitStatus);
                }
            }
        }
        exitStatuses = statuses;
        return statuses.clone();
    }

    private int firstUnterminated() {
        for (int r = 1; r < ranks.length; r++) {
            if (!ranks[r].terminated) {
                return r;
            }
        }
        return 0;
    }

    private void sendTerminate(int rank) throws IOException {
        out.clear();
        outHeader.set(OP_TERMINATE, 0, rank, nodes[rank].coreId(), 0, 0);
        out.limit(HEADER_LENGTH);
        transmit(rank);
    }

    private void closeSocket() {
        try {
            selector.close();
        } catch (IOException e) {
            diagnostics.println("mpi: closing the selector failed: " + e.getMessage());
        }
        try {
            channel.close();
        } catch (IOException e) {
            diagnostics.println("mpi: closing the socket failed: " + e.getMessage());
        }
    }

    /** Sends {@code out} (position 0 to limit) to the rank's proxy, waiting while the socket is full. */
    private void transmit(int rank) throws IOException {
        out.position(0);
        while (channel.send(out, addresses[rank]) == 0) {
            key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            try {
                selector.select(100);
                selector.selectedKeys().clear();
                drainSocket();
            } finally {
                key.interestOps(SelectionKey.OP_READ);
            }
        }
    }

    /** @return {@code true} when a datagram arrived, {@code false} when the deadline passed */
    private boolean await(long deadline) throws IOException {
        return awaitFor(deadline, timeoutNanos == 0);
    }

    private boolean awaitFor(long deadline, boolean forever) throws IOException {
        while (true) {
            if (drainSocket() > 0) {
                return true;
            }
            long waitMillis = 0;
            if (!forever) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                waitMillis = Math.max(1, (remaining + 999_999) / 1_000_000);
            }
            selector.select(waitMillis);
            selector.selectedKeys().clear();
        }
    }

    private int drainSocket() throws IOException {
        int n = 0;
        while (true) {
            in.clear();
            if (channel.receive(in) == null) {
                return n;
            }
            onDatagram(in.position());
            n++;
        }
    }

    private void onDatagram(int length) {
        if (length < HEADER_LENGTH) {
            droppedDatagrams++;
            return;
        }
        int rank = inHeader.rankId();
        if (rank < 1 || rank >= ranks.length) {
            droppedDatagrams++;
            return;
        }
        V1Rank s = ranks[rank];
        int result = inHeader.result();
        switch (inHeader.operation()) {
            case OP_EXEC:
                if (s.execResult < 0) {
                    s.execResult = result;
                    s.execReason = text(length);
                }
                break;
            case OP_TERMINATE:
                if (!s.terminated) {
                    s.terminated = true;
                    s.terminateResult = result;
                    s.exitStatus = (int) inHeader.datacount();
                }
                break;
            case OP_RECV:
                onRecvReply(s, result, length);
                break;
            default:
                droppedDatagrams++;
        }
    }

    private void onRecvReply(V1Rank s, int result, int length) {
        if (result != 0) {
            s.recvFailed(result, text(length));
            return;
        }
        int datatype = inHeader.datatype();
        int size = MpiDatatype.sizeOf(datatype);
        long count = inHeader.datacount();
        if (size <= 0 || count == 0 || count * size > length - HEADER_LENGTH) {
            droppedDatagrams++;
            return;
        }
        byte[] data = new byte[(int) count * size];
        in.get(HEADER_LENGTH, data);
        s.keep(datatype, data, count);
    }

    /** @return the UTF-8 payload after the header, without trailing NULs */
    private String text(int length) {
        int end = length;
        while (end > HEADER_LENGTH && in.get(end - 1) == 0) {
            end--;
        }
        byte[] bytes = new byte[end - HEADER_LENGTH];
        in.get(HEADER_LENGTH, bytes);
        return new String(bytes, StandardCharsets.UTF_8).strip();
    }

    private static String seconds(long nanos) {
        Duration d = Duration.ofNanos(nanos);
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
