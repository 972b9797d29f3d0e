package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import com.sun.security.auth.module.UnixSystem;
import org.mpiproxy.testing.MungeDaemon;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * Without a readable cluster key and without a local proxy, MUNGE vouches for the launcher's user
 * to the job's first node (docs/protocol-v2.md 4.3): a fake node of this test, which decodes the
 * request with the real {@code unmunge} and answers as a proxy does. Its first request goes
 * unanswered, so the launcher sends again, with a fresh MUNGE credential.
 */
class LauncherIdentityMungeTest {

    private static final String NODE = "node-m";
    private static final long JOB = 0x7a7aL;

    @TempDir
    Path dir;
    private ClusterKeys cluster;
    private DatagramChannel node;
    private Thread thread;
    /** The MUNGE lines of the requests the fake node got, in order. */
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    /** The MUNGE credentials of those requests. */
    private final BlockingQueue<String> credentials = new LinkedBlockingQueue<>();

    @BeforeAll
    static void munged() {
        String why = MungeDaemon.start();
        Assumptions.assumeTrue(why == null, () -> "skipped: no munged (" + why + ")");
    }

    @AfterAll
    static void stopMunged() {
        MungeDaemon.stop();
    }

    @BeforeEach
    void fakeNode() throws Exception {
        Path keyFile = dir.resolve("cluster.key");
        ClusterKeys.generateIfMissing(keyFile);
        cluster = V2Control.keys(keyFile.toString());
        node = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        thread = new Thread(this::serve, "fake-node");
        thread.setDaemon(true);
        thread.start();
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
        thread.join(5000);
    }

    /** Answers every request but the first, as a proxy does (4.3), with a credential of this process's user. */
    private void serve() {
        ByteBuffer in = ByteBuffer.allocate(65_507).order(ByteOrder.LITTLE_ENDIAN);
        try {
            for (int n = 0; ; n++) {
                in.clear();
                InetSocketAddress from = (InetSocketAddress) node.receive(in);
                in.flip();
                V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                byte[] text = new byte[h.payloadLength()];
                in.get(h.payloadOffset(), text);
                credentials.add(new String(text, StandardCharsets.US_ASCII));
                lines.add(new String(MungeCredential.decode(text), StandardCharsets.US_ASCII));
                if (n > 0 && h.flags() == V2HeaderDescriptor.FLAG_MUNGE && h.keyId() == 0) {
                    node.send(answer(h.nodeId(), h.jobId()), from);
                }
            }
        } catch (IOException e) {
            // closed by the test
        }
    }

    private ByteBuffer answer(long nodeId, long jobId) throws IOException {
        UnixSystem me = new UnixSystem();
        long now = System.currentTimeMillis();
        JobCredential c = new JobCredential(1, me.getUid(), me.getGid(), jobId == 0 ? JOB : jobId, now,
                now + 3_600_000, nodeId, 9);
        byte[] inner = new byte[JobCredential.LENGTH + 32];
        System.arraycopy(c.encode(cluster), 0, inner, 0, JobCredential.LENGTH);
        System.arraycopy(c.jobKey(cluster), 0, inner, JobCredential.LENGTH, 32);
        byte[] munged = MungeCredential.encode(inner, me.getUid());
        ByteBuffer b = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH + munged.length
                + V2HeaderDescriptor.MAC_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(b, 0).reset(V2HeaderDescriptor.OP_CREDENTIAL,
                V2HeaderDescriptor.FLAG_REPLY | V2HeaderDescriptor.FLAG_MUNGE).keyId(0).nodeId(nodeId)
                .jobId(c.jobId()).timestamp(now).nonce(11).payloadLength(munged.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, munged);
        new V2Authenticator(JobCredential.hostKeys(c.jobKey(cluster)), nodeId, 30_000, 1).sign(b, 0);
        return b;
    }

    private Placement first() throws IOException {
        return new Placement("127.0.0.1", ((InetSocketAddress) node.getLocalAddress()).getPort(), 0, NODE);
    }

    /** No cluster key to read, no local proxy to ask. */
    private Map<String, String> env() {
        return Map.of(LauncherIdentity.SOCKET_ENV, dir.resolve("no-proxy.sock").toString());
    }

    @Test
    void shouldTakeACredentialThroughMungeFromTheFirstNodeWithoutKeyOrSocket() throws Exception {
        LauncherIdentity identity = LauncherIdentity.forNewJob(null, env(), null, List.of(dir.resolve("no.key")),
                first());

        assertEquals(JOB, identity.jobId(), "the job id the node gave");
        assertNull(identity.keySpec());
        JobCredential c = JobCredential.decode(cluster, identity.credential().bytes());
        assertEquals(new UnixSystem().getUid(), c.uid());
        assertArrayEquals(c.jobKey(cluster), identity.keys().key(JobCredential.JOB_KEY_ID), "signs with the job key");
        String firstLine = lines.poll(5, TimeUnit.SECONDS);
        String secondLine = lines.poll(5, TimeUnit.SECONDS);
        // the node id of the node's address, as every other request of the launcher names it, not of its name
        String prefix = String.format("mpiproxy-credential-request-1 %016x %016x ", NodeIds.of("127.0.0.1"), 0L);
        assertTrue(firstLine.startsWith(prefix) && secondLine.startsWith(prefix), firstLine + " / " + secondLine);
        assertNotEquals(firstLine, secondLine, "a new nonce when sent again");
        assertNotEquals(credentials.poll(), credentials.poll(), "a fresh MUNGE credential when sent again");
    }

    @Test
    void shouldTakeTheCredentialOfAGivenJobForKillAndStatus() throws Exception {
        // what forJob does without a key file (kill, status)
        LauncherIdentity identity = LauncherIdentity.fromSocket(LauncherIdentity.socket(env()), 0x1234L, first());

        assertEquals(0x1234L, identity.jobId());
        assertEquals(0x1234L, JobCredential.decode(cluster, identity.credential().bytes()).jobId());
        assertTrue(lines.poll(5, TimeUnit.SECONDS).contains(String.format(" %016x ", 0x1234L)));
    }
}
