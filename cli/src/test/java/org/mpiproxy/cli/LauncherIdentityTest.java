package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;

/**
 * Whom the launcher acts as (docs/protocol-v2.md 4.1, 4.2): the cluster key when it can read one,
 * else a credential from a fake local proxy's socket; {@code --user} credentials made with the
 * cluster key.
 */
class LauncherIdentityTest {

    private static final long JOB = 0x1122334455667788L;

    @TempDir
    Path dir;
    private Path keyFile;
    private ClusterKeys cluster;
    private Path socket;
    private ServerSocketChannel server;
    private Thread thread;
    /** The request lines the fake proxy got. */
    private final BlockingQueue<String> requests = new LinkedBlockingQueue<>();

    @BeforeEach
    void keys() throws Exception {
        keyFile = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(keyFile);
        cluster = V2Control.keys(keyFile.toString());
        socket = dir.resolve("proxy.sock");
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
            thread.join(5000);
        }
    }

    /** A local proxy answering each request line with {@code answer} of it, one connection after another. */
    private void serve(Function<String, String> answer) throws Exception {
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket));
        thread = new Thread(() -> {
            try {
                while (true) {
                    try (SocketChannel c = server.accept()) {
                        String line = new BufferedReader(new InputStreamReader(Channels.newInputStream(c),
                                StandardCharsets.UTF_8)).readLine();
                        requests.add(line);
                        OutputStream o = Channels.newOutputStream(c);
                        o.write((answer.apply(line) + "\n").getBytes(StandardCharsets.UTF_8));
                        o.flush();
                    }
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        }, "fake-local-proxy");
        thread.setDaemon(true);
        thread.start();
    }

    /** The proxy's answer: a credential of uid/gid 1000 for the job, made with the cluster key, and its job key. */
    private String ok(long jobId) {
        JobCredential c = new JobCredential(1, 1000, 1000, jobId, System.currentTimeMillis(),
                System.currentTimeMillis() + 3_600_000, NodeIds.of("node1"), 7);
        HexFormat hex = HexFormat.of();
        return "OK " + hex.toHexDigits(jobId) + " " + hex.formatHex(c.encode(cluster)) + " "
                + hex.formatHex(c.jobKey(cluster));
    }

    private Map<String, String> socketEnv() {
        return Map.of(LauncherIdentity.SOCKET_ENV, socket.toString());
    }

    @Test
    void shouldUseTheClusterKeyWhenOneCanBeRead() {
        LauncherIdentity identity = LauncherIdentity.forNewJob(keyFile, socketEnv(), null, null);

        assertEquals(keyFile.toAbsolutePath().toString(), identity.keySpec());
        assertNull(identity.credential());
        assertEquals(1, identity.keys().sendKeyId());
        assertTrue(requests.isEmpty(), "the socket is not asked");
    }

    @Test
    void shouldTakeACredentialFromTheLocalProxyWhenNoKeyFileIsReadable() throws Exception {
        serve(line -> line.equals("CREDENTIAL") ? ok(JOB) : "ERR not understood");

        LauncherIdentity identity = LauncherIdentity.forNewJob(null, socketEnv(), null,
                List.of(dir.resolve("no-such.key")), null);

        assertEquals("CREDENTIAL", requests.poll(5, TimeUnit.SECONDS));
        assertEquals(JOB, identity.jobId(), "the job's id is the one the proxy gave");
        assertNull(identity.keySpec());
        assertEquals(JobCredential.JOB_KEY_ID, identity.keys().sendKeyId(), "it signs with the job key");
        JobCredential c = JobCredential.decode(cluster, identity.credential().bytes());
        assertArrayEquals(c.jobKey(cluster), identity.keys().key(JobCredential.JOB_KEY_ID));
        assertEquals(JOB, identity.credential().jobId());
    }

    @Test
    void shouldAskForTheCredentialOfAJobGivenByItsId() throws Exception {
        serve(line -> line.startsWith("CREDENTIAL ") ? ok(HexFormat.fromHexDigitsToLong(line.substring(11)))
                : "ERR not understood");

        LauncherIdentity identity = LauncherIdentity.fromSocket(LauncherIdentity.socket(socketEnv()), 0xabcL);

        assertEquals("CREDENTIAL 0000000000000abc", requests.poll(5, TimeUnit.SECONDS));
        assertEquals(0xabcL, identity.jobId());
        assertEquals(0xabcL, identity.credential().jobId());
    }

    @Test
    void shouldAskAboutAJobWithItsCredentialFromTheLocalProxyWithoutAClusterKey() throws Exception {
        Assumptions.assumeTrue(LauncherIdentity.keySpec(null, Map.of()) == null, "a default key file is readable here");
        serve(line -> ok(HexFormat.fromHexDigitsToLong(line.substring("CREDENTIAL ".length()))));
        try (JobKeyNode node = new JobKeyNode(cluster)) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int exit = MpiproxyCommand.execute(new String[] {"status", "--job", "1122334455667788", "--hosts",
                "127.0.0.1", "--port", Integer.toString(node.port())}, socketEnv(),
                    new java.io.PrintStream(out, true, StandardCharsets.UTF_8),
                    new java.io.PrintStream(out, true, StandardCharsets.UTF_8));

            assertEquals(0, exit, out.toString(StandardCharsets.UTF_8));
            assertEquals("CREDENTIAL 1122334455667788", requests.poll(5, TimeUnit.SECONDS));
            assertEquals(List.of("CREDENTIAL", "STATUS"), node.taken(), node.log.toString());
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("job 1122334455667788 is not known on this node"),
                    out.toString(StandardCharsets.UTF_8));
        }
    }

    @Test
    void shouldSayInOneLineWhereItLookedWhenThereIsNeitherKeyNorSocket() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LauncherIdentity.fromSocket(socket, 0));

        assertFalse(e.getMessage().contains("\n"), e.getMessage());
        assertTrue(e.getMessage().startsWith("no cluster key and no credential: no readable key file (--key-file, $"
                + "MPIPROXY_KEY_FILE, ../etc/mpiproxy.key, ~/.mpiproxy/key), and the local proxy's socket " + socket
                + " gave no credential ("), e.getMessage());
    }

    @Test
    void shouldExitAsForASetupErrorWithOneLineWhenTheLauncherHasNeitherKeyNorCredential() {
        Assumptions.assumeTrue(LauncherIdentity.keySpec(null, Map.of()) == null, "a default key file is readable here");
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();

        int exit = MpiproxyCommand.execute(new String[] {"run", "--hosts", "127.0.0.1", "/bin/true"}, socketEnv(),
                new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                new java.io.PrintStream(err, true, StandardCharsets.UTF_8));

        String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(2, exit, text);
        assertTrue(text.startsWith("mpiproxy: no cluster key and no credential: "), text);
        assertTrue(text.contains(socket.toString()), text);
        assertEquals(1, text.lines().count(), text);
    }

    @Test
    void shouldRefuseUserOverV1() {
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();

        int exit = MpiproxyCommand.execute(new String[] {"run", "--protocol", "v1", "--user", "1000:1000", "--hosts",
            "127.0.0.1", "/bin/true"}, Map.of(), new java.io.PrintStream(new java.io.ByteArrayOutputStream()),
                new java.io.PrintStream(err, true, StandardCharsets.UTF_8));

        assertEquals(2, exit);
        assertEquals("mpiproxy: --user applies to --protocol v2 only; v1 has no credentials\n",
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldSayWhatTheLocalProxyAnsweredWhenItRefuses() throws Exception {
        serve(line -> "ERR the proxy has no usable cluster key");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LauncherIdentity.fromSocket(socket, 0));

        assertTrue(e.getMessage().contains("gave no credential (it answered: the proxy has no usable cluster key)"),
                e.getMessage());
    }

    @Test
    void shouldMakeACredentialForTheUserThatDecodesUnderTheClusterKey() {
        long before = System.currentTimeMillis();
        LauncherIdentity identity = LauncherIdentity.forNewJob(keyFile, Map.of(), "1000:100", null);

        JobCredential c = JobCredential.decode(cluster, identity.credential().bytes());
        assertEquals(1000, c.uid());
        assertEquals(100, c.gid());
        assertEquals(identity.jobId(), c.jobId());
        assertEquals(1, c.keyId());
        assertTrue(c.issuedMillis() >= before && c.issuedMillis() <= System.currentTimeMillis(), c.toString());
        assertEquals(3_600_000, c.expiresMillis() - c.issuedMillis());
        assertEquals(NodeIds.of(LauncherIdentity.hostName()), c.issuerNodeId());
        assertArrayEquals(c.jobKey(cluster), identity.keys().key(JobCredential.JOB_KEY_ID),
                "the job is signed with the credential's job key");
        assertEquals(JobCredential.JOB_KEY_ID, identity.keys().sendKeyId());
    }

    @Test
    void shouldRefuseAUserThatIsNotUidColonGidOrWithoutTheClusterKey() throws Exception {
        for (String bad : List.of("1000", "a:b", ":5", "5:", "-1:0", "4294967296:0")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> LauncherIdentity.parseUser(bad), bad);
            assertEquals("--user " + bad + ": expected UID:GID, two numbers (e.g. 1000:1000)", e.getMessage());
        }
        Files.delete(keyFile);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LauncherIdentity.forNewJob(null, Map.of(V2Control.KEY_FILE_ENV, ""), "1000:1000",
                        List.of(keyFile), null));
        assertTrue(e.getMessage().startsWith("--user 1000:1000 makes the job's credential with the cluster key"),
                e.getMessage());
    }
}
