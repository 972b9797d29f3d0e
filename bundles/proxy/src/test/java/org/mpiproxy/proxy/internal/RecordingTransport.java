package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/** Keeps every datagram sent, with its target. */
final class RecordingTransport implements DatagramTransport {

    /** One sent datagram with a header view. */
    static final class Sent {
        final ByteBuffer bytes;
        final InetSocketAddress target;
        final V1HeaderFlyweight header;

        Sent(ByteBuffer bytes, InetSocketAddress target) {
            this.bytes = bytes;
            this.target = target;
            // a doorbell is shorter than a v1 header
            this.header = bytes.capacity() >= V1HeaderDescriptor.HEADER_LENGTH ? new V1HeaderFlyweight().wrap(bytes, 0) : null;
        }

        int payloadLength() {
            return bytes.capacity() - V1HeaderDescriptor.HEADER_LENGTH;
        }

        String reason() {
            byte[] b = new byte[payloadLength()];
            bytes.get(V1HeaderDescriptor.HEADER_LENGTH, b);
            return new String(b, StandardCharsets.UTF_8);
        }

        int intAt(int index) {
            return bytes.getInt(V1HeaderDescriptor.HEADER_LENGTH + index * 4);
        }
    }

    /** Any thread may send (launch threads acknowledge EXECs): the list is synchronized. */
    final List<Sent> sent = java.util.Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger wakeups = new AtomicInteger();
    boolean fail;

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        if (fail) {
            return false;
        }
        ByteBuffer copy = ByteBuffer.allocate(datagram.remaining()).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(datagram).flip();
        sent.add(new Sent(copy, target));
        return true;
    }

    @Override
    public InetSocketAddress localAddress() {
        return new InetSocketAddress("127.0.0.1", 6660);
    }

    @Override
    public int maxDatagramSize() {
        return V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
    }

    @Override
    public void wakeup() {
        wakeups.incrementAndGet();
    }

    /** @return the datagrams sent since the last call */
    List<Sent> take() {
        synchronized (sent) {
            List<Sent> list = new ArrayList<>(sent);
            sent.clear();
            return list;
        }
    }
}
