package org.mpiproxy.cli;

import static org.mpiproxy.protocol.V2HeaderDescriptor.OP_STATUS;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.PortUnreachableException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The dead-node rule of a running job in the launcher (docs/protocol-v2.md 7, "Dead"), as the
 * host library applies it: every valid datagram from a node resets its silence; a node silent for
 * a second gets a probe (STATUS of job 0, or of its own job under a job key) every second from a socket connected to it, so that a
 * closed port shows as ICMP port unreachable. A node the job still needs (one of its ranks has not
 * ended) is lost after {@value #DEAD_AFTER_ENV} of silence (5 s) in which at least
 * {@value #UNANSWERED_PROBES} probes a second apart went unanswered (a launcher that was itself
 * stalled, on a loaded machine, has sent none: it asks again before it decides), or 3 s after its
 * port was found closed with nothing valid heard since; {@value #RESTART_WAIT_ENV} lengthens both to itself, so a
 * node restarted within it keeps the job. Time runs on an injected clock.
 * <p>
 * Threads: the session's thread only, but {@link #lost()}, which any thread may read.
 */
final class NodeWatch implements AutoCloseable {

    /** The dead-node silence in milliseconds, 0 = never (the job's environment, as the library reads it). */
    static final String DEAD_AFTER_ENV = "MPIPROXY_DEAD_AFTER_MS";
    /** How long a node whose proxy stopped may take to come back, in milliseconds (0: not at all). */
    static final String RESTART_WAIT_ENV = "MPIPROXY_RESTART_WAIT_MS";
    static final Duration DEFAULT_DEAD_AFTER = Duration.ofSeconds(5);
    /** Silence after which a node is probed, and the interval of its probes. */
    static final long PROBE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Probes that must go unanswered, besides the silence, before a node is lost. */
    static final int UNANSWERED_PROBES = 3;
    /** How long a closed port (ICMP port unreachable) lasts before its node is lost. */
    static final long UNREACHABLE_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** How long busy refusals alone keep a node alive (docs/protocol-v2.md 3.5). */
    static final long BUSY_NANOS = TimeUnit.SECONDS.toNanos(61);

    /**
     * The rule's times.
     *
     * @param deadAfter   silence after which a node is lost; {@link Duration#ZERO}: never
     * @param restartWait how long a closed port and silence are waited for at least
     */
    record Times(Duration deadAfter, Duration restartWait) {

        static final Times DEFAULT = new Times(DEFAULT_DEAD_AFTER, Duration.ZERO);

        /**
         * @param env the job's environment ({@code -x} and its kin)
         * @return the times it sets, else the defaults
         * @throws IllegalArgumentException naming a variable that is not a number of milliseconds
         */
        static Times of(Map<String, String> env) {
            return new Times(millis(env, DEAD_AFTER_ENV, DEFAULT_DEAD_AFTER), millis(env, RESTART_WAIT_ENV,
                    Duration.ZERO));
        }

        private static Duration millis(Map<String, String> env, String name, Duration otherwise) {
            String text = env.get(name);
            if (text == null || text.isBlank()) {
                return otherwise;
            }
            try {
                long millis = Long.parseLong(text.strip());
                if (millis >= 0 && millis <= 1_000_000_000_000L) {
                    return Duration.ofMillis(millis);
                }
            } catch (NumberFormatException e) {
                // said below, with the variable's name
            }
            throw new IllegalArgumentException(name + "='" + text + "' is not a number of milliseconds >= 0");
        }

        long silenceNanos() {
            return deadAfter.isZero() ? Long.MAX_VALUE : Math.max(deadAfter.toNanos(), restartWait.toNanos());
        }

        long unreachableNanos() {
            return Math.max(UNREACHABLE_NANOS, restartWait.toNanos());
        }
    }

    /**
     * A node the job lost.
     *
     * @param node   its proxy
     * @param ranks  the job's ranks on it
     * @param reason why it counts as lost
     */
    record Lost(InetSocketAddress node, List<Integer> ranks, String reason) {
        /** @return the one line that names the node and its ranks */
        String describe() {
            StringBuilder s = new StringBuilder("node ").append(where(node)).append(" lost with ")
                    .append(ranks.size() == 1 ? "rank " : "ranks ");
            for (int i = 0; i < ranks.size(); i++) {
                s.append(i == 0 ? "" : ", ").append(ranks.get(i));
            }
            return s.append(": ").append(reason).toString();
        }
    }

    /** One node's liveness. */
    private static final class Node {
        final InetSocketAddress address;
        final List<Integer> ranks;
        DatagramChannel probe;
        long heardAt;
        long probedAt;
        /** Probes sent since the node was last heard. */
        int unanswered;
        long busySince;
        boolean busy;
        boolean unreachable;
        long unreachableSince;

        Node(InetSocketAddress address, List<Integer> ranks) {
            this.address = address;
            this.ranks = ranks;
        }
    }

    private final Map<InetSocketAddress, Node> nodes = new LinkedHashMap<>();
    private final Times times;
    private final LongSupplier clock;
    private final V2Control.Signer signer;
    private final Selector selector;
    private volatile Lost lost;

    /**
     * @param ranksByNode the job's nodes and their ranks
     * @param times       the rule's times
     * @param clock       nanoseconds as {@link System#nanoTime}
     * @param signer      signs the probes and checks their replies (the session's)
     * @param selector    the session's selector, which the probe sockets join
     */
    NodeWatch(Map<InetSocketAddress, List<Integer>> ranksByNode, Times times, LongSupplier clock,
              V2Control.Signer signer, Selector selector) {
        this.times = times;
        this.clock = clock;
        this.signer = signer;
        this.selector = selector;
        ranksByNode.forEach((node, ranks) -> nodes.put(node, new Node(node, List.copyOf(ranks))));
    }

    /** Starts every node's silence now. */
    void start() {
        long now = clock.getAsLong();
        nodes.values().forEach(n -> n.heardAt = now);
    }

    /** A valid datagram came from {@code node}: it is alive, and its port open. */
    void heard(InetSocketAddress node) {
        Node n = nodes.get(node);
        if (n != null) {
            n.heardAt = clock.getAsLong();
            n.unanswered = 0;
            n.busy = false;
            n.unreachable = false;
        }
    }

    /** A refusal of ours as busy came from {@code node}: alive, for {@link #BUSY_NANOS} of busy at most. */
    void busy(InetSocketAddress node) {
        Node n = nodes.get(node);
        if (n == null) {
            return;
        }
        long now = clock.getAsLong();
        if (!n.busy) {
            n.busy = true;
            n.busySince = now;
        }
        if (now - n.busySince < BUSY_NANOS) {
            n.heardAt = now;
            n.unanswered = 0;
        }
        n.unreachable = false;
    }

    /**
     * Probes the nodes silent for a second, takes the probes' answers, and decides which node is lost.
     *
     * @param needed whether the job still needs a node (one of its ranks has not ended)
     * @return the node lost first, newly lost now; {@code null} when none is (or one was before)
     * @throws IOException when a probe socket cannot be opened
     */
    Lost check(Predicate<InetSocketAddress> needed) throws IOException {
        receive();
        if (lost != null) {
            return null;
        }
        long now = clock.getAsLong();
        for (Node n : nodes.values()) {
            if (!needed.test(n.address)) {
                continue;
            }
            String reason = reason(n, now);
            if (reason != null) {
                lost = new Lost(n.address, n.ranks, reason);
                return lost;
            }
            if (now - n.heardAt >= PROBE_NANOS && now - n.probedAt >= PROBE_NANOS) {
                n.probedAt = now;
                probe(n, now);
            }
        }
        return null;
    }

    /** @return the node lost first, or {@code null} */
    Lost lost() {
        return lost;
    }

    private String reason(Node n, long now) {
        if (n.unreachable && now - n.unreachableSince >= times.unreachableNanos()) {
            return "no proxy answers at " + where(n.address) + ": nothing listens on that UDP port (ICMP port"
                    + " unreachable for " + TimeUnit.NANOSECONDS.toMillis(now - n.unreachableSince)
                    + " ms; the proxy stopped)";
        }
        long silence = times.silenceNanos();
        if (silence != Long.MAX_VALUE && now - n.heardAt > silence && n.unanswered >= UNANSWERED_PROBES
                && now - n.probedAt >= PROBE_NANOS) {
            return "no proxy answers at " + where(n.address) + ": nothing heard for "
                    + TimeUnit.NANOSECONDS.toMillis(silence) + " ms, no refusal and no ICMP error (the node may be"
                    + " down or unreachable)";
        }
        return null;
    }

    private void probe(Node n, long now) throws IOException {
        if (n.probe == null) {
            n.probe = DatagramChannel.open();
            n.probe.configureBlocking(false);
            n.probe.connect(n.address);
            n.probe.register(selector, SelectionKey.OP_READ, n);
        }
        if (signer.holdsOff(n.address)) {
            return;
        }
        long token = signer.random.nextLong();
        try {
            n.probe.write(signer.request(n.address, OP_STATUS, V2Credential.probeJob(signer.credential), 0, 0,
                    h -> h.sequence(token), null));
            n.unanswered++;
        } catch (PortUnreachableException e) {
            unreachable(n, now);
        }
    }

    /** Takes what came back on the probe sockets. */
    private void receive() throws IOException {
        for (Node n : nodes.values()) {
            while (n.probe != null) {
                signer.in.clear();
                try {
                    if (n.probe.read(signer.in) <= 0) {
                        break;
                    }
                } catch (PortUnreachableException e) {
                    unreachable(n, clock.getAsLong());
                    break;
                }
                if (signer.refused(n.address)) {
                    if (signer.refusals.busy(n.address)) {
                        busy(n.address);
                    }
                    continue;
                }
                V2HeaderFlyweight h = signer.verify(n.address, V2Credential.probeJob(signer.credential));
                if (h != null && h.operation() == OP_STATUS) {
                    heard(n.address);
                }
            }
        }
    }

    private static void unreachable(Node n, long now) {
        if (!n.unreachable) {
            n.unreachable = true;
            n.unreachableSince = now;
        }
    }

    private static String where(InetSocketAddress node) {
        return node.getAddress().getHostAddress() + ":" + node.getPort();
    }

    @Override
    public void close() {
        List<DatagramChannel> open = new ArrayList<>();
        nodes.values().forEach(n -> {
            if (n.probe != null) {
                open.add(n.probe);
            }
        });
        for (DatagramChannel c : open) {
            try {
                c.close();
            } catch (IOException e) {
                // closing: a probe socket holds nothing
            }
        }
    }
}
