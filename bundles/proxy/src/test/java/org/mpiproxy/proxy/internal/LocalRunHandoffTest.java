package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LocalRuns;

/**
 * Runs through the local socket over a real Unix socket, with a fake launcher: what the front
 * sends reaches the run, the run's output and exit status come back as frames, the front's
 * signals reach the run, and a user other than the proxy's is refused.
 */
class LocalRunHandoffTest {

    private static final Duration CEILING = Duration.ofSeconds(60);
    private static final long PROXY_UID = 4711;

    @TempDir
    Path temp;

    /** What a run was given. */
    private record Call(List<String> args, Map<String, String> env, Path cwd, LocalRuns.Peer peer) {
    }

    /** The body of the fake launcher's run. */
    @FunctionalInterface
    private interface Body {
        int run(OutputStream out, OutputStream err, LocalRuns.Signals signals) throws Exception;
    }

    private final BlockingQueue<Call> calls = new ArrayBlockingQueue<>(4);
    private final List<SocketChannel> clients = new ArrayList<>();
    private volatile Body body = (out, err, signals) -> 0;
    private long peerUid = PROXY_UID;
    private LocalSocketServer server;
    private LocalRunHandoff handoff;

    private final LocalRuns runs = (args, env, cwd, peer, out, err, signals) -> {
        calls.add(new Call(args, env, cwd, peer));
        try {
            return body.run(out, err, signals);
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    };

    @BeforeEach
    void open() throws IOException {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        handoff = new LocalRunHandoff(() -> runs, PROXY_UID);
        server = LocalSocketServer.open(temp.resolve("run/proxy.sock"), (line, uid, gid) -> "ERR unknown request",
                () -> 0, channel -> new long[] {peerUid, 100});
        server.takeRuns(handoff);
    }

    @AfterEach
    void close() throws IOException {
        for (SocketChannel c : clients) {
            c.close();
        }
        if (server != null) {
            server.close();
            handoff.close();
        }
    }

    private SocketChannel connect() throws IOException {
        SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
        clients.add(c);
        c.connect(UnixDomainSocketAddress.of(server.path()));
        return c;
    }

    private static void send(SocketChannel c, byte type, String text) throws IOException {
        RunFrames.write(c, RunFrames.encode(type, text));
    }

    /** Sends {@code RUN 1} and a job: arguments, environment, working directory, pid and GO. */
    private SocketChannel start(String... args) throws IOException {
        SocketChannel c = connect();
        c.write(ByteBuffer.wrap("RUN 1\n".getBytes(StandardCharsets.US_ASCII)));
        for (String a : args) {
            send(c, RunFrames.ARG, a);
        }
        send(c, RunFrames.ENV, "FOO=bar=baz");
        send(c, RunFrames.ENV, "EMPTY=");
        send(c, RunFrames.CWD, temp.toString());
        send(c, RunFrames.PID, "4242");
        send(c, RunFrames.GO, "");
        return c;
    }

    /** @return every frame up to the end of the stream */
    private static List<RunFrames.Frame> frames(SocketChannel c) {
        return assertTimeoutPreemptively(CEILING, () -> {
            List<RunFrames.Frame> all = new ArrayList<>();
            RunFrames.Frame f;
            while ((f = RunFrames.read(ByteBuffer.allocate(0), c)) != null) {
                all.add(f);
            }
            return all;
        });
    }

    private static String stream(List<RunFrames.Frame> frames, byte type) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        frames.stream().filter(f -> f.type() == type).forEach(f -> all.writeBytes(f.body()));
        return all.toString(StandardCharsets.UTF_8);
    }

    @Test
    void shouldRunTheFrontsJobAndSendItsOutputAndExitStatus() throws Exception {
        body = (out, err, signals) -> {
            out.write("[0] hello\n".getBytes(StandardCharsets.UTF_8));
            err.write("mpiproxy: a line\n".getBytes(StandardCharsets.UTF_8));
            out.write("[1] world\n".getBytes(StandardCharsets.UTF_8));
            return 3;
        };

        List<RunFrames.Frame> frames = frames(start("run", "-n", "2", "hostname"));

        Call call = calls.poll(CEILING.toSeconds(), TimeUnit.SECONDS);
        assertEquals(List.of("run", "-n", "2", "hostname"), call.args());
        assertEquals(Map.of("FOO", "bar=baz", "EMPTY", ""), call.env());
        assertEquals(temp, call.cwd());
        assertEquals(new LocalRuns.Peer(PROXY_UID, 100, 4242), call.peer());
        assertEquals("[0] hello\n[1] world\n", stream(frames, RunFrames.OUT));
        assertEquals("mpiproxy: a line\n", stream(frames, RunFrames.ERR));
        RunFrames.Frame last = frames.get(frames.size() - 1);
        assertEquals(RunFrames.EXIT, last.type());
        assertEquals(3, last.body()[0]);
        assertEquals(0, handoff.active());
    }

