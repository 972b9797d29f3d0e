package org.mpiproxy.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;

/**
 * Requests over UDP repeated in rounds until every one is answered or the time is up: each
 * round sends every request still unanswered, then the answers are read as they come until
 * the next round is due. One socket, bound to a given port (a job's own port, or any).
 * Not thread-safe; {@link #run} owns its socket.
 */
final class RequestRounds {

    /** What one exchange does in its rounds. */
    interface Exchange {
        /**
         * Sends every request not answered yet.
         *
         * @param channel the socket
         * @throws IOException when the socket fails
         */
        void send(DatagramChannel channel) throws IOException;

        /**
         * Takes one datagram.
         *
         * @param channel the socket, for answers that ask for more at once (a next page)
         * @param source  who sent it
         * @param in      the datagram, from 0 to its position
         * @throws IOException when the socket fails
         */
        void receive(DatagramChannel channel, InetSocketAddress source, ByteBuffer in) throws IOException;

        /** @return whether every request is answered (or the exchange was given up); asked before each wait */
        boolean done();
    }

    private static final long MAX_SELECT_NANOS = 200_000_000L;

    private RequestRounds() {
    }

    /**
     * @param localPort   the port to send from (0: any)
     * @param in          the buffer datagrams are received into
     * @param wait        how long to try
     * @param resendNanos time between rounds
     * @param exchange    the requests and their answers
     * @throws IOException when the port cannot be bound or the socket fails
     */
    static void run(int localPort, ByteBuffer in, Duration wait, long resendNanos, Exchange exchange)
            throws IOException {
        try (DatagramChannel channel = DatagramChannel.open(); Selector selector = Selector.open()) {
            channel.bind(new InetSocketAddress(localPort));
            channel.configureBlocking(false);
            channel.register(selector, SelectionKey.OP_READ);
            long deadline = System.nanoTime() + wait.toNanos();
            long nextSend = System.nanoTime();
            while (!exchange.done()) {
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    break;
                }
                if (now - nextSend >= 0) {
                    exchange.send(channel);
                    nextSend = System.nanoTime() + resendNanos;
                }
                // at most 200 ms, so that done() sees a stop request soon
                selector.select(Math.max(1, Math.min(Math.min(deadline, nextSend) - System.nanoTime(), MAX_SELECT_NANOS)
                        / 1_000_000));
                selector.selectedKeys().clear();
                InetSocketAddress source;
                while ((source = (InetSocketAddress) channel.receive(in.clear())) != null) {
                    exchange.receive(channel, source, in);
                }
            }
        }
    }
}
