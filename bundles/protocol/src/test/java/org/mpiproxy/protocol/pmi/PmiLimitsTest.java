package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
 * What one job and one uid may hold of a PMI server ({@link PmiLimits}): connections per job and
 * per uid, and the close of an idle connection, over real loopback TCP. The server's time is the
 * test's: it moves only when a test moves it.
 */
class PmiLimitsTest {

    private static final long JOB = 0xabcL;
    private static final long TIMEOUT_SECONDS = 60;
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final List<String> relayed = new CopyOnWriteArrayList<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final List<Long> problemTimes = new CopyOnWriteArrayList<>();
    private final BlockingQueue<String> arrivals = new LinkedBlockingQueue<>();
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    /** The uid of the next connections' sockets. */
    private volatile long clientUid = 1000;
    private PmiServer server;

    /** A server whose ranks run as uid {@code pid / 100}. */
    private PmiServer server(PmiLimits limits) throws Exception {
        server = new PmiServer((job, rank, line) -> {
            relayed.add(rank + " " + line);
            arrivals.add(line);
            return true;
        }, problem -> {
            problemTimes.add(now.get());
            problems.add(problem);
            arrivals.add(problem);
        }, new PmiServer.Identity() {
            @Override
            public long uidOfClient(int clientPort, int serverPort) {
                return clientUid;
            }

            @Override
            public long uidOfProcess(long pid) {
                return pid / 100;
            }
        }, now::get);
        server.limits(() -> limits);
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

    /**
     * Starts rank {@code rank} of the job as uid {@code uid} and connects it.
     *
     * @return its connection, after the handshake's first reply ({@code cmd=initack rc=0}, or
     *         {@code null} when the server closed it)
     */
    private Client connect(long jobId, int rank, long uid, List<String> firstReply) throws Exception {
        Map<String, String> env = server.register(jobId, rank, 16);
        server.started(jobId, rank, uid * 100 + rank);
        clientUid = uid;
        Client c = new Client(server.port());
        c.send("cmd=initack pmiid=" + env.get("PMI_ID"));
        String first = c.line();
        firstReply.add(first);
        if (first != null) {
            for (int i = 0; i < 3; i++) {
                c.line();
            }
        }
        return c;
    }

    /** Moves the server's time on a second at a time until it said one more problem than it had. */
    private String advanceUntilAProblem(int had) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (problems.size() == had) {
            assertTrue(System.nanoTime() < deadline, "a problem; relayed: " + relayed);
            now.addAndGet(SECOND);
            arrivals.poll(20, TimeUnit.MILLISECONDS);
        }
        assertEquals(had + 1, problems.size(), problems.toString());
        return problems.get(had);
    }

