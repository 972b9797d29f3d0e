package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

import org.mpiproxy.api.Doorbell;

/**
 * A rank's doorbell socket (docs/ring-layout.md, "Doorbell"): a UDP socket on the loopback
 * address where the rank sleeps while it waits for the proxy to write, and from which it rings
 * the proxy's doorbell after it wrote. Opened on first use; a rank that cannot open it sleeps on
 * its timer as before. Not thread-safe.
 */
final class RankDoorbell implements AutoCloseable {

    private DatagramChannel channel;
    private Selector selector;
    private long address;
    private boolean unavailable;
    private final ByteBuffer drain = ByteBuffer.allocate(64);

    /** @return this rank's doorbell, encoded; 0 when it has none */
    long address() {
        if (channel == null && !unavailable) {
            try {
                channel = DatagramChannel.open();
                channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                channel.configureBlocking(false);
                selector = Selector.open();
                channel.register(selector, SelectionKey.OP_READ);
                address = Doorbell.encode((InetSocketAddress) channel.getLocalAddress());
            } catch (IOException | RuntimeException e) {
                close();
            }
            unavailable = address == 0;
        }
        return address;
    }

    /**
     * Sleeps until the doorbell rings or the time is up, then empties the socket.
     *
     * @param millis the longest sleep, &gt;= 1
     */
    void await(long millis) {
        try {
            selector.select(millis);
            selector.selectedKeys().clear();
            while (channel.receive(drain.clear()) != null) {
                // every doorbell means the same: look at the ring
            }
        } catch (IOException | RuntimeException e) {
            close();
            unavailable = true;
        }
    }

    /**
     * Rings another side's doorbell; a failure is a lost wake-up, which the sleeper's timeout covers.
     *
     * @param encoded the doorbell taken from a ring
     */
    void ring(long encoded) {
        InetSocketAddress to = Doorbell.decode(encoded);
        if (to == null || address() == 0) {
            return;
        }
        try {
            channel.send(Doorbell.datagram(), to);
        } catch (IOException | RuntimeException e) {
            // lost: the proxy wakes on its timer
        }
    }

    @Override
    public void close() {
        try {
            if (selector != null) {
                selector.close();
            }
            if (channel != null) {
                channel.close();
            }
        } catch (IOException e) {
            // nothing to do: the rank ends
        }
        selector = null;
        channel = null;
        address = 0;
    }
}
