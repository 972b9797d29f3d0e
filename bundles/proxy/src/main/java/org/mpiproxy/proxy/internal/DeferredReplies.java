package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.api.DatagramTransport;

/**
 * Replies that cannot leave now, kept in order to be sent later: the transport a proxy being
 * handed over gives the completions it applies last (an EXEC acknowledged, a TERMINATE answered),
 * whose replies the next revision sends. Not thread-safe: under the handler's lock.
 */
final class DeferredReplies implements DatagramTransport {

    private final List<Object[]> datagrams = new ArrayList<>();

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        byte[] copy = new byte[datagram.remaining()];
        datagram.get(copy);
        datagrams.add(new Object[] {copy, target});
        return true;
    }

    @Override
    public InetSocketAddress localAddress() {
        return new InetSocketAddress(0);
    }

    @Override
    public int maxDatagramSize() {
        return 65507;
    }

    @Override
    public void wakeup() {
        // nothing runs here
    }

    /** @param other replies kept before these are sent: appended, in their order */
    void addAll(DeferredReplies other) {
        datagrams.addAll(other.datagrams);
    }

    /** @return every kept reply as {@code {byte[] datagram, InetSocketAddress target}}, in order */
    List<Object[]> export() {
        return new ArrayList<>(datagrams);
    }

    /** @param exported what {@link #export()} gave (of any revision); what is not such a pair is ignored */
    void restore(Object exported) {
        if (!(exported instanceof List)) {
            return;
        }
        for (Object o : (List<?>) exported) {
            if (o instanceof Object[] && ((Object[]) o).length == 2 && ((Object[]) o)[0] instanceof byte[]
                    && ((Object[]) o)[1] instanceof InetSocketAddress) {
                datagrams.add((Object[]) o);
            }
        }
    }

    /**
     * Sends every kept reply through {@code transport}, in order, and forgets them.
     *
     * @return how many were sent
     */
    int sendAll(DatagramTransport transport) {
        int n = datagrams.size();
        if (n == 0) {
            return 0; // every pass of the relay thread comes here
        }
        for (Object[] d : datagrams) {
            transport.send(ByteBuffer.wrap((byte[]) d[0]), (InetSocketAddress) d[1]);
        }
        datagrams.clear();
        return n;
    }
}
