package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A host's UDP socket, non-blocking, with its selector: what both host transports (v1 and v2)
 * open the same way.
 *
 * @param channel  the socket
 * @param selector its selector
 * @param key      the socket's key, interested in reads
 */
record HostSocket(DatagramChannel channel, Selector selector, SelectionKey key) {

    /**
     * How long a host waiting for the next datagram of a stream polls its socket before it sleeps
     * in the selector. Datagrams of a stream come microseconds apart; a wake-up from the selector
     * costs more than that on a virtual machine, so a receiver that sleeps at every gap spends its
     * time waking up (benchmarks/analysis.md, "Streams": the v2 rank-to-host stream went from
     * about 0.45x to 0.65x of raw UDP). Waits for acknowledgements do not poll: with polling there
     * the host-to-rank stream measured lower (0.42x and 0.38x against 0.46x).
     */
    static final long POLL_BEFORE_SLEEP_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    /**
     * @param localPort   the local port, 0 for any
     * @param buffers     bytes asked of the kernel for the receive buffer (it may grant less)
     * @param sendBuffers whether the send buffer gets the same size
     * @return the socket, bound; nothing is left open when it cannot be made
     */
    static HostSocket open(int localPort, int buffers, boolean sendBuffers) throws IOException {
        DatagramChannel ch = DatagramChannel.open();
        Selector sel = null;
        try {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, buffers);
            if (sendBuffers) {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, buffers);
            }
            ch.bind(new InetSocketAddress(localPort));
            ch.configureBlocking(false);
            sel = Selector.open();
            return new HostSocket(ch, sel, ch.register(sel, SelectionKey.OP_READ));
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
    }

    /**
     * {@link Selector#select(long)}, after polling the selector for up to {@code pollNanos}: a
     * datagram that comes meanwhile is taken without sleeping.
     *
     * @param millis    the longest sleep after the polling, 0 for no limit
     * @param pollNanos how long to poll first, 0 for not at all
     * @return the number of keys ready, 0 when the wait ran out
     */
    static int select(Selector selector, long millis, long pollNanos) throws IOException {
        return select(selector, millis, pollNanos, System::nanoTime);
    }

    /** As {@link #select(Selector, long, long)}, timing the polling on {@code nanoClock}. */
    static int select(Selector selector, long millis, long pollNanos, LongSupplier nanoClock) throws IOException {
        int ready = selector.selectNow();
        if (ready == 0 && pollNanos > 0) {
            long end = nanoClock.getAsLong() + pollNanos;
            do {
                Thread.onSpinWait();
                ready = selector.selectNow();
            } while (ready == 0 && nanoClock.getAsLong() - end < 0);
        }
        return ready > 0 ? ready : selector.select(millis);
    }
}
