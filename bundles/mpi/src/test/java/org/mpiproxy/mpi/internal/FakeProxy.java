package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;

/** A v1 proxy stand-in on 127.0.0.1: records every datagram and answers as its behaviour says. */
public final class FakeProxy implements AutoCloseable {

    /** One received datagram. */
    public record Datagram(InetSocketAddress source, byte[] bytes) {
        public V1HeaderFlyweight header() {
            return new V1HeaderFlyweight().wrap(ByteBuffer.wrap(bytes), 0);
        }

        public byte[] payload() {
            return java.util.Arrays.copyOfRange(bytes, V1HeaderDescriptor.HEADER_LENGTH, bytes.length);
        }
    }

    /** What the proxy does with a datagram; runs on the proxy's thread. */
    public interface Behaviour {
        void on(Datagram datagram, FakeProxy proxy) throws IOException;
    }

    /** Answers EXEC and TERMINATE with success (exit status 0); ignores the rest. */
    public static final Behaviour STARTS_EVERYTHING = (d, p) -> {
        V1HeaderFlyweight h = d.header();
        if (h.operation() == V1HeaderDescriptor.OP_EXEC) {
            p.reply(d.source(), V1HeaderDescriptor.OP_EXEC, 0, h.rankId(), h.coreId(), 0, 0, new byte[0]);
        } else if (h.operation() == V1HeaderDescriptor.OP_TERMINATE) {
            p.reply(d.source(), V1HeaderDescriptor.OP_TERMINATE, 0, h.rankId(), h.coreId(), 0, 0, new byte[0]);
        }
    };

    private final DatagramChannel channel;
    private final Thread thread;
    private final List<Datagram> received = new ArrayList<>();
    private volatile Behaviour behaviour;
    private volatile Throwable failure;

    public FakeProxy(Behaviour behaviour) throws IOException {
        this.behaviour = behaviour;
        this.channel = DatagramChannel.open();
        channel.bind(new InetSocketAddress("127.0.0.1", 0));
        this.thread = new Thread(this::run, "fake-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    public int port() throws IOException {
        return ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }

    HostfileEntry node(int coreId) throws IOException {
        return new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port(), coreId);
    }

    void behaviour(Behaviour b) {
        this.behaviour = b;
    }

    private void run() {
        ByteBuffer buf = ByteBuffer.allocate(65536);
        while (true) {
            try {
                buf.clear();
                InetSocketAddress source = (InetSocketAddress) channel.receive(buf);
                byte[] bytes = new byte[buf.position()];
                buf.flip().get(bytes);
                Datagram d = new Datagram(source, bytes);
                synchronized (received) {
                    received.add(d);
                    received.notifyAll();
                }
                behaviour.on(d, this);
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException | RuntimeException e) {
                failure = e;
                return;
            }
        }
    }

    public void reply(InetSocketAddress to, int op, int result, int rank, int core, int typeOrCount, long count, byte[] payload)
            throws IOException {
        ByteBuffer b = ByteBuffer.allocate(V1HeaderDescriptor.HEADER_LENGTH + payload.length).order(ByteOrder.LITTLE_ENDIAN);
        new V1HeaderFlyweight().wrap(b, 0).set(op, result, rank, core, typeOrCount, count);
        b.put(V1HeaderDescriptor.HEADER_LENGTH, payload);
        channel.send(b, to);
    }

    /** @return the datagrams of one operation received so far, in order */
    public List<Datagram> received(int op) {
        synchronized (received) {
            return received.stream().filter(d -> d.bytes().length >= 1 && (d.bytes()[0] & 0xff) == op).toList();
        }
    }

    /** Waits until {@code n} datagrams of {@code op} arrived; the ceiling of a minute only stops a hang. */
    public List<Datagram> await(int op, int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        synchronized (received) {
            while (received(op).size() < n) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    throw new AssertionError("only " + received(op).size() + " of " + n + " datagrams of op " + op);
                }
                received.wait(left);
            }
            return received(op);
        }
    }

    public Throwable failure() {
        return failure;
    }

    @Override
    public void close() throws IOException {
        channel.close();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
