package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/** Staging against a fake node that loses every third datagram it receives, or refuses. */
class V2StageTest {

    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, new byte[32]), 1);
    /** How long staging may take before the test counts it as hung; it returns once the node has it or refused. */
    private static final Duration CEILING = Duration.ofSeconds(120);

    private DatagramChannel node;
    private Thread thread;
    private volatile byte[] assembled;
    private final AtomicInteger probes = new AtomicInteger();

    /** Keeps the fragments it gets; answers like a proxy (docs/protocol-v2.md 5.8), dropping every third datagram. */
    private InetSocketAddress startNode(boolean refuse) throws Exception {
        node = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        V2Authenticator auth = new V2Authenticator(KEYS, NodeIds.of("127.0.0.1"), 30_000, 4096);
        thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer out = ByteBuffer.allocate(256).order(V2HeaderDescriptor.BYTE_ORDER);
            BitSet have = new BitSet();
            byte[] data = null;
            int received = 0;
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) node.receive(in.clear());
                    if (++received % 3 == 0 || auth.verify(in, 0, in.position(), System.currentTimeMillis())
                            != V2Authenticator.OK) {
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    boolean complete = false;
                    if (h.ack() == 0) {
                        probes.incrementAndGet();
                    } else {
                        if (data == null) {
                            data = new byte[(int) h.argument()];
                        }
                        int from0 = (int) (h.sequence() * h.tag());
                        in.get(h.payloadOffset() + 32, data, from0, h.payloadLength() - 32);
                        have.set((int) h.sequence());
                        complete = have.cardinality() == h.ack();
                        if (complete) {
                            assembled = data;
                        }
                    }
                    new V2HeaderFlyweight().wrap(out.clear(), 0).reset(V2HeaderDescriptor.OP_STAGE,
                            V2HeaderDescriptor.FLAG_REPLY).keyId(1).nodeId(auth.nodeId()).jobId(h.jobId())
                            .result(refuse ? MpiErrors.ERR_IO : MpiErrors.SUCCESS).argument(complete ? 1 : 0)
                            .sequence(h.sequence()).ack(h.ack()).tag(h.tag())
                            .timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
                    int n = auth.sign(out, 0);
                    node.send(out.limit(n).position(0), from);
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        });
        thread.setDaemon(true);
        thread.start();
        return (InetSocketAddress) node.getLocalAddress();
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
            thread.join(5000);
        }
    }

    @Test
    void shouldBringEveryByteThroughLossAndTellWhenTheNodeHasIt() throws Exception {
        InetSocketAddress address = startNode(false);
        byte[] content = new byte[300_000];
        new Random(3).nextBytes(content);

        Map<InetSocketAddress, String> problems = V2Stage.stage(List.of(address), 0x77L, KEYS, content, CEILING);

        assertEquals(Map.of(), problems);
        assertArrayEquals(content, assembled);
        assertTrue(probes.get() >= 1);
        assertTrue(V2Stage.name(content).matches("sha256-[0-9a-f]{64}"), V2Stage.name(content));
    }

    @Test
    void shouldNameTheNodeThatRefuses() throws Exception {
        InetSocketAddress address = startNode(true);

        Map<InetSocketAddress, String> problems = V2Stage.stage(List.of(address), 0x77L, KEYS, new byte[10], CEILING);

        assertEquals(Map.of(address, "staging refused with MPI_ERR_IO (see the node's log)"), problems);
    }
}
