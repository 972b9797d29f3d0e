package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2StatusDescriptor;

/**
 * A PMI job whose rank 0 (a shell speaking PMI-1 to the launcher's server) waits in a fence while
 * ranks 1 and 2 run on two fake nodes: a node that goes silent, or whose port closes, ends the job
 * naming the node and its rank, the other node's rank is stopped (TERMINATE with STOP) and the
 * launcher exits non-zero; a node that is slow but answers keeps the job. The nodes' silence runs
 * on the launcher's injected clock, which the test moves on in steps, each step waiting for the
 * launcher to ask the answering node again.
 */
class LostNodeTest {

    /** Rank 0: enters fence 1, says so, and waits for the fence's end. */
    private static final String RANK_ZERO = String.join("\n",
            "exec 3<>/dev/tcp/${PMI_PORT%:*}/${PMI_PORT#*:} || exit 4",
            "echo \"cmd=initack pmiid=$PMI_ID\" >&3",
            "for i in 1 2 3 4; do read -r line <&3; done",
            "echo 'cmd=init pmi_version=1 pmi_subversion=1' >&3; read -r line <&3",
            "echo 'cmd=barrier_in' >&3",
            "echo 'in fence'",
            "read -r line <&3 || exit 5",
            "echo \"out: $line\"");
    private static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** Clock steps before a test counts the job as never ending (30 s of the job's clock). */
    private static final int MAX_STEPS = 60;
    private static final long CEILING_MILLIS = 60_000;

    @TempDir
    Path dir;
    private ClusterKeys keys;
    private final AtomicLong skew = new AtomicLong();
    private final Watched out = new Watched();
    private final Watched err = new Watched();
    private FakeNode a;
    private FakeNode b;

    @BeforeEach
    void start() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
        keys = V2Control.keys(key.toString());
        a = new FakeNode(keys, 1);
        b = new FakeNode(keys, 2);
    }

    @AfterEach
    void stop() throws Exception {
        a.close();
        b.close();
    }

