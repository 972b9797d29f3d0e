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
    void shouldCloseAFloodOfNamelessConnectionsAndStillServeTheRank() throws Exception {
        Map<String, String> env = server().register(JOB, 1, 2);
        server.started(JOB, 1, 4242);
        List<Client> flood = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < PmiServer.MAX_UNIDENTIFIED; i++) {
                flood.add(new Client(server.port()));
            }
            try (Client extra = new Client(server.port())) {
                assertEquals(null, extra.line(), "one beyond the limit is closed at once");
            }
            await(() -> !problems.isEmpty(), "the refusal said");
            assertEquals("PMI: " + PmiServer.MAX_UNIDENTIFIED + " connections have not named their rank yet;"
                    + " refused 1 more, the last of uid 1000, which has " + PmiServer.MAX_UNIDENTIFIED
                    + " of them waiting", problems.get(0));
            assertEquals(1, problems.size(), problems.toString());

            // the nameless ones reach the handshake limit and go; the rank gets in
            now.addAndGet(TimeUnit.SECONDS.toNanos(11));
            for (Client c : flood) {
                assertEquals(null, c.line(), "closed after the handshake limit");
            }
            try (Client rank = new Client(server.port())) {
                rank.send("cmd=initack pmiid=" + env.get("PMI_ID"));
                assertEquals("cmd=initack rc=0", rank.line());
            }
        } finally {
            for (Client c : flood) {
                c.close();
            }
        }
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
        assertEquals(MpiErrors.ERR_ARG, server.onFence(JOB, -1, 0, 1, ByteBuffer.allocate(0), 0, 0));
        assertEquals(MpiErrors.ERR_ARG, server.onFence(JOB, 0, 0, 2, ByteBuffer.allocate(0), 0, 0),
                "node attributes come one fragment at a time");
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

    /** A PMI-2 client: the PMI-1 init line, then length-prefixed messages. */
    private static final class Pmi2Client implements AutoCloseable {
        final Socket socket;
        final java.io.DataInputStream in;
        final OutputStream out;

        Pmi2Client(int port) throws Exception {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout((int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            in = new java.io.DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        /** @return the server's answer to the PMI-1 line that asks for PMI-2 */
        String init() throws Exception {
            out.write("cmd=init pmi_version=2 pmi_subversion=0\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0) {
                    return null;
                }
                line.append((char) b);
            }
            return line.toString();
        }

        void send(String body) throws Exception {
            out.write(Pmi2Wire.format(Pmi2Wire.parse(body).command(), flatten(Pmi2Wire.parse(body)))
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        private static String[] flatten(Pmi2Wire m) {
            List<String> all = new java.util.ArrayList<>();
            m.attributes().forEach((k, v) -> {
                all.add(k);
                all.add(v);
            });
            return all.toArray(new String[0]);
        }

        /** @return the next message's body, {@code null} when the server closed the connection */
        String message() throws Exception {
            byte[] field = new byte[Pmi2Wire.LENGTH_FIELD];
            try {
                in.readFully(field);
            } catch (java.io.EOFException e) {
                return null;
            }
            byte[] body = new byte[Pmi2Wire.length(new String(field, StandardCharsets.ISO_8859_1))];
            in.readFully(body);
            return new String(body, StandardCharsets.UTF_8);
        }

        @Override
        public void close() throws Exception {
            socket.close();
        }
    }

    @Test
    void shouldServeAPmi2ClientBesideAPmi1ClientOnTheSameFences() throws Exception {
        Map<String, String> one = server().register(JOB, 1, 3);
        Map<String, String> two = server.register(JOB, 2, 3);
        server.started(JOB, 1, 4242);
        server.started(JOB, 2, 4242);
        try (Client pmi1 = new Client(server.port()); Pmi2Client pmi2 = new Pmi2Client(server.port())) {
            pmi1.send("cmd=initack pmiid=" + one.get("PMI_ID"));
            assertEquals("cmd=initack rc=0", pmi1.line());
            assertEquals("cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0", pmi2.init());
            pmi2.send("cmd=fullinit;srcid=" + two.get("PMI_ID") + ";threaded=FALSE;");
            assertEquals("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=3;appnum=0;"
                    + "debugged=FALSE;pmiverbose=FALSE;", pmi2.message());
            pmi2.send("cmd=kvs-put;key=card 2;value=tcp 2;;x;");
            assertEquals("cmd=kvs-put-response;rc=0;", pmi2.message());
            pmi2.send("cmd=kvs-fence;");
            for (int i = 0; i < 3; i++) {
                pmi1.line();
            }
            pmi1.send("cmd=barrier_in");
            await(() -> relayed.size() == 3, "the put and both fence entries relayed");
            assertEquals(List.of("1 cmd=barrier_in", "2 cmd=barrier_in", "2 cmd=put encoding=url key=card+2"
                    + " value=tcp+2%3Bx"), relayed.stream().sorted().toList());
            assertTrue(relayed.indexOf("2 cmd=barrier_in") > 0, "rank 2's put before its fence: " + relayed);

            byte[] pairs = PmiSpace.encode(Map.of("card 2", "tcp 2;x", "card-0", "tcp#0"), 1000).get(0);
            assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, 1, 0, 1, ByteBuffer.wrap(pairs), 0, pairs.length));
            assertEquals("cmd=barrier_out rc=0", pmi1.line());
            assertEquals("cmd=kvs-fence-response;rc=0;", pmi2.message());
            pmi2.send("cmd=kvs-get;jobid=kvs_0000000000000abc;srcid=0;key=card-0;");
            assertEquals("cmd=kvs-get-response;rc=0;found=TRUE;value=tcp#0;", pmi2.message());
            pmi1.send("cmd=get kvsname=kvs_0000000000000abc key=card-0");
            assertEquals("cmd=get_result rc=0 value=tcp#0", pmi1.line());
            pmi2.send("cmd=finalize;");
            assertEquals("cmd=finalize-response;rc=0;", pmi2.message());
            assertEquals(null, pmi2.message(), "closed after finalize");
        }
        assertEquals(List.of(), problems.stream().filter(p -> !p.contains("rank 1 of job")).toList());
    }

    @Test
    void shouldAnswerABadPmi2MessageOrCloseABrokenConnectionAndLeaveTheOthersBe() throws Exception {
        Map<String, String> one = server().register(JOB, 1, 3);
        Map<String, String> two = server.register(JOB, 2, 3);
        server.started(JOB, 1, 4242);
        server.started(JOB, 2, 4242);
        try (Pmi2Client good = new Pmi2Client(server.port())) {
            good.init();
            good.send("cmd=fullinit;pmiid=" + one.get("PMI_ID") + ";");
            good.message();
            good.out.write("15    cmd=kvs-put;key".getBytes(StandardCharsets.UTF_8));
            good.out.flush();
            assertEquals("cmd=error;rc=-1;errmsg=malformed message: 'key' is not key=value;;;", good.message());
            try (Pmi2Client broken = new Pmi2Client(server.port())) {
                broken.init();
                broken.send("cmd=fullinit;pmiid=" + two.get("PMI_ID") + ";");
                broken.message();
                broken.out.write("abcdefcmd=job-getid;".getBytes(StandardCharsets.UTF_8));
                broken.out.flush();
                assertEquals(null, broken.message());
            }
            try (Pmi2Client stranger = new Pmi2Client(server.port())) {
                stranger.init();
                stranger.send("cmd=fullinit;pmirank=2;");
                assertEquals(null, stranger.message(), "a rank number is no id");
            }
            good.send("cmd=job-getid;");
            assertEquals("cmd=job-getid-response;rc=0;jobid=kvs_0000000000000abc;", good.message());
        }
        await(() -> problems.size() >= 4, "four problems");
        assertEquals("PMI: rank 1 of job 0000000000000abc: malformed message: 'key' is not key=value;",
                problems.get(0));
        assertEquals("PMI: rank 2 of job 0000000000000abc sent length field 'abcdef' is not a decimal number;"
                + " connection closed", problems.get(1));
        assertTrue(problems.get(2).startsWith("PMI: first PMI-2 message is cmd=fullinit without an id"),
                problems.toString());
        assertEquals(4, problems.size(), problems.toString());
    }

    @Test
    void shouldAnswerARankWaitingForANodeAttributeOnceAnotherRankHerePutsIt() throws Exception {
        Map<String, String> one = server().register(JOB, 1, 3);
        Map<String, String> two = server.register(JOB, 2, 3);
        server.started(JOB, 1, 4242);
        server.started(JOB, 2, 4242);
        try (Pmi2Client waiter = new Pmi2Client(server.port()); Pmi2Client putter = new Pmi2Client(server.port())) {
            waiter.init();
            waiter.send("cmd=fullinit;pmiid=" + one.get("PMI_ID") + ";");
            waiter.message();
            putter.init();
            putter.send("cmd=fullinit;pmiid=" + two.get("PMI_ID") + ";");
            putter.message();
            // one write: the server reads the wait right after the put it relays
            String both = Pmi2Wire.format("kvs-put", "key", "k1", "value", "v1")
                    + Pmi2Wire.format("info-getnodeattr", "key", "shm", "wait", "TRUE");
            waiter.out.write(both.getBytes(StandardCharsets.UTF_8));
            waiter.out.flush();
            assertEquals("cmd=kvs-put-response;rc=0;", waiter.message());
            await(() -> relayed.size() == 1, "the waiter's put relayed");
            putter.send("cmd=info-putnodeattr;key=shm;value=segment 7;");
            assertEquals("cmd=info-putnodeattr-response;rc=0;", putter.message());
            assertEquals("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=segment 7;", waiter.message());
            await(() -> relayed.size() == 2, "the node attribute relayed for the job's other servers");
            assertEquals("2 cmd=putnodeattr encoding=url key=shm value=segment+7", relayed.get(1));

            // one put at another server of this machine (the launcher's rank 0) comes as fence 0
            waiter.send("cmd=info-getnodeattr;key=rank0;wait=TRUE;");
            byte[] pairs = PmiSpace.encode(Map.of("rank0", "handle 0"), 1000).get(0);
            assertEquals(MpiErrors.SUCCESS, server.onFence(JOB, 0, 7, 1, ByteBuffer.wrap(pairs), 0, pairs.length));
            assertEquals("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=handle 0;", waiter.message());
        }
    }
}
