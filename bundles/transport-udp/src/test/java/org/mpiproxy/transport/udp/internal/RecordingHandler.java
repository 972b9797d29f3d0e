package org.mpiproxy.transport.udp.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.mpiproxy.api.DatagramHandler;
import org.mpiproxy.api.DatagramTransport;

/** Records datagrams and counts duty-cycle calls; optionally echoes every datagram. */
final class RecordingHandler implements DatagramHandler {

    record Received(byte[] bytes, InetSocketAddress source, ByteOrder order, boolean direct) {
    }

    final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    final AtomicInteger doWorkCalls = new AtomicInteger();
    final AtomicBoolean pendingWork = new AtomicBoolean();
    volatile boolean echo;
    volatile Runnable onDoWork;

    @Override
    public void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies) {
        byte[] bytes = new byte[datagram.remaining()];
        datagram.duplicate().get(bytes);
        received.add(new Received(bytes, source, datagram.order(), datagram.isDirect()));
        if (echo) {
            replies.send(datagram, source);
        }
    }

    @Override
    public int doWork(DatagramTransport replies) {
        doWorkCalls.incrementAndGet();
        Runnable r = onDoWork;
        if (r != null) {
            onDoWork = null;
            r.run();
            return 1;
        }
        return 0;
    }

    @Override
    public boolean hasPendingWork() {
        return pendingWork.get();
    }

    /** What {@link #armDoorbells} answers, and the doorbell it was last given. */
    volatile int armAnswer = SLEEP_AS_USUAL;
    final java.util.concurrent.atomic.AtomicLong armedWith = new java.util.concurrent.atomic.AtomicLong();
    final AtomicInteger armCalls = new AtomicInteger();

    @Override
    public int armDoorbells(long doorbell, DatagramTransport replies) {
        armedWith.set(doorbell);
        armCalls.incrementAndGet();
        return armAnswer;
    }
}
