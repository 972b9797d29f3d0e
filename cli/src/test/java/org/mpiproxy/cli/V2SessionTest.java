package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.ExecCommand;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/** The launcher's side of a job against a small fake proxy that checks every request as a proxy does. */
class V2SessionTest {

    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, new byte[32]), 1);
    private static final long JOB = 0x5e55L;
    /** How long a wait may take before the test counts it as hung; every wait here ends with its event. */
    private static final Duration CEILING = Duration.ofSeconds(60);

    /** What the fake proxy saw and does. */
    private final List<String> execs = new CopyOnWriteArrayList<>();
    private final List<String> acks = new CopyOnWriteArrayList<>();
    /** Every acknowledgement the fake proxy took, as {@link #acks} lists them, for waiting on. */
    private final BlockingQueue<String> ackQueue = new LinkedBlockingQueue<>();
    private final Map<Long, long[]> rankStates = new ConcurrentHashMap<>();
    private volatile int outputPort;
    private volatile InetSocketAddress owner;
    private DatagramChannel proxy;
    private V2Authenticator auth;
    private Thread thread;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    /** Answers EXEC of rank 2 with MPI_ERR_IO, every other EXEC with success; STATUS from {@link #rankStates}. */
    private InetSocketAddress startProxy() throws Exception {
        proxy = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        auth = new V2Authenticator(KEYS, NodeIds.of("127.0.0.1"), 30_000, 1024);
        thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer reply = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) proxy.receive(in.clear());
                    if (auth.verify(in, 0, in.position(), System.currentTimeMillis()) != V2Authenticator.OK) {
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    V2HeaderFlyweight r = header(reply, h.operation(), h.rank());
                    if (h.operation() == V2HeaderDescriptor.OP_EXEC) {
                        ExecCommand c = ExecCommand.parsePlain(in, h.payloadOffset(), h.payloadLength());
                        execs.add("rank " + h.rank() + " flags " + h.flags() + " " + c.program() + " " + c.args() + " "
                                + c.environment());
                        owner = from;
                        outputPort = h.tag();
                        if (h.rank() == 2) {
                            byte[] why = "no program 'prog' in /programs".getBytes(StandardCharsets.UTF_8);
                            r.result(MpiErrors.ERR_IO).payloadLength(why.length);
                            reply.put(V2HeaderDescriptor.HEADER_LENGTH, why);
                        }
                    } else if (h.operation() == V2HeaderDescriptor.OP_OUTPUT) {
                        String ack = "rank " + h.rank() + " stream " + h.tag() + " ack " + h.ack() + " from "
                                + (from.getPort() == outputPort ? "output port" : "elsewhere");
                        acks.add(ack);
                        ackQueue.add(ack);
                        continue;
                    } else if (h.operation() == V2HeaderDescriptor.OP_STATUS) {
                        int n = 0;
                        for (Map.Entry<Long, long[]> e : new java.util.TreeMap<>(rankStates).entrySet()) {
                            V2StatusDescriptor.put(reply, V2HeaderDescriptor.HEADER_LENGTH
                                    + n * V2StatusDescriptor.ENTRY_LENGTH, e.getKey(), (int) e.getValue()[0], 0, 4242,
                                    (int) e.getValue()[1]);
                            n++;
                        }
                        r.argument(n).payloadLength(n * V2StatusDescriptor.ENTRY_LENGTH);
                    } else {
                        continue;
                    }
                    send(reply, from);
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        });
        thread.setDaemon(true);
        thread.start();
        return (InetSocketAddress) proxy.getLocalAddress();
    }

    private V2HeaderFlyweight header(ByteBuffer b, int op, long rank) {
        return new V2HeaderFlyweight().wrap(b.clear(), 0).reset(op, V2HeaderDescriptor.FLAG_REPLY).keyId(1)
                .nodeId(auth.nodeId()).jobId(JOB).rank(rank).timestamp(System.currentTimeMillis())
                .nonce(System.nanoTime());
    }

    private synchronized void send(ByteBuffer b, InetSocketAddress to) throws java.io.IOException {
        int n = auth.sign(b, 0);
        proxy.send(b.limit(n).position(0), to);
    }

    /** The proxy's OUTPUT fragment of rank 1's stdout line, to the port the EXEC named. */
    private void output(long sequence, String text, boolean endOfLine) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        header(b, V2HeaderDescriptor.OP_OUTPUT, 1).flags(V2HeaderDescriptor.FLAG_REPLY
                | (endOfLine ? V2HeaderDescriptor.FLAG_END_OF_MESSAGE : 0)).tag(V2HeaderDescriptor.STREAM_STDOUT)
                .sequence(sequence).payloadLength(bytes.length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, bytes);
        send(b, new InetSocketAddress(owner.getAddress(), outputPort));
    }

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
            thread.join(5000);
        }
    }

    private V2Session session(InetSocketAddress node, int ranks, Runnable onChange) throws Exception {
        List<Placement> placements = new java.util.ArrayList<>();
        for (int r = 1; r <= ranks; r++) {
            placements.add(new Placement("127.0.0.1", node.getPort(), 0, "127.0.0.1"));
        }
        return new V2Session(JOB, KEYS, placements, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), true, onChange);
    }

    @Test
    void shouldStartEveryRankWithAPlainExecFromRankZerosPortAndNameTheRefusedOne() throws Exception {
        InetSocketAddress node = startProxy();
        int hostPort = JobRunner.freeUdpPort();
        try (V2Session session = session(node, 3, () -> { })) {
            List<V2Session.Failure> failures = session.exec(hostPort, "prog", List.of("a b"),
                    List.of(Map.of("R", "1"), Map.of("R", "2"), Map.of("R", "3")), CEILING);

            assertEquals(List.of(new V2Session.Failure(2, "MPI_ERR_IO: no program 'prog' in /programs")), failures);
            assertEquals(hostPort, owner.getPort(), "the EXECs come from rank 0's port: rank 0 owns the job");
            assertEquals(session.outputPort(), outputPort, "the EXECs name the session's output port");
            int flags = V2HeaderDescriptor.FLAG_PLAIN | V2HeaderDescriptor.FLAG_OUTPUT;
            for (int r = 1; r <= 3; r++) {
                assertTrue(execs.contains("rank " + r + " flags " + flags + " prog [a b] {R=" + r + "}"), execs.toString());
            }
            // rank 0's port is free again for rank 0
            try (DatagramChannel rankZero = DatagramChannel.open()) {
                rankZero.bind(new InetSocketAddress(hostPort));
            }
        }
    }

    @Test
    void shouldRefuseAnExecWhoseCommandLineDoesNotFitOneDatagram() throws Exception {
        InetSocketAddress node = startProxy();
        try (V2Session session = session(node, 1, () -> { })) {
            String message = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> session.exec(JobRunner.freeUdpPort(), "prog", List.of("x".repeat(2004)), List.of(Map.of()),
                            Duration.ofSeconds(1))).getMessage();
            assertTrue(message.contains("the command line and environment of rank 1 take 2014 bytes; one EXEC carries"
                    + " at most 1344"), message);
            assertTrue(execs.isEmpty());
        }
    }

    @Test
    void shouldPrintEveryLineOnceInOrderAndAcknowledgeFromTheOutputPort() throws Exception {
        InetSocketAddress node = startProxy();
        try (V2Session session = session(node, 1, () -> { })) {
            assertEquals(List.of(), session.exec(JobRunner.freeUdpPort(), "prog", List.of(), List.of(Map.of()),
                    CEILING));
            session.start();
            output(1, "line", true);     // ahead of a gap: kept until fragment 0 comes
            output(0, "first ", false);
            output(0, "first ", false);  // a duplicate
            output(1, "line", true);     // the proxy's retransmission of the kept one: ignored
            output(2, "second", true);
            awaitAck("rank 1 stream 1 ack 3 from output port");
            assertFalse(acks.stream().anyMatch(a -> a.endsWith("elsewhere")), acks.toString());
        }
        assertEquals("[1] first line\n[1] second\n", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void shouldSeeAFailedRankAndWhenEveryRankEnded() throws Exception {
        InetSocketAddress node = startProxy();
        AtomicInteger changes = new AtomicInteger();
        try (V2Session session = session(node, 2, () -> {
            synchronized (changes) {
                changes.incrementAndGet();
                changes.notifyAll();
            }
        })) {
            assertEquals(1, session.exec(JobRunner.freeUdpPort(), "prog", List.of(), List.of(Map.of(), Map.of()),
                    CEILING).size(), "rank 2 is refused by this fake");
            rankStates.put(1L, new long[] {V2StatusDescriptor.STATE_RUNNING, -1});
            rankStates.put(2L, new long[] {V2StatusDescriptor.STATE_RUNNING, -1});
            session.start();
            awaitListed(session, changes, Map.of(1, new V2Session.RankState(V2StatusDescriptor.STATE_RUNNING, -1),
                    2, new V2Session.RankState(V2StatusDescriptor.STATE_RUNNING, -1)));
            assertEquals(0, session.failedRank());
            assertFalse(session.allEnded());

            rankStates.put(2L, new long[] {V2StatusDescriptor.STATE_EXITED, 0});
            rankStates.put(1L, new long[] {V2StatusDescriptor.STATE_EXITED, 137});
            awaitListed(session, changes, Map.of(1, new V2Session.RankState(V2StatusDescriptor.STATE_EXITED, 137),
                    2, new V2Session.RankState(V2StatusDescriptor.STATE_EXITED, 0)));
            assertEquals(1, session.failedRank(), "killed by signal 9");
            assertTrue(session.allEnded());
            int[] statuses = {0, -1, -1};
            session.fill(statuses);
            assertEquals(List.of(0, -1, -1), List.of(statuses[0], statuses[1], statuses[2]),
                    "exited ranks are still to be terminated: their statuses come from TERMINATE");
        }
    }

    @Test
    void shouldKeepTheRankThatFailedFirstWhenTheStopEndsTheOthers() throws Exception {
        InetSocketAddress node = startProxy();
        AtomicInteger changes = new AtomicInteger();
        try (V2Session session = session(node, 2, () -> {
            synchronized (changes) {
                changes.incrementAndGet();
                changes.notifyAll();
            }
        })) {
            session.exec(JobRunner.freeUdpPort(), "prog", List.of(), List.of(Map.of(), Map.of()), CEILING);
            rankStates.put(1L, new long[] {V2StatusDescriptor.STATE_RUNNING, -1});
            rankStates.put(2L, new long[] {V2StatusDescriptor.STATE_EXITED, 7});
            session.start();
            awaitListed(session, changes, Map.of(1, new V2Session.RankState(V2StatusDescriptor.STATE_RUNNING, -1),
                    2, new V2Session.RankState(V2StatusDescriptor.STATE_EXITED, 7)));
            assertEquals(2, session.failedRank());

            // the launcher stops the job: rank 1 ends with SIGTERM, a status other than 0 too
            rankStates.put(1L, new long[] {V2StatusDescriptor.STATE_EXITED, 143});
            awaitListed(session, changes, Map.of(1, new V2Session.RankState(V2StatusDescriptor.STATE_EXITED, 143),
                    2, new V2Session.RankState(V2StatusDescriptor.STATE_EXITED, 7)));
            assertEquals(2, session.failedRank(), "the job's exit status is the rank that failed, not one it stopped");
        }
    }

    /** Waits until the fake proxy took {@code expected}; the others taken meanwhile stay in {@link #acks}. */
    private void awaitAck(String expected) throws InterruptedException {
        long deadline = System.nanoTime() + CEILING.toNanos();
        for (String ack = null; !expected.equals(ack); ) {
            ack = ackQueue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertNotNull(ack, "no " + expected + " in " + CEILING.toSeconds() + " s: " + acks);
        }
    }

    /**
     * Waits until the session lists the ranks as {@code expected} and its {@code onChange}
     * counted a listing since the call (the session asks every node again and again), looking
     * again each time {@code onChange} signals.
     */
    private static void awaitListed(V2Session session, AtomicInteger changes,
                                    Map<Integer, V2Session.RankState> expected) throws InterruptedException {
        int before = changes.get();
        long deadline = System.nanoTime() + CEILING.toNanos();
        synchronized (changes) {
            while (changes.get() == before || !session.states().equals(expected)) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "not listed as " + expected + " in " + CEILING.toSeconds() + " s: "
                        + session.states() + " after " + (changes.get() - before) + " listings");
                changes.wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
        }
    }
}