    @Test
    void shouldDeliverTheFrontsSignalsToTheRun() throws Exception {
        BlockingQueue<Integer> got = new ArrayBlockingQueue<>(4);
        CountDownLatch listening = new CountDownLatch(1);
        CountDownLatch twice = new CountDownLatch(2);
        body = (out, err, signals) -> {
            signals.listen(n -> {
                got.add(n);
                twice.countDown();
            });
            listening.countDown();
            // the run ends on the second signal, as the launcher on a second Ctrl-C
            return twice.await(CEILING.toSeconds(), TimeUnit.SECONDS) ? 130 : 0;
        };
        SocketChannel c = start("run", "sleepy");
        assertTrue(listening.await(CEILING.toSeconds(), TimeUnit.SECONDS), "the run listens");

        RunFrames.write(c, RunFrames.encode(RunFrames.SIGNAL, new byte[] {2}, 0, 1));
        RunFrames.write(c, RunFrames.encode(RunFrames.SIGNAL, new byte[] {15}, 0, 1));

        List<RunFrames.Frame> frames = frames(c);
        assertEquals(List.of(2, 15), List.copyOf(got));
        assertEquals(130, frames.get(frames.size() - 1).body()[0] & 0xff);
    }

    @Test
    void shouldStopTheRunAsOnSigtermWhenTheFrontGoes() throws Exception {
        CompletableFuture<Integer> signal = new CompletableFuture<>();
        body = (out, err, signals) -> {
            signals.listen(signal::complete);
            return signal.get(CEILING.toSeconds(), TimeUnit.SECONDS);
        };
        SocketChannel c = start("run", "left");
        assertTrue(calls.poll(CEILING.toSeconds(), TimeUnit.SECONDS) != null);

        c.close();

        assertEquals(15, signal.get(CEILING.toSeconds(), TimeUnit.SECONDS));
    }

    @Test
    void shouldRefuseAnotherUserSoThatHerFrontRunsCold() throws Exception {
        peerUid = 1000;
        SocketChannel c = connect();
        c.write(ByteBuffer.wrap("RUN 1\n".getBytes(StandardCharsets.US_ASCII)));

        List<RunFrames.Frame> frames = frames(c);

        assertEquals(1, frames.size());
        assertEquals(RunFrames.FAIL, frames.get(0).type());
        assertEquals(LocalRunHandoff.OWN_USER_ONLY, frames.get(0).text());
        assertTrue(calls.isEmpty(), "nothing ran");
    }

    @Test
    void shouldFailBeforeAnythingRanWhenTheServiceRefuses() throws Exception {
        body = (out, err, signals) -> {
            throw new IllegalArgumentException("the proxy runs 'mpiproxy run' only");
        };

        List<RunFrames.Frame> frames = frames(start("status"));

        assertEquals(1, frames.size());
        assertEquals("the proxy runs 'mpiproxy run' only; running cold", frames.get(0).text());
    }

    @Test
    void shouldRefuseGoWithoutAWorkingDirectory() throws Exception {
        SocketChannel c = connect();
        c.write(ByteBuffer.wrap("RUN 1\n".getBytes(StandardCharsets.US_ASCII)));
        send(c, RunFrames.ARG, "run");
        send(c, RunFrames.PID, "4242");
        send(c, RunFrames.GO, "");

        List<RunFrames.Frame> frames = frames(c);

        assertEquals("GO before ARG, CWD and PID", frames.get(0).text());
        assertTrue(calls.isEmpty(), "nothing ran");
    }

    @Test
    void shouldAnswerOtherRequestsAsBefore() throws Exception {
        SocketChannel c = connect();
        c.write(ByteBuffer.wrap("CREDENTIAL\n".getBytes(StandardCharsets.US_ASCII)));

        String reply = assertTimeoutPreemptively(CEILING, () -> {
            ByteBuffer b = ByteBuffer.allocate(256);
            while (c.read(b) >= 0) {
                // to the end
            }
            return new String(b.array(), 0, b.position(), StandardCharsets.UTF_8);
        });

        assertEquals("ERR unknown request\n", reply);
    }
}