    private CompletableFuture<Integer> launch(Map<String, String> env) {
        List<Placement> ranks = List.of(new Placement("127.0.0.1", a.port(), 0, "127.0.0.1"),
                new Placement("127.0.0.1", b.port(), 0, "127.0.0.1"));
        JobRunner.Settings settings = new JobRunner.Settings("/bin/bash", List.of("-c", RANK_ZERO), ranks, env,
                true, null, Duration.ofSeconds(5), Duration.ofSeconds(10), null, 0, "v2", dir.resolve("mpiproxy.key")
                .toString());
        JobRunner runner = new JobRunner(settings, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), () -> System.nanoTime() + skew.get());
        CompletableFuture<Integer> job = CompletableFuture.supplyAsync(() -> {
            try {
                return runner.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        job.whenComplete((exit, e) -> {
            out.touch();
            a.touch();
        });
        return job;
    }

    /** Moves the job's clock on a step at a time until the job ends, each step once node A was asked again. */
    private int stepUntilEnded(CompletableFuture<Integer> job) throws Exception {
        for (int step = 0; step < MAX_STEPS && !job.isDone(); step++) {
            long asked = a.statusRequests();
            skew.addAndGet(STEP_NANOS);
            a.awaitStatusAfter(asked, job);
        }
        assertTrue(job.isDone(), "the job did not end in " + MAX_STEPS + " steps of the clock: " + err.text());
        return job.get();
    }

    @Test
    void shouldEndAPmiJobWhoseNodeWentSilentNamingItAndStoppingTheOtherNode() throws Exception {
        CompletableFuture<Integer> job = launch(Map.of());
        out.await("[0] in fence");
        b.silent = true;

        int exit = stepUntilEnded(job);

        assertEquals(JobRunner.EXIT_NODE_LOST, exit, err.text());
        assertTrue(err.text().contains("mpiproxy: node 127.0.0.1:" + b.port() + " lost with rank 2: no proxy answers"
                + " at 127.0.0.1:" + b.port() + ": nothing heard for 5000 ms"), err.text());
        assertFalse(err.text().contains("node 127.0.0.1:" + a.port() + " lost"), "node A answered: " + err.text());
        assertEquals(List.of("rank 1 STOP"), a.terminates, "the other node's rank is stopped at once");
        assertTrue(err.text().contains("mpiproxy: rank 2 (127.0.0.1:" + b.port() + ":0) unknown: no proxy answers"),
                err.text());
    }

    @Test
    void shouldEndAPmiJobWhoseNodesPortClosedBeforeTheSilenceIsOver() throws Exception {
        // ten minutes of silence allowed: only the closed port can end this job in the steps given
        CompletableFuture<Integer> job = launch(Map.of(NodeWatch.DEAD_AFTER_ENV, "600000"));
        out.await("[0] in fence");
        b.close();

        int exit = stepUntilEnded(job);

        assertEquals(JobRunner.EXIT_NODE_LOST, exit, err.text());
        assertTrue(err.text().contains("mpiproxy: node 127.0.0.1:" + b.port() + " lost with rank 2: no proxy answers"
                + " at 127.0.0.1:" + b.port() + ": nothing listens on that UDP port (ICMP port unreachable"), err.text());
        assertEquals(List.of("rank 1 STOP"), a.terminates);
    }

    @Test
    void shouldKeepAJobWhenTheLauncherItselfStalledBeyondTheSilence() throws Exception {
        CompletableFuture<Integer> job = launch(Map.of());
        out.await("[0] in fence");

        // the launcher gets no CPU for 10 s of its clock (a loaded machine): nothing was asked meanwhile,
        // so nothing went unanswered; it asks again, both nodes answer, and the job runs on
        skew.addAndGet(TimeUnit.SECONDS.toNanos(10));
        for (int step = 0; step < 8; step++) {
            long askedA = a.statusRequests();
            long askedB = b.statusRequests();
            skew.addAndGet(STEP_NANOS);
            a.awaitStatusAfter(askedA, job);
            b.awaitStatusAfter(askedB, job);
        }
        assertFalse(job.isDone(), "a stall of the launcher is not a lost node: " + err.text());

        a.enterFenceAndExit(1);
        b.enterFenceAndExit(2);
        assertEquals(0, job.get(CEILING_MILLIS, TimeUnit.MILLISECONDS), err.text());
    }

    @Test
    void shouldKeepAJobWhoseNodeIsSlowButAnswers() throws Exception {
        CompletableFuture<Integer> job = launch(Map.of());
        out.await("[0] in fence");
        // one STATUS in four answered: with a step per request to each node, B is heard at least every
        // 2 s of the 5, the rest a margin for its answer to reach the launcher a few steps late
        b.answerEvery = 4;

        for (int step = 0; step < 30; step++) {
            long askedA = a.statusRequests();
            long askedB = b.statusRequests();
            skew.addAndGet(STEP_NANOS);
            a.awaitStatusAfter(askedA, job);
            b.awaitStatusAfter(askedB, job);
        }
        assertFalse(job.isDone(), "15 s of the clock with a slow node: the job runs on; " + err.text());

        // B answers at once again; ranks 1 and 2 enter the fence too and end: rank 0 leaves it and the job ends well
        b.answerEvery = 1;
        a.enterFenceAndExit(1);
        b.enterFenceAndExit(2);
        assertEquals(0, job.get(CEILING_MILLIS, TimeUnit.MILLISECONDS), err.text());
        assertTrue(out.text().contains("[0] out: cmd=barrier_out"), out.text());
        assertFalse(err.text().contains("lost"), err.text());
        assertEquals(List.of("rank 1"), a.terminates);
        assertEquals(List.of("rank 2"), b.terminates);
    }

    /** Output that can be waited for. */
    static final class Watched extends ByteArrayOutputStream {
        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            super.write(bytes, offset, length);
            notifyAll();
        }

        synchronized void touch() {
            notifyAll();
        }

        synchronized String text() {
            return toString(StandardCharsets.UTF_8);
        }

        synchronized void await(String expected) throws InterruptedException {
            long deadline = System.currentTimeMillis() + CEILING_MILLIS;
            while (!text().contains(expected)) {
                long left = deadline - System.currentTimeMillis();
                assertTrue(left > 0, "no '" + expected + "' in " + CEILING_MILLIS + " ms: " + text());
                wait(left);
            }
        }
    }

    /**
     * A v2 proxy for one rank, checking every request as a proxy does: it answers the probe,
     * EXEC, STATUS (its rank running, or exited once it entered the fence), the PMI fence and
     * TERMINATE (143 with STOP, else 0); it can go silent, answer STATUS only now and then, or
     * close its port.
     */
    static final class FakeNode implements AutoCloseable {
        final List<String> terminates = new CopyOnWriteArrayList<>();
        volatile boolean silent;
        volatile int answerEvery = 1;
        private final ClusterKeys keys;
        private final int rank;
        private final DatagramChannel channel;
        private final V2Authenticator auth;
        private final Thread thread;
        private long statusRequests;
        private volatile boolean exited;
        private volatile InetSocketAddress outputTo;
        private volatile long jobId;
        private final int port;

        FakeNode(ClusterKeys keys, int rank) throws IOException {
            this.keys = keys;
            this.rank = rank;
            channel = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            auth = new V2Authenticator(keys, NodeIds.of("127.0.0.1"), 30_000, 1024);
            port = ((InetSocketAddress) channel.getLocalAddress()).getPort();
            thread = new Thread(this::serve, "fake-node-" + rank);
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return port;
        }

        synchronized long statusRequests() {
            return statusRequests;
        }

        synchronized void touch() {
            notifyAll();
        }

        /** Waits until a STATUS of the job came after the {@code seen}-th, or the job ended. */
        synchronized void awaitStatusAfter(long seen, CompletableFuture<Integer> job) throws InterruptedException {
            long deadline = System.currentTimeMillis() + CEILING_MILLIS;
            while (statusRequests <= seen && !job.isDone()) {
                long left = deadline - System.currentTimeMillis();
                assertTrue(left > 0, "the launcher asked node " + rank + " nothing in " + CEILING_MILLIS + " ms");
                wait(left);
            }
        }

        /** The rank's {@code cmd=barrier_in} on its PMI stream, then the rank counts as exited (0). */
        void enterFenceAndExit(int r) throws IOException {
            ByteBuffer b = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            byte[] line = "cmd=barrier_in".getBytes(StandardCharsets.UTF_8);
            reply(b, V2HeaderDescriptor.OP_OUTPUT, jobId, r).flags(V2HeaderDescriptor.FLAG_REPLY
                    | V2HeaderDescriptor.FLAG_END_OF_MESSAGE).tag(V2HeaderDescriptor.STREAM_PMI).sequence(0)
                    .payloadLength(line.length);
            b.put(V2HeaderDescriptor.HEADER_LENGTH, line);
            exited = true;
            send(b, outputTo);
        }

        private V2HeaderFlyweight reply(ByteBuffer b, int op, long jobId, long r) {
            return new V2HeaderFlyweight().wrap(b.clear(), 0).reset(op, V2HeaderDescriptor.FLAG_REPLY)
                    .keyId(keys.sendKeyId()).nodeId(auth.nodeId()).jobId(jobId).rank(r)
                    .timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
        }

        private synchronized void send(ByteBuffer b, InetSocketAddress to) throws IOException {
            int n = auth.sign(b, 0);
            channel.send(b.limit(n).position(0), to);
        }

        private void serve() {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer out = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) channel.receive(in.clear());
                    if (silent || auth.verify(in, 0, in.position(), System.currentTimeMillis()) != V2Authenticator.OK) {
                        continue;
                    }
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    V2HeaderFlyweight r = reply(out, h.operation(), h.jobId(), h.rank()).sequence(h.sequence());
                    int op = h.operation();
                    if (op == V2HeaderDescriptor.OP_STATUS) {
                        long n;
                        synchronized (this) {
                            n = h.jobId() == 0 ? statusRequests : ++statusRequests;
                            notifyAll();
                        }
                        if (n % answerEvery != 0) {
                            continue;
                        }
                        if (h.jobId() == 0) {
                            r.result(MpiErrors.ERR_COMM);
                        } else {
                            V2StatusDescriptor.put(out, V2HeaderDescriptor.HEADER_LENGTH, rank, exited
                                    ? V2StatusDescriptor.STATE_EXITED : V2StatusDescriptor.STATE_RUNNING, 0, 4242,
                                    exited ? 0 : -1);
                            r.argument(1).payloadLength(V2StatusDescriptor.ENTRY_LENGTH);
                        }
                    } else if (op == V2HeaderDescriptor.OP_EXEC) {
                        jobId = h.jobId();
                        outputTo = new InetSocketAddress(from.getAddress(), h.tag());
                    } else if (op == V2HeaderDescriptor.OP_PMI) {
                        r.argument(h.argument()).ack(h.ack());
                    } else if (op == V2HeaderDescriptor.OP_TERMINATE) {
                        boolean stop = (h.argument() & V2HeaderDescriptor.TERMINATE_STOP) != 0;
                        String t = "rank " + h.rank() + (stop ? " STOP" : "");
                        if (!terminates.contains(t)) {
                            terminates.add(t);
                        }
                        r.argument(stop ? 143 : 0);
                    } else {
                        continue;
                    }
                    send(out, from);
                }
            } catch (IOException e) {
                // closed by the test
            }
        }

        @Override
        public void close() throws Exception {
            channel.close();
            thread.join(5000);
        }
    }
}