    private void awaitRelayed(int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (relayed.size() < count) {
            assertTrue(arrivals.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS) != null,
                    "relayed " + count + "; problems: " + problems);
        }
    }

    @Test
    void shouldServeAJobsConnectionsUpToItsBoundAndCloseTheNextWithTheLimitsLine() throws Exception {
        server(new PmiLimits(2, 100, 0));
        List<String> replies = new CopyOnWriteArrayList<>();
        try (Client one = connect(JOB, 1, 1000, replies); Client two = connect(JOB, 2, 1000, replies);
             Client three = connect(JOB, 3, 1000, replies); Client other = connect(JOB + 1, 1, 1000, replies)) {
            assertEquals(java.util.Arrays.asList("cmd=initack rc=0", "cmd=initack rc=0", null, "cmd=initack rc=0"),
                    replies, "the third of the job is closed, another job's first is served");
            assertEquals(List.of("PMI: rank 3 of job 0000000000000abc refused: job 0000000000000abc has 2 PMI"
                    + " connections on this node, pmi.max.connections.per.job=2; connection closed"), problems);
            one.send("cmd=get_maxes");
            assertTrue(one.line().startsWith("cmd=maxes "), "the job's first ones are served as before");
        }
    }

    @Test
    void shouldCountAUidsConnectionsOverAllItsJobsAndLeaveOtherUidsAlone() throws Exception {
        server(new PmiLimits(100, 2, 0));
        List<String> replies = new CopyOnWriteArrayList<>();
        try (Client a = connect(JOB, 1, 1000, replies); Client b = connect(JOB + 1, 1, 1000, replies);
             Client c = connect(JOB + 2, 1, 1000, replies); Client d = connect(JOB + 3, 1, 1001, replies);
             Client e = connect(JOB + 3, 2, 1001, replies)) {
            assertEquals(java.util.Arrays.asList("cmd=initack rc=0", "cmd=initack rc=0", null, "cmd=initack rc=0",
                    "cmd=initack rc=0"), replies);
            assertEquals(List.of("PMI: rank 1 of job 0000000000000abe refused: uid 1000 has 2 PMI connections on this"
                    + " node, pmi.max.connections.per.uid=2; connection closed"), problems);
        }
    }

    @Test
    void shouldCloseAnIdleConnectionButNotOneWaitingInAFence() throws Exception {
        server(new PmiLimits(100, 100, 30 * SECOND));
        List<String> replies = new CopyOnWriteArrayList<>();
        long since = now.get();
        try (Client waiting = connect(JOB, 2, 1000, replies); Client idle = connect(JOB, 1, 1000, replies);
             Client nameless = new Client(server.port())) {
            waiting.send("cmd=barrier_in");
            awaitRelayed(1);
            assertEquals("PMI: no cmd=initack within 10 s; connection closed", advanceUntilAProblem(0));
            assertNull(nameless.line());
            assertEquals("PMI: rank 1 of job 0000000000000abc was idle for more than pmi.idle.seconds=30;"
                    + " connection closed", advanceUntilAProblem(1));
            assertTrue(problemTimes.get(1) - since > 30 * SECOND, "not before the 30 s");
            assertNull(idle.line());
            // the pass that closed the idle one passed over the one in the fence
            byte[] pairs = PmiSpace.encode(Map.of("k", "v"), 1000).get(0);
            assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, 1, 0, 1, ByteBuffer.wrap(pairs), 0, pairs.length));
            assertEquals("cmd=barrier_out rc=0", waiting.line());
            assertEquals(2, problems.size(), problems.toString());
        }
    }

    @Test
    void shouldNeverCloseAnIdentifiedConnectionForIdlenessByDefault() throws Exception {
        server(PmiLimits.DEFAULT);
        List<String> replies = new CopyOnWriteArrayList<>();
        try (Client rank = connect(JOB, 1, 1000, replies)) {
            try (Client nameless = new Client(server.port())) {
                now.addAndGet(TimeUnit.HOURS.toNanos(5));
                // a connection that never names its rank is closed after 10 s whatever pmi.idle.seconds says
                assertEquals("PMI: no cmd=initack within 10 s; connection closed", advanceUntilAProblem(0));
                assertNull(nameless.line());
            }
            rank.send("cmd=get_maxes");
            assertTrue(rank.line().startsWith("cmd=maxes "), "served after five idle hours");
            assertEquals(1, problems.size(), problems.toString());
        }
    }

    @Test
    void shouldNameTheKeyAndValueOfABadLimit() {
        assertEquals("pmi.max.connections.per.job=0 must be >= 1", assertThrows(IllegalArgumentException.class,
                () -> PmiLimits.of(0, 1, 0)).getMessage());
        assertEquals("pmi.max.connections.per.uid=0 must be >= 1", assertThrows(IllegalArgumentException.class,
                () -> PmiLimits.of(1, 0, 0)).getMessage());
        assertEquals("pmi.idle.seconds=-5 must be >= 0 (0: never)", assertThrows(IllegalArgumentException.class,
                () -> PmiLimits.of(1, 1, -5)).getMessage());
        assertEquals(30 * SECOND, PmiLimits.of(1, 1, 30).idleNanos());
    }
}
