package org.mpiproxy.itests;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A FreeNOS v1 host written from the protocol facts alone, deliberately without any of the
 * project's own classes: 12-byte little-endian header {u8 op, u8 result, u16 rankId, u16 coreId,
 * u16 coreCount/datatype, u32 datacount}, datagrams of at most 1448 bytes.
 */
final class FreeNosHost implements AutoCloseable {

    static final int SEND = 0;
    static final int RECV = 1;
    static final int EXEC = 2;
    static final int TERMINATE = 3;

    static final int MPI_CHAR = 0;
    static final int MPI_INT = 3;
    static final int MPI_UNSIGNED_CHAR = 4;

    static final int HEADER = 12;
    static final int MAX_DATAGRAM = 1448;

    /** A datagram received from the proxy. */
    static final class Reply {
        final int op;
        final int result;
        final int rankId;
        final int coreId;
        final int typeOrCount;
        final long datacount;
        final byte[] payload;

        Reply(byte[] data, int length) {
            ByteBuffer b = ByteBuffer.wrap(data, 0, length).order(ByteOrder.LITTLE_ENDIAN);
            op = b.get(0) & 0xff;
            result = b.get(1) & 0xff;
            rankId = b.getShort(2) & 0xffff;
            coreId = b.getShort(4) & 0xffff;
            typeOrCount = b.getShort(6) & 0xffff;
            datacount = b.getInt(8) & 0xffffffffL;
            payload = Arrays.copyOfRange(data, HEADER, length);
        }

        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return "{op=" + op + " result=" + result + " rank=" + rankId + " core=" + coreId + " type/count="
                    + typeOrCount + " datacount=" + datacount + " payload=" + payload.length + "B}";
        }
    }

    private final DatagramSocket socket;
    private volatile InetSocketAddress proxy;
    private final byte[] receiveBuffer = new byte[65536];

    FreeNosHost(int proxyPort, int timeoutMillis) throws IOException {
        this(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxyPort), timeoutMillis);
    }

    /** @param proxy the proxy's address and port (a node of a test cluster) */
    FreeNosHost(InetSocketAddress proxy, int timeoutMillis) throws IOException {
        this.socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        this.socket.setSoTimeout(timeoutMillis);
        this.socket.setReceiveBufferSize(4 << 20);
        this.proxy = proxy;
    }

    static byte[] header(int op, int result, int rankId, int coreId, int typeOrCount, long datacount, int payload) {
        ByteBuffer b = ByteBuffer.allocate(HEADER + payload).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) op).put((byte) result).putShort((short) rankId).putShort((short) coreId)
                .putShort((short) typeOrCount).putInt((int) datacount);
        return b.array();
    }

    /** @param millis how long a receive waits from now on */
    void timeout(int millis) throws IOException {
        socket.setSoTimeout(millis);
    }

    void sendRaw(byte[] datagram) throws IOException {
        socket.send(new DatagramPacket(datagram, datagram.length, proxy));
    }

    Reply receive() throws IOException {
        DatagramPacket p = new DatagramPacket(receiveBuffer, receiveBuffer.length);
        socket.receive(p);
        return new Reply(p.getData(), p.getLength());
    }

    /** @return the next datagram, or {@code null} when none arrives within the socket timeout */
    Reply receiveOrNull() throws IOException {
        try {
            return receive();
        } catch (SocketTimeoutException e) {
            return null;
        }
    }

    Reply exec(int rankId, int coreId, int worldSize, String command) throws IOException {
        byte[] text = command.getBytes(StandardCharsets.US_ASCII);
        byte[] d = header(EXEC, 0, rankId, coreId, worldSize, 0, text.length);
        System.arraycopy(text, 0, d, HEADER, text.length);
        sendRaw(d);
        return receive();
    }

    void sendInts(int rankId, int... values) throws IOException {
        byte[] d = header(SEND, 0, rankId, 0, MPI_INT, values.length, values.length * 4);
        ByteBuffer b = ByteBuffer.wrap(d).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            b.putInt(HEADER + 4 * i, values[i]);
        }
        sendRaw(d);
    }

    /** Sends one SEND datagram: {@code count} elements of {@code datatype}, packed in {@code elements}. */
    void send(int rankId, int datatype, int count, byte[] elements) throws IOException {
        byte[] d = header(SEND, 0, rankId, 0, datatype, count, elements.length);
        System.arraycopy(elements, 0, d, HEADER, elements.length);
        sendRaw(d);
    }

    /**
     * Sends RECV and collects replies until {@code count} elements arrived; every reply must be
     * a successful RECV reply for the rank, with a payload of exactly datacount x size bytes.
     */
    byte[] recv(int rankId, int datatype, int elementSize, long count) throws IOException {
        sendRaw(header(RECV, 0, rankId, 0, datatype, count, 0));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long received = 0;
        while (received < count) {
            Reply r = receive();
            if (r.op != RECV || r.result != 0 || r.rankId != rankId || r.typeOrCount != datatype) {
                throw new AssertionError("unexpected reply to RECV of rank " + rankId + ": " + r);
            }
            if (r.payload.length != r.datacount * elementSize) {
                throw new AssertionError("reply payload is not dense: " + r);
            }
            if (HEADER + r.payload.length > MAX_DATAGRAM) {
                throw new AssertionError("reply larger than 1448 bytes: " + r);
            }
            out.write(r.payload, 0, r.payload.length);
            received += r.datacount;
        }
        if (received != count) {
            throw new AssertionError("received " + received + " elements, asked for " + count);
        }
        return out.toByteArray();
    }

    int recvInt(int rankId) throws IOException {
        return ByteBuffer.wrap(recv(rankId, MPI_INT, 4, 1)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    Reply terminate(int rankId, int coreId) throws IOException {
        sendRaw(header(TERMINATE, 0, rankId, coreId, 0, 0, 0));
        return receive();
    }

    /** Sends from now on to another port of the proxy (same host socket, so the same job). */
    void proxyPort(int port) {
        this.proxy = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    int localPort() {
        return socket.getLocalPort();
    }

    @Override
    public void close() {
        socket.close();
    }
}
