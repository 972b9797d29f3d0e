package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;

import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/** A v1 host: a blocking UDP socket connected to the proxy, and the four requests. */
final class V1Host implements AutoCloseable {

    final DatagramChannel channel;
    private final ByteBuffer out = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer in = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
    private final V1HeaderFlyweight outHeader = new V1HeaderFlyweight().wrap(out, 0);
    private final V1HeaderFlyweight inHeader = new V1HeaderFlyweight().wrap(in, 0);

    V1Host(InetSocketAddress proxy) throws IOException {
        channel = DatagramChannel.open(StandardProtocolFamily.INET);
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        channel.setOption(StandardSocketOptions.SO_SNDBUF, 4 << 20);
        channel.bind(new InetSocketAddress("127.0.0.1", 0));
        channel.connect(proxy);
    }

    void exec(int rankId, int worldSize, String command) throws IOException {
        byte[] text = command.getBytes(StandardCharsets.UTF_8);
        outHeader.set(V1HeaderDescriptor.OP_EXEC, 0, rankId, 0, worldSize, 0);
        out.clear().position(V1HeaderDescriptor.HEADER_LENGTH);
        out.put(text).flip();
        channel.write(out);
    }

    void terminate(int rankId) throws IOException {
        header(V1HeaderDescriptor.OP_TERMINATE, rankId, 0, 0);
    }

    void recv(int rankId, int datatype, long count) throws IOException {
        header(V1HeaderDescriptor.OP_RECV, rankId, datatype, count);
    }

    /** Sends a SEND whose payload is {@code bytes} bytes of the prepared buffer. */
    void send(int rankId, int datatype, long count, int bytes) throws IOException {
        outHeader.set(V1HeaderDescriptor.OP_SEND, 0, rankId, 0, datatype, count);
        out.clear().limit(V1HeaderDescriptor.HEADER_LENGTH + bytes);
        channel.write(out);
    }

    void sendInt(int rankId, int value) throws IOException {
        out.clear().putInt(V1HeaderDescriptor.HEADER_LENGTH, value);
        send(rankId, org.mpiproxy.protocol.MpiDatatype.INT.code(), 1, 4);
    }

    private void header(int op, int rankId, int datatype, long count) throws IOException {
        outHeader.set(op, 0, rankId, 0, datatype, count);
        out.clear().limit(V1HeaderDescriptor.HEADER_LENGTH);
        channel.write(out);
    }

    /** Blocks for the next datagram; returns its header (valid until the next call). */
    V1HeaderFlyweight receive() throws IOException {
        in.clear();
        channel.read(in);
        return inHeader;
    }

    int lastLength() {
        return in.position();
    }

    /** Blocks until a reply of {@code op} arrives; returns its result code. */
    int await(int op) throws IOException {
        while (true) {
            V1HeaderFlyweight h = receive();
            if (h.operation() == op) {
                return h.result();
            }
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
