package org.mpiproxy.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Probes proxies, each from its own socket connected to it, so that a port where nothing listens
 * shows at once (ICMP port unreachable, which an unconnected socket never reports). The request
 * is repeated until answered, at most every second. Not thread-safe.
 */
final class Prober {

    private static final long RESEND_NANOS = Duration.ofSeconds(1).toNanos();

    /** What a probe learned of one proxy: it answered, or why not (in words). */
    record Answer(boolean answered, String problem) {

        static final Answer ANSWERED = new Answer(true, null);
        /** Nothing came back, no refusal and no ICMP error. */
        static final Answer SILENT = new Answer(false, "its node's proxy does not answer");

        static Answer nothingListens(InetSocketAddress proxy) {
            return new Answer(false, "no proxy answers at " + proxy.getAddress().getHostAddress() + ":"
                    + proxy.getPort() + ": nothing listens on that UDP port");
        }
    }

    /** The protocol's side of a probe. */
    interface Exchange {
        /**
         * @param proxy the proxy
         * @return a fresh request for it, ready to send
         */
        ByteBuffer request(InetSocketAddress proxy);

        /**
         * @param proxy the proxy the datagram came from
         * @param in    the datagram, from index 0 to its position
         * @return {@link Answer#ANSWERED}, a refusal's answer, or {@code null} when it is no answer
         */
        Answer check(InetSocketAddress proxy, ByteBuffer in);

        /**
         * @param proxy the proxy
         * @return whether its next probe waits (a back-off after it said it is busy)
         */
        default boolean holdsOff(InetSocketAddress proxy) {
            return false;
        }

        /**
         * @param proxy a proxy that gave no answer in time
         * @return what that means ({@link Answer#SILENT} unless it refused as busy)
         */
        default Answer unanswered(InetSocketAddress proxy) {
            return Answer.SILENT;
        }
    }

    private Prober() {
    }

    /**
     * @param proxies  the proxies
     * @param wait     how long to wait for all answers
     * @param exchange builds requests and checks replies
     * @param in       the receive buffer, large enough for a reply
     * @return each proxy and what its probe learned
     * @throws IOException when a socket cannot be opened
     */
    static Map<InetSocketAddress, Answer> probe(List<InetSocketAddress> proxies, Duration wait, Exchange exchange,
                                                ByteBuffer in) throws IOException {
        Map<InetSocketAddress, Answer> answers = new LinkedHashMap<>();
        proxies.forEach(p -> answers.put(p, null));
        Map<InetSocketAddress, DatagramChannel> channels = new LinkedHashMap<>();
        try (Selector selector = Selector.open()) {
            for (InetSocketAddress p : answers.keySet()) {
                DatagramChannel c = DatagramChannel.open();
                channels.put(p, c);
                c.configureBlocking(false);
                c.connect(p);
                c.register(selector, SelectionKey.OP_READ, p);
            }
            long deadline = System.nanoTime() + wait.toNanos();
            long nextSend = System.nanoTime();
            while (answers.containsValue(null)) {
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    break;
                }
                if (now - nextSend >= 0) {
                    for (Map.Entry<InetSocketAddress, DatagramChannel> e : channels.entrySet()) {
                        if (answers.get(e.getKey()) == null && !exchange.holdsOff(e.getKey())) {
                            send(e.getValue(), e.getKey(), exchange, answers);
                        }
                    }
                    nextSend = now + Math.min(RESEND_NANOS, Math.max(1, wait.toNanos() / 4));
                }
                selector.select(Math.max(1, Math.min(deadline, nextSend) - now) / 1_000_000 + 1);
                selector.selectedKeys().clear();
                for (Map.Entry<InetSocketAddress, DatagramChannel> e : channels.entrySet()) {
                    receive(e.getValue(), e.getKey(), exchange, answers, in);
                }
            }
        } finally {
            for (DatagramChannel c : channels.values()) {
                c.close();
            }
        }
        answers.replaceAll((p, a) -> a == null ? exchange.unanswered(p) : a);
        return answers;
    }

    private static void send(DatagramChannel channel, InetSocketAddress proxy, Exchange exchange,
                             Map<InetSocketAddress, Answer> answers) throws IOException {
        try {
            channel.write(exchange.request(proxy));
        } catch (PortUnreachableException e) {
            answers.put(proxy, Answer.nothingListens(proxy));
        }
    }

    private static void receive(DatagramChannel channel, InetSocketAddress proxy, Exchange exchange,
                                Map<InetSocketAddress, Answer> answers, ByteBuffer in) throws IOException {
        while (answers.get(proxy) == null) {
            in.clear();
            try {
                if (channel.read(in) <= 0) {
                    return;
                }
            } catch (PortUnreachableException e) {
                answers.put(proxy, Answer.nothingListens(proxy));
                return;
            }
            Answer a = exchange.check(proxy, in);
            if (a != null) {
                answers.put(proxy, a);
            }
        }
    }
}
