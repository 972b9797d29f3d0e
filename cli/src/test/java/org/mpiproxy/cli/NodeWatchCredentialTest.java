package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Selector;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A launcher that signs with a job key probes a silent node with STATUS of its own job: a job key
 * cannot sign for job 0 (docs/protocol-v2.md 4.1), whose probe a node would refuse as without
 * credential, so a live node would look lost. Under a cluster key the probe stays STATUS of job 0.
 */
class NodeWatchCredentialTest {

    private static final long JOB = 0x1122334455667788L;

    @Test
    void shouldProbeASilentNodeWithItsOwnJobUnderAJobKey() throws Exception {
        ClusterKeys cluster = ClusterKeys.of(Map.of(1, key()), 1);
        JobCredential c = new JobCredential(1, 1000, 1000, JOB, System.currentTimeMillis(),
                System.currentTimeMillis() + 60_000, NodeIds.of("n1"), 7);
        V2Credential credential = new V2Credential(JOB, c.encode(cluster), c.jobKey(cluster));
        assertEquals(JOB, probedJob(new V2Control.Signer(JobCredential.hostKeys(c.jobKey(cluster)), credential)));
    }

    @Test
    void shouldProbeASilentNodeWithJobZeroUnderAClusterKey() throws Exception {
        assertEquals(0, probedJob(new V2Control.Signer(ClusterKeys.of(Map.of(1, key()), 1))));
    }

    /** @return the job id of the probe a node silent for more than a second gets */
    private static long probedJob(V2Control.Signer signer) throws Exception {
        try (DatagramChannel node = DatagramChannel.open(); Selector selector = Selector.open()) {
            node.bind(new InetSocketAddress("127.0.0.1", 0));
            InetSocketAddress address = (InetSocketAddress) node.getLocalAddress();
            AtomicLong clock = new AtomicLong();
            try (NodeWatch watch = new NodeWatch(Map.of(address, List.of(1)), NodeWatch.Times.DEFAULT, clock::get,
                    signer, selector)) {
                watch.start();
                clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_100));
                watch.check(a -> true);
                ByteBuffer probe = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN);
                node.configureBlocking(true);
                node.socket().setSoTimeout(60_000);
                assertTrue(node.receive(probe) != null);
                V2HeaderFlyweight header = new V2HeaderFlyweight().wrap(probe, 0);
                assertEquals(V2HeaderDescriptor.OP_STATUS, header.operation());
                return header.jobId();
            }
        }
    }

    private static byte[] key() {
        byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) (i * 7 + 3);
        }
        return key;
    }
}
