package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiErrors;

/**
 * The PMI server over real loopback TCP: the handshake and who may make it, relays, fences, bad
 * input. The server's time is the test's: it moves only when a test moves it.
 */
class PmiServerTest {

    private static final long JOB = 0xabcL;
    /** Longest wait for an event: only catches a hang. */
    private static final long TIMEOUT_SECONDS = 60;

    private final List<String> relayed = new CopyOnWriteArrayList<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    /** The server's clock when each problem was said. */
    private final List<Long> problemTimes = new CopyOnWriteArrayList<>();
    /** Takes an element each time a line is relayed or a problem said. */
    private final BlockingQueue<String> arrivals = new LinkedBlockingQueue<>();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private volatile long clientUid = 1000;
    private PmiServer server;

    private PmiServer server() throws Exception {
        server = new PmiServer((job, rank, line) -> {
            relayed.add(rank + " " + line);
            arrivals.add(line);
            return true;
        }, problem -> {
            problemTimes.add(now.get());
            problems.add(problem);
            arrivals.add(problem);
        },
                new PmiServer.Identity() {
                    @Override
                    public long uidOfClient(int clientPort, int serverPort) {
                        return clientUid;
                    }

                    @Override
                    public long uidOfProcess(long pid) {
                        return pid == 4242 ? 1000 : -1;
                    }
                }, now::get);
        return server;
    }

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
    }

    private static final class Client implements AutoCloseable {
        final Socket socket;
        final BufferedReader in;
        final OutputStream out;

        Client(int port) throws Exception {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = socket.getOutputStream();
        }

        void send(String line) throws Exception {
            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        String line() throws Exception {
            return in.readLine();
        }

        @Override
        public void close() throws Exception {
            socket.close();
        }
    }

    private void await(java.util.function.BooleanSupplier what, String description) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (!what.getAsBoolean()) {
            assertTrue(arrivals.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS) != null,
                    description + "; problems: " + problems);
        }
    }

    /**
     * Moves the server's time on, a second at a time, until it has said a problem more than it had.
     *
     * @param had how many problems it had said before
     * @return the problem
     */
    private String advanceUntilAProblem(int had) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (problems.size() == had) {
            assertTrue(System.nanoTime() < deadline, "a problem; relayed: " + relayed);
            now.addAndGet(TimeUnit.SECONDS.toNanos(1));
            arrivals.poll(20, TimeUnit.MILLISECONDS);
        }
        assertEquals(had + 1, problems.size(), problems.toString());
        return problems.get(had);
    }

    @Test
    void shouldServeARankThroughTheHandshakeAPutAndAFencedBarrier() throws Exception {
        Map<String, String> env = server().register(JOB, 1, 2);
        assertEquals("127.0.0.1:" + server.port(), env.get("PMI_PORT"));
        server.started(JOB, 1, 4242);
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
            assertEquals(List.of("cmd=initack rc=0", "cmd=set size=2", "cmd=set rank=1", "cmd=set debug=0"),
                    List.of(c.line(), c.line(), c.line(), c.line()));
            c.send("cmd=init pmi_version=1 pmi_subversion=1");
            assertEquals("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0", c.line());
            c.send("cmd=put kvsname=kvs_0000000000000abc key=card-1 value=tcp#1");
            assertEquals("cmd=put_result rc=0", c.line());
            c.send("cmd=barrier_in");
            await(() -> relayed.size() == 2, "put and barrier_in relayed");
            assertEquals(List.of("1 cmd=put key=card-1 value=tcp#1", "1 cmd=barrier_in"), relayed);

            byte[] pairs = PmiSpace.encode(Map.of("card-0", "tcp#0"), 1000).get(0);
            assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, 1, 0, 1, ByteBuffer.wrap(pairs), 0, pairs.length));
            assertEquals("cmd=barrier_out rc=0", c.line());
            c.send("cmd=get kvsname=kvs_0000000000000abc key=card-0");
            assertEquals("cmd=get_result rc=0 value=tcp#0", c.line());
            assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, 1, 0, 1, ByteBuffer.wrap(pairs), 0, pairs.length),
                    "a repeated fragment is acknowledged again");
            c.send("cmd=finalize");
            assertEquals("cmd=finalize_ack rc=0", c.line());
        }
        assertEquals(List.of(), problems);
    }

    @Test
    void shouldCloseConnectionsThatCannotBeTheRank() throws Exception {
        Map<String, String> env = server().register(JOB, 1, 2);
        server.started(JOB, 1, 4242);
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + (Integer.parseInt(env.get("PMI_ID")) ^ 1));
            assertEquals(null, c.line());
        }
        try (Client c = new Client(server.port())) {
            c.send("cmd=init pmi_version=1 pmi_subversion=1");
            assertEquals(null, c.line());
        }
        clientUid = 1001;
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
            assertEquals(null, c.line(), "another local user cannot pose as the rank");
        }
        clientUid = 1000;
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
            assertEquals(null, c.line(), "an id is good for one connection only, even one refused");
        }
        await(() -> problems.size() == 4, "four problems");
        assertTrue(problems.get(0).endsWith(" was not given out or is used already; connection closed"),
                problems.toString());
        assertTrue(problems.get(1).contains("first line is cmd=init, not cmd=initack pmiid=N"), problems.toString());
        assertTrue(problems.get(2).contains("comes from uid 1001, the rank runs as uid 1000"), problems.toString());
    }

    @Test
    void shouldCloseAConnectionWhoseLineNeverEndsAndSayWhoClosedEarly() throws Exception {
        Map<String, String> env = server().register(JOB, 1, 2);
        server.started(JOB, 1, 4242);
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
            for (int i = 0; i < 4; i++) {
                c.line();
            }
            c.out.write("x".repeat(PmiLine.MAX_LINE).getBytes(StandardCharsets.UTF_8));
            c.out.flush();
            assertEquals(null, c.line());
        }
        await(() -> !problems.isEmpty(), "a problem");
        assertEquals("PMI: rank 1 of job 0000000000000abc sent a line longer than 4095 bytes; connection closed",
                problems.get(0));

        Map<String, String> second = server.register(JOB, 2, 3);
        server.started(JOB, 2, 4242);
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + second.get("PMI_ID"));
            c.line();
        }
        await(() -> problems.size() == 2, "a second problem");
        assertEquals("PMI: rank 2 of job 0000000000000abc closed its connection before finalize", problems.get(1));
        assertEquals(MpiErrors.ERR_ARG, server.onFence(JOB, 0, 0, 1, ByteBuffer.allocate(0), 0, 0));
        assertEquals(MpiErrors.ERR_COMM, server.onFence(0x999L, 1, 0, 1, ByteBuffer.allocate(0), 0, 0));
    }

    @Test
    void shouldCloseAConnectionThatNamesNoIdWithinTenSeconds() throws Exception {
        server();
        long connected = now.get();
        try (Client c = new Client(server.port())) {
            assertEquals("PMI: no cmd=initack within 10 s; connection closed", advanceUntilAProblem(0));
            assertEquals(null, c.line());
        }
        assertTrue(problemTimes.get(0) - connected > TimeUnit.SECONDS.toNanos(10), "not before the 10 s");
    }

    @Test
    void shouldLetAConnectionWaitForItsRanksPidAndRefuseItWhenTheRankNeverStarts() throws Exception {
        Map<String, String> env = server().register(JOB, 1, 2);
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
            // the rank's pid may come after its connection; the server's time stands still meanwhile
            server.started(JOB, 1, 4242);
            assertEquals("cmd=initack rc=0", c.line());
        }
        await(() -> problems.size() == 1, "the first rank's close");
        assertEquals("PMI: rank 1 of job 0000000000000abc closed its connection before finalize", problems.get(0));

        Map<String, String> second = server.register(JOB, 2, 2);
        long sent = now.get();
        try (Client c = new Client(server.port())) {
            c.send("cmd=initack pmiid=" + second.get("PMI_ID"));
            assertEquals("PMI: rank 2 of job 0000000000000abc did not start; connection closed",
                    advanceUntilAProblem(1));
            assertEquals(null, c.line());
        }
        assertTrue(problemTimes.get(1) - sent > TimeUnit.SECONDS.toNanos(5), "not before the 5 s");
    }
}
