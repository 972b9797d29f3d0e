package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.mpiproxy.protocol.V2StatusDescriptor;

/** The launcher's v2 control against a small fake proxy that checks every request as a proxy does. */
class V2ControlTest {

    /** A key that passes the nodes' (and hosts') entropy floor: 32 distinct byte values. */
    private static final byte[] KEY = strongKey();
    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, KEY), 1);

    private static byte[] strongKey() {
        byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) (i * 37 + 11);
        }
        return key;
    }
    private static final long JOB = 0xabcdefL;
    /** How long a call may take before the test counts it as hung; every call here returns on the answers. */
    private static final Duration CEILING = Duration.ofSeconds(60);
    /** How far the launcher's silence clock moves each time the fake proxy takes a TERMINATE. */
    private static final long STEP_NANOS = Duration.ofMillis(40).toNanos();

    private final List<String> seen = new CopyOnWriteArrayList<>();
    private DatagramChannel proxy;
    private volatile boolean lateLine;
    private volatile long outputAck = -1;
    /** When above 0: the first TERMINATE goes unanswered, this many more get the interim reply, then the final one. */
    private volatile int interimReplies;
    /** The launcher's silence clock where a test gives it: {@link #STEP_NANOS} more with every TERMINATE taken. */
    private final AtomicLong silenceClock = new AtomicLong();
    private Thread thread;

    /** Answers EXEC with MPI_ERR_ARG and TERMINATE of job {@link #JOB} from {@code owner} with status 7. */
    private InetSocketAddress startProxy(ClusterKeys keys, int ownerPort) throws Exception {
        proxy = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        V2Authenticator auth = new V2Authenticator(keys, NodeIds.of("127.0.0.1"), 30_000, 1024);
        thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer out = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) proxy.receive(in.clear());
                    int length = in.position();
                    int verified = auth.verify(in, 0, length, System.currentTimeMillis());
                    if (verified != V2Authenticator.OK) {
                        seen.add("refused");
                        // as a proxy does (docs/protocol-v2.md 3.5)
                        int n = V2RefusalDescriptor.put(in, 0, V2RefusalDescriptor.reasonOf(verified), out.clear(), 0);
                        proxy.send(out.limit(n).position(0), from);
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    boolean stopBit = h.operation() == V2HeaderDescriptor.OP_TERMINATE
                            && (h.argument() & V2HeaderDescriptor.TERMINATE_STOP) != 0;
                    seen.add(V2HeaderDescriptor.operationName(h.operation()) + " rank " + h.rank()
                            + (stopBit ? " STOP" : ""));
                    V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(out.clear(), 0)
                            .reset(h.operation(), V2HeaderDescriptor.FLAG_REPLY).keyId(1).nodeId(auth.nodeId())
                            .jobId(h.jobId()).rank(h.rank()).timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
                    if (h.operation() == V2HeaderDescriptor.OP_OUTPUT) {
                        outputAck = h.ack();
                        continue;
                    }
                    long terminates = seen.stream().filter(x -> x.startsWith("TERMINATE")).count();
                    if (h.operation() == V2HeaderDescriptor.OP_TERMINATE) {
                        // before any reply: the launcher reads the clock when the reply arrives
                        silenceClock.addAndGet(STEP_NANOS);
                    }
                    if (h.operation() == V2HeaderDescriptor.OP_TERMINATE && interimReplies > 0
                            && terminates <= 1 + interimReplies) {
                        if (terminates == 1) {
                            continue;
                        }
                        // the interim reply to a repetition, as a proxy sends it while the rank exits
                        r.reset(V2HeaderDescriptor.OP_STATUS, V2HeaderDescriptor.FLAG_REPLY).keyId(1)
                                .nodeId(auth.nodeId()).jobId(h.jobId()).rank(h.rank()).argument(1)
                                .timestamp(System.currentTimeMillis()).nonce(System.nanoTime())
                                .payloadLength(V2StatusDescriptor.ENTRY_LENGTH);
                        V2StatusDescriptor.put(out, V2HeaderDescriptor.HEADER_LENGTH, h.rank(),
                                V2StatusDescriptor.STATE_TERMINATING, 0, 4242, -1);
                    } else if (h.operation() == V2HeaderDescriptor.OP_STATUS) {
                        statusReply(h, r, out);
                    } else if (h.operation() == V2HeaderDescriptor.OP_EXEC) {
                        r.result(MpiErrors.ERR_ARG);
                    } else if (lateLine && outputAck < 5) {
                        // the rank's last line first, as a proxy does: TERMINATE waits for its acknowledgement
                        r.reset(V2HeaderDescriptor.OP_OUTPUT, V2HeaderDescriptor.FLAG_REPLY
                                | V2HeaderDescriptor.FLAG_END_OF_MESSAGE).keyId(1).nodeId(auth.nodeId())
                                .jobId(h.jobId()).rank(h.rank()).tag(V2HeaderDescriptor.STREAM_STDERR).sequence(4)
                                .timestamp(System.currentTimeMillis()).nonce(System.nanoTime()).payloadLength(9);
                        out.put(V2HeaderDescriptor.HEADER_LENGTH, "late line".getBytes(StandardCharsets.UTF_8));
                    } else if (h.jobId() != JOB || from.getPort() != ownerPort) {
                        r.result(MpiErrors.ERR_COMM);
                    } else {
                        r.argument(7);
                    }
                    int n = auth.sign(out, 0);
                    proxy.send(out.limit(n).position(0), from);
                }
            } catch (java.io.IOException e) {
                // closed by the test
            }
        });
        thread.setDaemon(true);
        thread.start();
        return (InetSocketAddress) proxy.getLocalAddress();
    }

    /** Job {@link #JOB} has ranks 1, 2 and 5 here, two entries a page; other jobs are unknown. */
    private static void statusReply(V2HeaderFlyweight request, V2HeaderFlyweight reply, ByteBuffer out) {
        reply.sequence(request.sequence());
        if (request.jobId() != JOB) {
            reply.result(MpiErrors.ERR_COMM);
            return;
        }
        long[][] ranks = {{1, V2StatusDescriptor.STATE_RUNNING, 0, 4242, -1}, {2, V2StatusDescriptor.STATE_FINISHED,
            3, 4243, 137}, {5, V2StatusDescriptor.STATE_EXITED, 1, 4244, 0}};
        int n = 0;
        long next = 0;
        for (long[] r : ranks) {
            if (r[0] < request.sequence()) {
                continue;
            }
            if (n == 2) {
                next = r[0];
                break;
            }
            V2StatusDescriptor.put(out, V2HeaderDescriptor.HEADER_LENGTH + n * V2StatusDescriptor.ENTRY_LENGTH, r[0],
                    (int) r[1], (int) r[2], r[3], (int) r[4]);
            n++;
        }
        reply.argument(n).ack(next).payloadLength(n * V2StatusDescriptor.ENTRY_LENGTH);
    }

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
            thread.join(5000);
        }
    }

    @Test
    void shouldProbeWithStatusOfJobZeroAndAcceptOnlySignedAnswers() throws Exception {
        InetSocketAddress address = startProxy(KEYS, 0);
        assertEquals(Prober.Answer.ANSWERED, V2Control.probe(List.of(address), KEYS, CEILING).get(address));
        // a repetition may have gone out before the answer came: the same request again
        assertEquals(List.of("STATUS rank 0"), seen.stream().distinct().toList(),
                "a probe is no EXEC: nothing to refuse or log on the proxy");
        ClusterKeys other = ClusterKeys.of(Map.of(1, new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}), 1);
        long start = System.nanoTime();

        Prober.Answer refused = V2Control.probe(List.of(address), other, CEILING).get(address);

        assertFalse(refused.answered());
        assertTrue(refused.problem().startsWith("authentication failed: the proxy could not verify a request signed"
                + " with key id 1"), refused.problem());
        assertTrue(System.nanoTime() - start < CEILING.toNanos(), "the refusal ends the wait, not the wait's end");
        assertTrue(seen.contains("refused"), seen.toString());
    }

    @Test
    void shouldTellAtOnceThatNothingListensOnAProxysPort() throws Exception {
        InetSocketAddress gone;
        try (DatagramChannel c = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            gone = (InetSocketAddress) c.getLocalAddress();
        }
        long start = System.nanoTime();

        Prober.Answer a = V2Control.probe(List.of(gone), KEYS, CEILING).get(gone);

        assertFalse(a.answered());
        assertEquals("no proxy answers at 127.0.0.1:" + gone.getPort() + ": nothing listens on that UDP port",
                a.problem());
        assertTrue(System.nanoTime() - start < CEILING.toNanos(), "the ICMP error ends the wait, not the wait's end");
    }

    @Test
    void shouldTerminateByJobIdFromTheOwnersPort() throws Exception {
        int ownerPort = JobRunner.freeUdpPort();
        InetSocketAddress address = startProxy(KEYS, ownerPort);
        List<Placement> ranks = List.of(new Placement("127.0.0.1", address.getPort(), 0, "n1"),
                new Placement("127.0.0.1", address.getPort(), 0, "n1"));
        int[] statuses = {0, V1Control.NO_REPLY, 0};

        V2Control.terminate(ownerPort, JOB, KEYS, ranks, statuses, CEILING, () -> false);

        assertEquals(7, statuses[1]);
        assertEquals(0, statuses[2], "a known status is not asked for");
        assertEquals(List.of("TERMINATE rank 1"), seen.stream().distinct().toList(), "repeated or not, rank 1 only");

        int[] another = {0, V1Control.NO_REPLY, V1Control.NO_REPLY};
        V2Control.terminate(JobRunner.freeUdpPort(), JOB, KEYS, ranks, another, CEILING, () -> false);
        assertEquals(V1Control.NOT_RUNNING, another[1], "another port is not the job's owner");
    }

    @Test
    void shouldAskForAStopNowWithTheStopBit() throws Exception {
        int ownerPort = JobRunner.freeUdpPort();
        InetSocketAddress address = startProxy(KEYS, ownerPort);
        int[] statuses = {0, V1Control.NO_REPLY};

        V2Control.terminate(ownerPort, JOB, KEYS, List.of(new Placement("127.0.0.1", address.getPort(), 0, "n1")),
                statuses, true, CEILING, V2Control.DEAD_AFTER, () -> false, (r, e, l) -> { });

        assertEquals(7, statuses[1]);
        assertEquals(List.of("TERMINATE rank 1 STOP"), seen.stream().distinct().toList());
    }

    /**
     * The silence is measured on a clock the fake proxy moves: {@link #STEP_NANOS} per TERMINATE
     * it takes, ten steps a silence. The first TERMINATE goes unanswered, the next fifteen get
     * the interim reply: the node is silent for one step at a time while the final reply comes
     * only after more than a silence in all.
     */
    @Test
    void shouldKeepWaitingForTerminateWhileInterimRepliesShowTheNodeAliveBeyondTheSilence() throws Exception {
        int ownerPort = JobRunner.freeUdpPort();
        interimReplies = 15;
        Duration silence = Duration.ofNanos(10 * STEP_NANOS);
        InetSocketAddress address = startProxy(KEYS, ownerPort);
        int[] statuses = {0, V1Control.NO_REPLY};

        V2Control.terminate(ownerPort, JOB, KEYS, List.of(new Placement("127.0.0.1", address.getPort(), 0, "n1")),
                statuses, true, CEILING, silence, () -> false, (r, e, l) -> { }, silenceClock::get);

        assertEquals(7, statuses[1], "the final reply, not given up after a silence: " + seen);
        assertTrue(silenceClock.get() > silence.toNanos(), "the interim replies outlasted the silence: " + seen);
    }

    @Test
    void shouldGiveUpARankWhoseNodeStaysSilentForTheSilence() throws Exception {
        try (DatagramChannel silent = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            int port = ((InetSocketAddress) silent.getLocalAddress()).getPort();
            int[] statuses = {0, V1Control.NO_REPLY};
            long start = System.nanoTime();

            V2Control.terminate(JobRunner.freeUdpPort(), JOB, KEYS, List.of(new Placement("127.0.0.1", port, 0, "n1")),
                    statuses, true, CEILING, Duration.ofMillis(400), () -> false, (r, e, l) -> { });

            assertEquals(V1Control.NODE_DOWN, statuses[1]);
            assertTrue(System.nanoTime() - start < CEILING.toNanos(), "the silence ended the wait, not the wait's end");
        }
    }

    @Test
    void shouldAcknowledgeAndPassOnTheRanksLastLinesWhileWaitingForTerminate() throws Exception {
        int ownerPort = JobRunner.freeUdpPort();
        lateLine = true;
        InetSocketAddress address = startProxy(KEYS, ownerPort);
        List<String> lines = new CopyOnWriteArrayList<>();
        int[] statuses = {0, V1Control.NO_REPLY};

        V2Control.terminate(ownerPort, JOB, KEYS, List.of(new Placement("127.0.0.1", address.getPort(), 0, "n1")),
                statuses, CEILING, () -> false, (rank, stderr, line) -> lines.add(rank + " " + stderr
                        + " " + line));

        assertEquals(7, statuses[1]);
        assertEquals(5, outputAck);
        assertEquals(List.of("1 true late line"), lines, "once, though the proxy sent it with every TERMINATE");
    }

    @Test
    void shouldCollectEveryPageOfAJobsRanksAndTellAnUnknownJobFromASilentNode() throws Exception {
        InetSocketAddress address = startProxy(KEYS, 0);

        // the wait ends with the last page: it is only a ceiling
        V2Control.NodeStatus node = V2Control.status(List.of(address), JOB, KEYS, CEILING).get(address);

        assertTrue(node.answered);
        assertFalse(node.unknownJob);
        assertEquals(List.of(new V2Control.RankState(1, V2StatusDescriptor.STATE_RUNNING, 0, 4242, -1),
                new V2Control.RankState(2, V2StatusDescriptor.STATE_FINISHED, 3, 4243, 137),
                new V2Control.RankState(5, V2StatusDescriptor.STATE_EXITED, 1, 4244, 0)), node.ranks);
        assertTrue(seen.stream().filter("STATUS rank 0"::equals).count() >= 2, "two pages: " + seen);
        V2Control.NodeStatus other = V2Control.status(List.of(address), 0x77L, KEYS, CEILING).get(address);
        assertTrue(other.answered);
        assertTrue(other.unknownJob);
        assertTrue(other.ranks.isEmpty());
        try (DatagramChannel silent = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            InetSocketAddress mute = (InetSocketAddress) silent.getLocalAddress();

            // a node that never answers: the whole wait passes, however short
            V2Control.NodeStatus none = V2Control.status(List.of(mute), JOB, KEYS, Duration.ofMillis(300)).get(mute);

            assertFalse(none.answered);
            assertFalse(none.unknownJob);
        }
    }

    @Test
    void shouldPrintTheJobsRanksAsATableAndSayWhenANodeDoesNotKnowTheJob(@TempDir Path dir) throws Exception {
        InetSocketAddress address = startProxy(KEYS, 0);
        Path key = dir.resolve("cluster.key");
        Files.writeString(key, java.util.HexFormat.of().formatHex(KEY) + "\n");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        String[] common = {"--hosts", "127.0.0.1:1", "--port", Integer.toString(address.getPort()), "--key-file",
            key.toString(), "--wait", Long.toString(CEILING.toMillis())};
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();

        int code = MpiproxyCommand.execute(concat(new String[] {"status", "--job", JobRunner.Job.hex(JOB)}, common),
                Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        String node = "127.0.0.1:" + address.getPort();
        assertEquals(List.of("node " + node + ": 3 ranks of job " + JobRunner.Job.hex(JOB),
                "RANK  NODE" + " ".repeat(node.length() - 2) + "STATE     PID   CORE  EXIT",
                "1     " + node + "  running   4242  0     -",
                "2     " + node + "  finished  4243  3     137 (signal 9)",
                "5     " + node + "  exited    4244  1     0"),
                List.of(out.toString(StandardCharsets.UTF_8).split("\n")));

        out.reset();
        code = MpiproxyCommand.execute(concat(new String[] {"status", "--job", "ff"}, common), Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(0, code);
        assertEquals("node " + node + ": job 00000000000000ff is not known on this node\n",
                out.toString(StandardCharsets.UTF_8));

        assertEquals(2, MpiproxyCommand.execute(concat(new String[] {"status", "--job", "xyz"}, common), Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--job xyz: expected a job id"));
    }

    @Test
    void shouldExitOneWhenANodeDoesNotAnswerTheStatusRequest(@TempDir Path dir) throws Exception {
        Path key = dir.resolve("cluster.key");
        Files.writeString(key, java.util.HexFormat.of().formatHex(KEY) + "\n");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        try (DatagramChannel silent = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            int port = ((InetSocketAddress) silent.getLocalAddress()).getPort();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int code = MpiproxyCommand.execute(new String[] {"status", "--job", "abc", "--wait", "300", "--hosts",
                "127.0.0.1:1", "--port", Integer.toString(port), "--key-file", key.toString()}, Map.of(),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            assertEquals(1, code);
            assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("node 127.0.0.1:" + port + ": no answer"),
                    out.toString(StandardCharsets.UTF_8));
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
