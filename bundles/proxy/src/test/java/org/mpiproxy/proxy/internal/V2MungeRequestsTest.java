package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
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
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.process.Munge;

/**
 * MUNGE vouches for a user on a machine without a proxy (docs/protocol-v2.md 4.3), with the node's
 * real {@code munged}: the answer names this process's uid and gid and verifies; a replayed
 * request, one whose MUNGE line names another node or nonce, and a garbage credential get no answer,
 * and the receive thread goes on serving. The credentials it issues are valid for
 * {@code identity.credential.seconds}, as those of the local socket.
 */
class V2MungeRequestsTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40002);
    private static final long NODE = NodeIds.of(V2Datagrams.NODE);
    private static final long JOB = 0x5151L;

    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    /** Released when the decoding thread hands an outcome to the receive thread. */
    private final Semaphore wakeups = new Semaphore(0);
    private V2Dispatcher proxy;
    private long nonce = 1000;

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
    void start() {
        proxy = new V2Dispatcher(new FakeChannelManager(),
                new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE, Duration.ofSeconds(30), 1024, 1448,
                        Duration.ofSeconds(300)),
                coreId -> new FakeLauncher(), wakeups::release, Runnable::run, timer, System::currentTimeMillis);
    }

    @AfterEach
    void tearDown() {
        proxy.close();
        timer.shutdownNow();
    }

    private static String line(long node, long jobId, long nonce) {
        return String.format("mpiproxy-credential-request-1 %016x %016x %016x", node, jobId, nonce);
    }

    /** A MUNGE request as 4.3 says: its header, a MUNGE credential of {@code line}, a zero MAC field. */
    private static ByteBuffer request(long node, long jobId, long nonce, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH + payload.length
                + V2HeaderDescriptor.MAC_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        new V2HeaderFlyweight().wrap(b, 0).reset(V2HeaderDescriptor.OP_CREDENTIAL, V2HeaderDescriptor.FLAG_MUNGE)
                .keyId(JobCredential.JOB_KEY_ID).nodeId(node).jobId(jobId).timestamp(System.currentTimeMillis())
                .nonce(nonce).payloadLength(payload.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, payload);
        return b;
    }

    private ByteBuffer request(long jobId, String line) {
        return request(NODE, jobId, nonce, Munge.encode(line.getBytes(StandardCharsets.US_ASCII), -1)
                .getBytes(StandardCharsets.US_ASCII));
    }

    private ByteBuffer request(long jobId) {
        nonce++;
        return request(jobId, line(NODE, jobId, nonce));
    }

    /** Delivers a request and waits until its decoding is done; @return what the proxy sent */
    private List<RecordingTransport.Sent> deliver(ByteBuffer datagram) throws InterruptedException {
        proxy.onDatagram(datagram.duplicate(), HOST, transport);
        assertTrue(wakeups.tryAcquire(20, TimeUnit.SECONDS), "the decoding thread handed its outcome back");
        proxy.doWork(transport);
        return transport.take();
    }

    /** @return the job credential the one reply holds, checked: MUNGE flag, this uid and gid, the job key's MAC */
    private JobCredential answer(List<RecordingTransport.Sent> sent) {
        assertEquals(1, sent.size(), "replies");
        assertEquals(HOST, sent.get(0).target);
        ByteBuffer b = sent.get(0).bytes;
        V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(b, 0);
        assertEquals(V2HeaderDescriptor.OP_CREDENTIAL, h.operation());
        assertEquals(V2HeaderDescriptor.FLAG_REPLY | V2HeaderDescriptor.FLAG_MUNGE, h.flags());
        assertEquals(JobCredential.JOB_KEY_ID, h.keyId());
        byte[] text = new byte[h.payloadLength()];
        b.get(h.payloadOffset(), text);
        Munge.Decoded inner = Munge.decode(new String(text, StandardCharsets.US_ASCII));
        assertEquals(JobCredential.LENGTH + 32, inner.payload().length);
        JobCredential c = JobCredential.decode(V2Datagrams.KEYS, Arrays.copyOf(inner.payload(), JobCredential.LENGTH));
        UnixSystem me = new UnixSystem();
        assertEquals(me.getUid(), c.uid(), "the uid MUNGE names");
        assertEquals(me.getGid(), c.gid(), "the gid MUNGE names");
        assertEquals(h.jobId(), c.jobId());
        assertEquals(NODE, c.issuerNodeId());
        byte[] jobKey = Arrays.copyOfRange(inner.payload(), JobCredential.LENGTH, inner.payload().length);
        assertArrayEquals(c.jobKey(V2Datagrams.KEYS), jobKey);
        V2Authenticator check = new V2Authenticator(JobCredential.hostKeys(jobKey), NODE, 30_000, 1);
        assertEquals(V2Authenticator.OK, check.verifyReply(b, 0, b.limit(), System.currentTimeMillis()),
                "signed with the job key");
        return c;
    }

    @Test
    void shouldIssueACredentialOfTheUserMungeNamesForANewJobAndAGivenOne() throws Exception {
        JobCredential fresh = answer(deliver(request(0)));
        JobCredential given = answer(deliver(request(JOB)));

        assertNotEquals(0, fresh.jobId(), "a new random job id");
        assertEquals(JOB, given.jobId());
        assertEquals(2, proxy.counter(V2Counter.MUNGE_ANSWERED));
        assertEquals(0, proxy.counter(V2Counter.MUNGE_REFUSED));
    }

    @Test
    void shouldNotAnswerAReplayedRequest() throws Exception {
        ByteBuffer once = request(JOB);
        answer(deliver(once));

        assertEquals(List.of(), deliver(once), "munged decodes a credential once only");
        assertEquals(1, proxy.counter(V2Counter.MUNGE_REFUSED));
    }

    @Test
    void shouldNotAnswerALineNamingAnotherNodeOrNonce() throws Exception {
        nonce++;
        assertEquals(List.of(), deliver(request(JOB, line(NodeIds.of("node-b"), JOB, nonce))), "another node");
        nonce++;
        assertEquals(List.of(), deliver(request(JOB, line(NODE, JOB, nonce + 1))), "another nonce");
        nonce++;
        assertEquals(List.of(), deliver(request(JOB, line(NODE, JOB + 1, nonce))), "another job");
        assertEquals(3, proxy.counter(V2Counter.MUNGE_REFUSED));
    }

    @Test
    void shouldNotAnswerAHeaderForAnotherNode() {
        nonce++;
        byte[] credential = Munge.encode(line(NODE, JOB, nonce).getBytes(StandardCharsets.US_ASCII), -1)
                .getBytes(StandardCharsets.US_ASCII);
        proxy.onDatagram(request(NodeIds.of("node-b"), JOB, nonce, credential), HOST, transport);
        proxy.doWork(transport);

        assertEquals(List.of(), transport.take());
        assertEquals(1, proxy.counter(V2Counter.MUNGE_REFUSED), "refused before munged is asked");
    }

    @Test
    void shouldNotAnswerGarbageAndGoOnServing() throws Exception {
        assertEquals(List.of(), deliver(request(NODE, JOB, ++nonce,
                "MUNGE:not-a-credential:".getBytes(StandardCharsets.US_ASCII))));
        assertEquals(1, proxy.counter(V2Counter.MUNGE_REFUSED));

        answer(deliver(request(JOB)));
        assertEquals(1, proxy.counter(V2Counter.MUNGE_ANSWERED), "the next request is answered");
    }

    /** @return v2 settings as the proxy's configuration makes them, with {@code identity.credential.seconds} */
    private static V2Settings configured(Path keyFile, int credentialSeconds) {
        ProxyConfig config = TestConfigs.of(ProxyConfig.class, Map.of("node.name", V2Datagrams.NODE,
                "identity.credential.seconds", credentialSeconds));
        return V2Config.settings(config, Map.of(1, keyFile));
    }

    @Test
    void shouldIssueCredentialsValidForTheConfiguredLifetimeAndFollowAChange(@TempDir Path dir) throws Exception {
        Path keyFile = dir.resolve("mpiproxy.key");
        Files.writeString(keyFile, HexFormat.of().formatHex(V2Datagrams.KEY) + "\n");
        Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));

        proxy.reconfigure(configured(keyFile, 120));
        JobCredential first = answer(deliver(request(JOB)));
        assertEquals(120_000, first.expiresMillis() - first.issuedMillis(), "identity.credential.seconds=120");

        proxy.reconfigure(configured(keyFile, 60));
        JobCredential second = answer(deliver(request(0)));
        assertEquals(60_000, second.expiresMillis() - second.issuedMillis(), "the changed lifetime, at once");
    }
}
