package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The thin front (src/main/c/mpiproxy-front.c), built with gcc, against a fake proxy on a real
 * Unix socket: it hands the job over and relays output, exit status and signals, and runs the
 * standalone launcher (here: echo) when there is no proxy, when the proxy refuses, and when it
 * does not know RUN.
 */
class FrontTest {

    private static final long CEILING_SECONDS = 60;

    @TempDir
    Path dir;
    private Path front;
    private Path socket;

    /** What the front sent, up to GO. */
    private record Job(List<String> args, Map<String, String> env, String cwd, long pid) {
    }

    @BeforeEach
    void build() throws Exception {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        front = dir.resolve("mpiproxy-front");
        Process gcc;
        try {
            gcc = new ProcessBuilder("gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", "-o", front.toString(),
                    Path.of("src/main/c/mpiproxy-front.c").toAbsolutePath().toString()).inheritIO().start();
        } catch (IOException e) {
            assumeTrue(false, "no gcc here: " + e.getMessage());
            return;
        }
        assertTrue(gcc.waitFor(CEILING_SECONDS, TimeUnit.SECONDS), "gcc ends");
        assertEquals(0, gcc.exitValue(), "the front compiles without warnings");
        socket = dir.resolve("proxy.sock");
    }

    private Process start(String... args) throws IOException {
        return start(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")), args);
    }

    /** @param in the front's standard input: rank 0's, which only the standalone launcher passes on */
    private Process start(ProcessBuilder.Redirect in, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(front.toString(), "/bin/echo", "cold", "--"));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).directory(dir.toFile()).redirectInput(in);
        b.environment().put("MPIPROXY_SOCKET", socket.toString());
        b.environment().put("FRONT_TEST", "yes");
        b.environment().remove("MPIPROXY_COLD");
        return b.start();
    }

    private static String all(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }

    private static byte[] frame(char type, byte[] body) {
        return ByteBuffer.allocate(5 + body.length).order(ByteOrder.LITTLE_ENDIAN).put((byte) type)
                .putInt(body.length).put(body).array();
    }

    private static byte[] frame(char type, String text) {
        return frame(type, text.getBytes(StandardCharsets.UTF_8));
    }

    /** @return the next frame as its type followed by its body */
    private static byte[] read(DataInputStream in) throws IOException {
        int type = in.readUnsignedByte();
        byte[] header = in.readNBytes(4);
        int length = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] f = new byte[length + 1];
        f[0] = (byte) type;
        in.readFully(f, 1, length);
        return f;
    }

    /** Accepts one front and reads its job up to GO. */
    private static Job accept(ServerSocketChannel server, SocketChannel[] connection) throws IOException {
        SocketChannel c = server.accept();
        connection[0] = c;
        DataInputStream in = new DataInputStream(Channels.newInputStream(c));
        byte[] line = in.readNBytes(6);
        assertEquals("RUN 1\n", new String(line, StandardCharsets.US_ASCII));
        List<String> args = new ArrayList<>();
        Map<String, String> env = new HashMap<>();
        String cwd = null;
        long pid = 0;
        while (true) {
            byte[] f = read(in);
            String text = new String(f, 1, f.length - 1, StandardCharsets.UTF_8);
            switch (f[0]) {
                case 'a' -> args.add(text);
                case 'e' -> env.put(text.substring(0, text.indexOf('=')), text.substring(text.indexOf('=') + 1));
                case 'c' -> cwd = text;
                case 'p' -> pid = Long.parseLong(text);
                case 'g' -> {
                    return new Job(args, env, cwd, pid);
                }
                default -> throw new IOException("unexpected frame " + (char) f[0]);
            }
        }
    }

    private ServerSocketChannel listen() throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        return server;
    }

    @Test
    void shouldHandTheJobOverAndRelayOutputAndExitStatus() throws Exception {
        try (ServerSocketChannel server = listen()) {
            SocketChannel[] c = new SocketChannel[1];
            CompletableFuture<Job> job = CompletableFuture.supplyAsync(() -> {
                try {
                    Job j = accept(server, c);
                    c[0].write(ByteBuffer.wrap(frame('o', "[0] hi\n")));
                    c[0].write(ByteBuffer.wrap(frame('r', "mpiproxy: a line\n")));
                    c[0].write(ByteBuffer.wrap(frame('x', new byte[] {7})));
                    c[0].close();
                    return j;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Process p = start("run", "-n", "2", "a b");

            assertEquals("[0] hi\n", all(p.getInputStream()));
            assertEquals("mpiproxy: a line\n", all(p.getErrorStream()));
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
            assertEquals(7, p.exitValue());
            Job j = job.get(CEILING_SECONDS, TimeUnit.SECONDS);
            assertEquals(List.of("run", "-n", "2", "a b"), j.args());
            assertEquals("yes", j.env().get("FRONT_TEST"));
            assertEquals(dir.toRealPath().toString(), j.cwd());
            assertEquals(p.pid(), j.pid());
        }
    }

    @Test
    void shouldRelayTheSignalsItCatches() throws Exception {
        try (ServerSocketChannel server = listen()) {
            SocketChannel[] c = new SocketChannel[1];
            CompletableFuture<Job> went = new CompletableFuture<>();
            CompletableFuture<byte[]> signal = CompletableFuture.supplyAsync(() -> {
                try {
                    went.complete(accept(server, c));
                    byte[] f = read(new DataInputStream(Channels.newInputStream(c[0])));
                    c[0].write(ByteBuffer.wrap(frame('x', new byte[] {(byte) 143})));
                    return f;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Process p = start("run", "sleepy");
            went.get(CEILING_SECONDS, TimeUnit.SECONDS);

            Process kill = new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).inheritIO().start();
            assertTrue(kill.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));

            assertEquals("s 15", (char) signal.get(CEILING_SECONDS, TimeUnit.SECONDS)[0] + " "
                    + signal.get()[1]);
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
            assertEquals(143, p.exitValue());
        }
    }

    @Test
    void shouldRunColdWhenTheProxyRefuses() throws Exception {
        try (ServerSocketChannel server = listen()) {
            CompletableFuture.runAsync(() -> {
                try {
                    SocketChannel[] c = new SocketChannel[1];
                    accept(server, c);
                    c[0].write(ByteBuffer.wrap(frame('f', "RUN serves the proxy's own user only; running cold")));
                    c[0].close();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Process p = start("run", "x");

            assertEquals("cold run x\n", all(p.getInputStream()));
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        }
    }

    @Test
    void shouldRunColdWhenTheProxyDoesNotKnowRun() throws Exception {
        try (ServerSocketChannel server = listen()) {
            CompletableFuture.runAsync(() -> {
                try (SocketChannel c = server.accept()) {
                    ByteBuffer line = ByteBuffer.allocate(256);
                    c.read(line);
                    // an older proxy: one line back, whatever came after the request line unread
                    c.write(ByteBuffer.wrap("ERR unknown request\n".getBytes(StandardCharsets.US_ASCII)));
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Process p = start("run", "x");

            assertEquals("cold run x\n", all(p.getInputStream()));
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        }
    }

    @Test
    void shouldRunColdWithoutASocketAndForOtherCommands() throws Exception {
        Process run = start("run", "x");
        assertEquals("cold run x\n", all(run.getInputStream()));
        assertTrue(run.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));

        Files.writeString(socket, "not a socket");
        Process status = start("status", "--hosts", "h");
        assertEquals("cold status --hosts h\n", all(status.getInputStream()));
        assertTrue(status.waitFor(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals(0, status.exitValue());
    }

    @Test
    void shouldRunColdWhenDataIsPipedInForRank0() throws Exception {
        // a proxy that would take the job: the front must not even connect
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            Process run = start(ProcessBuilder.Redirect.PIPE, "run", "x");
            try {
                run.getOutputStream().close();
                assertTrue(run.waitFor(CEILING_SECONDS, TimeUnit.SECONDS), "the front waits for a proxy instead");
                assertEquals("cold run x\n", all(run.getInputStream()));
                assertEquals(0, run.exitValue());
            } finally {
                run.destroyForcibly();
            }
        }
    }
}
