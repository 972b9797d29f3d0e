package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.ExecEnvironment;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * The launcher's EXECs of a job whose environment does not fit one datagram (docs/protocol-v2.md
 * 5.10), against two small fake proxies that keep environments as a node does: the environment
 * goes once to each node, every EXEC names it, and a node that lost it gets it again.
 */
class V2ExecEnvironmentTest {

    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, new byte[32]), 1);
    private static final long JOB = 0xe2e2L;
    /** How long a wait may take before the test counts it as hung; every wait here ends with its event. */
    private static final Duration CEILING = Duration.ofSeconds(60);

    private final List<FakeNode> nodes = new ArrayList<>();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** A proxy that keeps environments by digest and merges them into the EXECs naming them. */
    private static final class FakeNode implements AutoCloseable {
        final DatagramChannel channel;
        final V2Authenticator auth = new V2Authenticator(KEYS, NodeIds.of("127.0.0.1"), 30_000, 1024);
        /** Complete environments by digest in hex. */
        final Map<String, byte[]> held = new ConcurrentHashMap<>();
        final Map<String, byte[]> arriving = new ConcurrentHashMap<>();
        final Map<String, java.util.BitSet> pieces = new ConcurrentHashMap<>();
        final AtomicInteger probes = new AtomicInteger();
        final AtomicInteger fragments = new AtomicInteger();
        final AtomicInteger completed = new AtomicInteger();
        /** Every EXEC: its rank, flags, payload length and the environment the rank would get. */
        final List<String> execs = new CopyOnWriteArrayList<>();
        final Map<Long, Map<String, String>> launched = new ConcurrentHashMap<>();
        /** Drops what it holds at the first EXEC naming it, as a restarted proxy would. */
        volatile boolean forgetOnce;
        private final Thread thread;

        FakeNode() throws Exception {
            channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            thread = new Thread(this::serve);
            thread.setDaemon(true);
            thread.start();
        }

        int port() throws Exception {
            return ((InetSocketAddress) channel.getLocalAddress()).getPort();
        }

        private void serve() {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer reply = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) channel.receive(in.clear());
                    if (auth.verify(in, 0, in.position(), System.currentTimeMillis()) != V2Authenticator.OK) {
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(reply.clear(), 0).reset(h.operation(),
                            V2HeaderDescriptor.FLAG_REPLY).keyId(1).nodeId(auth.nodeId()).jobId(h.jobId())
                            .rank(h.rank()).sequence(h.sequence()).ack(h.ack()).tag(h.tag())
                            .timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
                    if (h.operation() == V2HeaderDescriptor.OP_ENVIRONMENT) {
                        r.argument(onEnvironment(h, in) ? 1 : 0);
                    } else if (h.operation() == V2HeaderDescriptor.OP_EXEC) {
                        r.tag(0).ack(0).sequence(0).result(onExec(h, in));
                    } else {
                        continue;
                    }
                    int n = auth.sign(reply, 0);
                    channel.send(reply.limit(n).position(0), from);
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        }

        /** @return whether the environment is complete here */
        private boolean onEnvironment(V2HeaderFlyweight h, ByteBuffer in) {
            byte[] digest = new byte[32];
            in.get(h.payloadOffset(), digest);
            String name = HexFormat.of().formatHex(digest);
            if (h.ack() == 0) {
                probes.incrementAndGet();
                return held.containsKey(name);
            }
            fragments.incrementAndGet();
            if (held.containsKey(name)) {
                return true;
            }
            byte[] content = arriving.computeIfAbsent(name, n -> new byte[(int) h.argument()]);
            in.get(h.payloadOffset() + 32, content, (int) h.sequence() * h.tag(), h.payloadLength() - 32);
            java.util.BitSet have = pieces.computeIfAbsent(name, n -> new java.util.BitSet());
            have.set((int) h.sequence());
            if (have.cardinality() == h.ack() && HexFormat.of().formatHex(ExecEnvironment.digest(content)).equals(name)) {
                held.put(name, content);
                completed.incrementAndGet();
                arriving.remove(name);
                pieces.remove(name);
                return true;
            }
            return false;
        }

        private int onExec(V2HeaderFlyweight h, ByteBuffer in) {
            boolean named = (h.flags() & V2HeaderDescriptor.FLAG_ENVIRONMENT) != 0;
            execs.add("rank " + h.rank() + " flags " + h.flags() + " payload " + h.payloadLength());
            Map<String, String> env = new LinkedHashMap<>();
            int skip = 0;
            if (named) {
                byte[] digest = new byte[32];
                in.get(h.payloadOffset(), digest);
                String name = HexFormat.of().formatHex(digest);
                if (forgetOnce) {
                    forgetOnce = false;
                    held.clear();
                }
                byte[] content = held.get(name);
                if (content == null) {
                    return MpiErrors.ERR_NO_ENVIRONMENT;
                }
                env.putAll(ExecEnvironment.decode(content));
                skip = 32;
            }
            ExecCommand c = ExecCommand.parsePlain(in, h.payloadOffset() + skip, h.payloadLength() - skip);
            env.putAll(c.environment());
            launched.put(h.rank(), env);
            return MpiErrors.SUCCESS;
        }

        @Override
        public void close() throws Exception {
            channel.close();
            thread.join(5000);
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (FakeNode n : nodes) {
            n.close();
        }
    }

    /** Two nodes, ranks 1 and 3 on the first, 2 and 4 on the second. */
    private V2Session session() throws Exception {
        List<Placement> placements = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            nodes.add(new FakeNode());
        }
        for (int r = 1; r <= 4; r++) {
            placements.add(new Placement("127.0.0.1", nodes.get((r - 1) % 2).port(), 0, "127.0.0.1"));
        }
        PrintStream print = new PrintStream(out, true, StandardCharsets.UTF_8);
        return new V2Session(JOB, KEYS, placements, print, print, true, () -> { });
    }

    /** The environments of ranks 1..4: a 5 KiB common part and two variables of each rank's own. */
    private static List<Map<String, String>> environments() {
        List<Map<String, String>> list = new ArrayList<>();
        for (int r = 1; r <= 4; r++) {
            Map<String, String> env = new LinkedHashMap<>();
            for (int i = 0; i < 80; i++) {
                env.put(String.format("SHELL_%03d", i), "s".repeat(53) + i % 10);
            }
            env.put("MPIPROXY_RANK_OF_TEST", String.valueOf(r));
            env.put("OMPI_COMM_WORLD_LOCAL_RANK", String.valueOf((r - 1) / 2));
            list.add(env);
        }
        return list;
    }

    @Test
    void shouldSendAFiveKibEnvironmentOncePerNodeAndNameItInEveryExec() throws Exception {
        List<Map<String, String>> environments = environments();
        Map<String, String> shell = new LinkedHashMap<>(environments.get(0));
        shell.keySet().removeIf(k -> !k.startsWith("SHELL_"));
        int common = ExecEnvironment.encode(shell).length;
        assertTrue(common >= 5 * 1024, common + " bytes");
        try (V2Session session = session()) {
            assertEquals(List.of(), session.exec(JobRunner.freeUdpPort(), "prog", List.of("a"), environments,
                    CEILING));
        }
        int flags = V2HeaderDescriptor.FLAG_PLAIN | V2HeaderDescriptor.FLAG_OUTPUT
                | V2HeaderDescriptor.FLAG_ENVIRONMENT;
        for (FakeNode n : nodes) {
            assertEquals(1, n.probes.get(), "one probe per node");
            assertEquals(1, n.completed.get(), "the environment once per node");
            assertEquals(common, n.held.values().iterator().next().length, "the variables all ranks share");
            assertTrue(n.fragments.get() >= (common + 1311) / 1312, "in fragments: " + n.fragments.get());
            assertEquals(2, n.execs.size(), n.execs.toString());
            for (String e : n.execs) {
                assertTrue(e.contains(" flags " + flags + " "), e);
                int payload = Integer.parseInt(e.substring(e.lastIndexOf(' ') + 1));
                assertTrue(payload < 200, "only the rank's own variables: " + e);
            }
        }
        for (int r = 1; r <= 4; r++) {
            Map<String, String> launched = nodes.get((r - 1) % 2).launched.get((long) r);
            assertEquals(environments.get(r - 1), launched, "rank " + r + " gets its whole environment");
        }
    }

    @Test
    void shouldSendTheEnvironmentAgainToANodeThatLostItAndThenTheExec() throws Exception {
        try (V2Session session = session()) {
            nodes.get(1).forgetOnce = true;
            assertEquals(List.of(), session.exec(JobRunner.freeUdpPort(), "prog", List.of(), environments(),
                    CEILING));
        }
        assertEquals(1, nodes.get(0).completed.get());
        assertEquals(2, nodes.get(1).completed.get(), "sent again after MPIPROXY_ERR_NO_ENVIRONMENT");
        assertEquals(2, nodes.get(1).launched.size());
        assertEquals(environments().get(1), nodes.get(1).launched.get(2L));
    }

    @Test
    void shouldKeepTheSingleDatagramPathForAnEnvironmentThatFits() throws Exception {
        List<Map<String, String>> small = new ArrayList<>();
        for (int r = 1; r <= 4; r++) {
            small.add(Map.of("R", String.valueOf(r), "OMP_NUM_THREADS", "4"));
        }
        try (V2Session session = session()) {
            assertEquals(List.of(), session.exec(JobRunner.freeUdpPort(), "prog", List.of(), small, CEILING));
        }
        for (FakeNode n : nodes) {
            assertEquals(0, n.probes.get() + n.fragments.get(), "no ENVIRONMENT, no extra round trip");
            for (String e : n.execs) {
                assertTrue(e.contains(" flags " + (V2HeaderDescriptor.FLAG_PLAIN | V2HeaderDescriptor.FLAG_OUTPUT)
                        + " "), e);
            }
        }
        assertEquals(small.get(2), nodes.get(0).launched.get(3L));
    }
}
