package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;

/**
 * The local socket over a real Unix socket: the kernel names the caller, one line each way, the
 * deadline on the test's clock, the limit of connections, and the directory and file it refuses.
 */
class LocalSocketServerTest {

    private static final Duration CEILING = Duration.ofSeconds(60);
    private static final long NOBODY = 65534;

    @TempDir
    Path temp;

    private final AtomicLong clock = new AtomicLong(1_000_000);
    private final ClusterKeys keys = ClusterKeys.of(Map.of(1, HexFormat.of().parseHex(
            "6f1c2ad4e09b3357c8a1f40d9e62b7150a3dc4f87e2619b05c8d3ea7f1406b92")), 1);
    private final CredentialIssuer issuer = new CredentialIssuer(keys, NodeIds.of("node-a"), System::currentTimeMillis,
            new SecureRandom(), 3600);
    private final List<SocketChannel> clients = new ArrayList<>();
    private Path socket;
    private LocalSocketServer server;

    @BeforeEach
    void socketDirectoryOthersCanReach() throws IOException {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        // a client of another user must reach the socket through the test's directory
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        socket = temp.resolve("run/proxy.sock");
    }

    @AfterEach
    void closeAll() throws IOException {
        for (SocketChannel c : clients) {
            c.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private LocalSocketServer open(LocalSocketServer.Handler handler) throws IOException {
        server = LocalSocketServer.open(socket, handler, clock::get);
        return server;
    }

    private SocketChannel connect() throws IOException {
        SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
        clients.add(c);
        c.connect(UnixDomainSocketAddress.of(socket));
        return c;
    }

    /** Sends the bytes and reads the reply until the server closes the connection. */
    private static String exchange(SocketChannel c, byte[] request) {
        return assertTimeoutPreemptively(CEILING, () -> {
            c.write(ByteBuffer.wrap(request));
            return readToEnd(c);
        });
    }

    private static String exchange(SocketChannel c, String request) {
        return exchange(c, request.getBytes(StandardCharsets.UTF_8));
    }

    private static String readToEnd(SocketChannel c) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocate(512);
        while (c.read(buffer.clear()) >= 0) {
            all.write(buffer.array(), 0, buffer.position());
        }
        return all.toString(StandardCharsets.UTF_8);
    }

    private static String readLine(SocketChannel c) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        ByteBuffer one = ByteBuffer.allocate(1);
        while (c.read(one.clear()) > 0) {
            line.write(one.get(0));
            if (one.get(0) == '\n') {
                break;
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    private JobCredential credential(String reply) {
        assertTrue(reply.matches("OK [0-9a-f]{16} [0-9a-f]{176} [0-9a-f]{64}\n"), reply);
        return JobCredential.decode(keys, HexFormat.of().parseHex(reply.split(" ")[2]));
    }

    private static long ownGid() throws IOException {
        return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:gid")).longValue();
    }

    @Test
    void shouldIssueACredentialOfTheCallerTheKernelNames() throws IOException {
        open(issuer::answer);

        JobCredential credential = credential(exchange(connect(), "CREDENTIAL\n"));

        assertEquals(PrivateDirectories.currentUid(), credential.uid());
        assertEquals(ownGid(), credential.gid());
        assertEquals("rw-rw-rw-", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket,
                LinkOption.NOFOLLOW_LINKS)));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())));
        assertEquals(PrivateDirectories.currentUid(), ((Number) Files.getAttribute(socket.getParent(), "unix:uid"))
                .longValue());
        JobCredential again = credential(exchange(connect(), "CREDENTIAL " + credential.jobIdHex() + "\r\n"));
        assertEquals(credential.jobId(), again.jobId());

        server.close();
        assertFalse(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "the socket is removed at close");
    }

    @Test
    void shouldIssueACredentialOfAnotherUserToThatUser() throws Exception {
        assumeTrue(PrivateDirectories.currentUid() == 0, "only root can run a client as another user (uid 65534)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "setpriv is not installed");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 is not installed");
        open(issuer::answer);
        String client = "import socket, sys\n"
                + "s = socket.socket(socket.AF_UNIX)\n"
                + "s.connect(sys.argv[1])\n"
                + "s.sendall(b'CREDENTIAL\\n')\n"
                + "reply = b''\n"
                + "while True:\n"
                + "    b = s.recv(4096)\n"
                + "    if not b:\n"
                + "        break\n"
                + "    reply += b\n"
                + "sys.stdout.write(reply.decode())\n";
        Process p = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                "/usr/bin/python3", "-c", client, socket.toString()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(CEILING.toSeconds(), TimeUnit.SECONDS), "the client did not end");
        String reply = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), reply);

        JobCredential credential = credential(reply);
        assertEquals(NOBODY, credential.uid());
        assertEquals(NOBODY, credential.gid());
    }

    @Test
    void shouldCloseASilentConnectionAtItsDeadlineWhileServingOthers() throws IOException {
        open(issuer::answer);
        long start = clock.get();
        SocketChannel silent = connect();
        Await.until(() -> server.connections() == 1, "the silent connection accepted");

        assertEquals(PrivateDirectories.currentUid(), credential(exchange(connect(), "CREDENTIAL\n")).uid(),
                "a second client is served while the first says nothing");
        assertEquals(1, server.connections());

        clock.set(start + LocalSocketServer.DEADLINE_MILLIS - 1);
        // served once the clock has moved: the deadlines were checked at that time
        credential(exchange(connect(), "CREDENTIAL\n"));
        assertEquals(1, server.connections(), "the silent connection is kept until its deadline");

        clock.set(start + LocalSocketServer.DEADLINE_MILLIS);
        server.wakeup();
        assertEquals("", assertTimeoutPreemptively(CEILING, () -> readToEnd(silent)), "closed without a reply");
        Await.until(() -> server.connections() == 0, "no connection left");
    }

    @Test
    void shouldRefuseConnectionsBeyondTheLimitBusy() throws IOException {
        open(issuer::answer);
        long start = clock.get();
        List<SocketChannel> silent = new ArrayList<>();
        for (int i = 0; i < LocalSocketServer.MAX_CONNECTIONS; i++) {
            silent.add(connect());
        }
        Await.until(() -> server.connections() == LocalSocketServer.MAX_CONNECTIONS, "64 connections accepted");

        // nothing sent: the refusal may come (and the connection close) before a request could be written
        SocketChannel refused = connect();
        assertEquals(LocalSocketServer.BUSY + "\n", assertTimeoutPreemptively(CEILING, () -> readToEnd(refused)));
        assertEquals(LocalSocketServer.MAX_CONNECTIONS, server.connections());

        clock.set(start + LocalSocketServer.DEADLINE_MILLIS);
        server.wakeup();
        for (SocketChannel c : silent) {
            assertEquals("", assertTimeoutPreemptively(CEILING, () -> readToEnd(c)));
        }
        Await.until(() -> server.connections() == 0, "the silent connections closed");
        credential(exchange(connect(), "CREDENTIAL\n"));
    }

    @Test
    void shouldAnswerABadRequestWithOneErrorLine() throws IOException {
        open((line, uid, gid) -> "ERR " + line + "\nsecond line");

        assertEquals("ERR KEY second line\n", exchange(connect(), "KEY\n"), "one line, whatever the handler says");
        SocketChannel tooLong = connect();
        tooLong.write(ByteBuffer.wrap("A".repeat(300).getBytes(StandardCharsets.US_ASCII)));
        // the bytes beyond the limit are never read: the kernel may report a reset after the reply
        assertEquals("ERR the request is longer than 256 bytes\n", assertTimeoutPreemptively(CEILING,
                () -> readLine(tooLong)));
        assertEquals("ERR " + "A".repeat(255) + " second line\n", exchange(connect(), "A".repeat(255) + "\n"));
        assertEquals("ERR the request is not UTF-8\n", exchange(connect(), new byte[] {(byte) 0xff, '\n'}));
        SocketChannel unended = connect();
        unended.write(ByteBuffer.wrap("CREDENTIAL".getBytes(StandardCharsets.US_ASCII)));
        unended.shutdownOutput();
        assertEquals("ERR the request does not end with a newline\n", assertTimeoutPreemptively(CEILING,
                () -> readToEnd(unended)));
    }

    @Test
    void shouldRefuseADirectoryOfAnotherUser() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "only root can give a directory to another user");
        Path directory = Files.createDirectory(temp.resolve("other"));
        Files.setAttribute(directory, "unix:uid", (int) NOBODY);
        socket = directory.resolve("proxy.sock");

        IOException e = assertThrows(IOException.class, () -> open(issuer::answer));

        assertEquals("the directory of the local socket " + socket + " is owned by uid 65534, not by uid 0 that runs"
                + " the proxy; remove it, or give it to uid 0 with mode 755", e.getMessage());
        assertFalse(Files.exists(socket, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void shouldRefuseADirectoryOthersMayWrite() throws IOException {
        Path directory = Files.createDirectory(temp.resolve("open"));
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        socket = directory.resolve("proxy.sock");

        IOException e = assertThrows(IOException.class, () -> open(issuer::answer));

        assertEquals("the directory of the local socket " + socket + " can be written by its group or others"
                + " (rwxrwxrwx); make it 755", e.getMessage());
        assertFalse(Files.exists(socket, LinkOption.NOFOLLOW_LINKS));
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxr-x"));
        assertThrows(IOException.class, () -> open(issuer::answer), "group-writable");
    }

    @Test
    void shouldRefuseADirectoryThatIsASymbolicLink() throws IOException {
        Path real = Files.createDirectory(temp.resolve("real"));
        Path link = Files.createSymbolicLink(temp.resolve("link"), real);
        socket = link.resolve("proxy.sock");

        IOException e = assertThrows(IOException.class, () -> open(issuer::answer));

        assertEquals("the directory of the local socket " + socket + " is a symbolic link; name the directory itself",
                e.getMessage());
        try (var files = Files.list(real)) {
            assertEquals(0, files.count(), "no socket behind the link");
        }
    }

    @Test
    void shouldNeverRemoveAFileThatIsNotASocket() throws IOException {
        Files.createDirectories(socket.getParent());
        Files.writeString(socket, "not a socket");

        IOException e = assertThrows(IOException.class, () -> open(issuer::answer));

        assertEquals("the local socket " + socket + " exists and is not a socket; not removing it", e.getMessage());
        assertEquals("not a socket", Files.readString(socket));
    }

    @Test
    void shouldReplaceAStaleSocketButNotOneAnotherProcessListensOn() throws IOException {
        Files.createDirectories(socket.getParent());
        try (ServerSocketChannel live = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            live.bind(UnixDomainSocketAddress.of(socket));
            IOException e = assertThrows(IOException.class, () -> open(issuer::answer));
            assertEquals("another process listens on the local socket " + socket, e.getMessage());
            assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS));
        }
        // closed, its socket file stays: stale
        assertTrue(Files.exists(socket, LinkOption.NOFOLLOW_LINKS));

        open(issuer::answer);

        credential(exchange(connect(), "CREDENTIAL\n"));
    }

    @Test
    void shouldLeaveASocketThatIsNoLongerItsOwnAtClose() throws IOException {
        open(issuer::answer);
        Files.delete(socket);
        Files.writeString(socket, "another's");

        server.close();

        assertEquals("another's", Files.readString(socket));
    }
}
