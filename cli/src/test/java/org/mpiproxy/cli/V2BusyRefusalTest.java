package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * The launcher against a proxy whose replay cache is full (docs/protocol-v2.md 3.5): it refuses
 * the first requests busy, then, once there is room, serves them. The launcher backs off, sends
 * them again and succeeds; a busy node is not a silent one.
 */
class V2BusyRefusalTest {

    private static final ClusterKeys KEYS = ClusterKeys.of(Map.of(1, new byte[32]), 1);
    private static final long JOB = 0xb05eL;
    private static final Duration CEILING = Duration.ofSeconds(60);
    /** How far the launcher's silence clock moves each time the fake proxy takes a request. */
    private static final long STEP_NANOS = Duration.ofMillis(40).toNanos();

    /** Requests the fake proxy refuses busy before it serves again. */
    private final AtomicInteger busyLeft = new AtomicInteger();
    /** "busy OP" or "OP", with the time the request came, in order. */
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final List<Long> busyTimes = new CopyOnWriteArrayList<>();
    private final AtomicLong silenceClock = new AtomicLong();
    private DatagramChannel proxy;
    private Thread thread;

    private InetSocketAddress startProxy() throws Exception {
        proxy = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        V2Authenticator auth = new V2Authenticator(KEYS, NodeIds.of("127.0.0.1"), 30_000, 1024);
        thread = new Thread(() -> {
            ByteBuffer in = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            ByteBuffer out = ByteBuffer.allocate(2048).order(V2HeaderDescriptor.BYTE_ORDER);
            try {
                while (true) {
                    InetSocketAddress from = (InetSocketAddress) proxy.receive(in.clear());
                    if (auth.verify(in, 0, in.position(), System.currentTimeMillis()) != V2Authenticator.OK) {
                        continue;
                    }
                    silenceClock.addAndGet(STEP_NANOS);
                    V2HeaderFlyweight h = new V2HeaderFlyweight().wrap(in, 0);
                    String op = V2HeaderDescriptor.operationName(h.operation());
                    if (busyLeft.getAndDecrement() > 0) {
                        // as a proxy whose replay cache (or this source's share) is full
                        busyTimes.add(System.nanoTime());
                        seen.add("busy " + op);
                        int n = V2RefusalDescriptor.put(in, 0, V2RefusalDescriptor.REASON_BUSY, out.clear(), 0);
                        proxy.send(out.limit(n).position(0), from);
                        continue;
                    }
                    seen.add(op);
                    V2HeaderFlyweight r = new V2HeaderFlyweight().wrap(out.clear(), 0)
                            .reset(h.operation(), V2HeaderDescriptor.FLAG_REPLY).keyId(1).nodeId(auth.nodeId())
                            .jobId(h.jobId()).rank(h.rank()).sequence(h.sequence())
                            .timestamp(System.currentTimeMillis()).nonce(System.nanoTime());
                    if (h.operation() == V2HeaderDescriptor.OP_TERMINATE) {
                        r.argument(7);
                    } else if (h.operation() == V2HeaderDescriptor.OP_STATUS && h.jobId() != 0) {
                        r.result(MpiErrors.ERR_COMM);
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

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
            thread.join(5000);
        }
    }

    private long count(String what) {
        return seen.stream().filter(what::equals).count();
    }

    @Test
    void shouldSendAnExecRefusedBusyAgainAfterAGrowingBackOffAndStartTheRankOnceThereIsRoom() throws Exception {
        InetSocketAddress address = startProxy();
        busyLeft.set(3);
        List<Placement> ranks = List.of(new Placement("127.0.0.1", address.getPort(), 0, "n1"));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (V2Session session = new V2Session(JOB, KEYS, ranks, new PrintStream(out), new PrintStream(out), false,
                () -> { })) {

            List<V2Session.Failure> failures = session.exec(JobRunner.freeUdpPort(), "prog", List.of(),
                    List.of(Map.of()), CEILING);

            assertEquals(List.of(), failures, seen.toString());
        }
        assertEquals(3, count("busy EXEC"), seen.toString());
        assertTrue(count("EXEC") >= 1, seen.toString());
        // lower bounds only: the launcher may not send again before its back-off is over
        long first = busyTimes.get(1) - busyTimes.get(0);
        long second = busyTimes.get(2) - busyTimes.get(1);
        assertTrue(first >= V2Refusals.FIRST_BACKOFF_NANOS, "first back-off " + TimeUnit.NANOSECONDS.toMillis(first));
        assertTrue(second >= 2 * V2Refusals.FIRST_BACKOFF_NANOS, "doubled: " + TimeUnit.NANOSECONDS.toMillis(second));
    }

    @Test
    void shouldNotGiveUpANodeThatRefusesTerminateBusyForLongerThanTheSilence() throws Exception {
        InetSocketAddress address = startProxy();
        busyLeft.set(4);
        Duration silence = Duration.ofNanos(2 * STEP_NANOS);
        int[] statuses = {0, V1Control.NO_REPLY};

        V2Control.terminate(JobRunner.freeUdpPort(), JOB, KEYS, List.of(new Placement("127.0.0.1", address.getPort(), 0,
                "n1")), statuses, false, CEILING, silence, () -> false, (r, e, l) -> { }, silenceClock::get);

        assertEquals(7, statuses[1], "busy is alive, not silent: " + seen);
        assertEquals(4, count("busy TERMINATE"));
        assertTrue(silenceClock.get() > silence.toNanos(), "the busy spell outlasted the silence: " + seen);
    }

    @Test
    void shouldAskForAJobsRanksAgainAfterABusyRefusal() throws Exception {
        InetSocketAddress address = startProxy();
        busyLeft.set(2);

        V2Control.NodeStatus status = V2Control.status(List.of(address), JOB, KEYS, CEILING).get(address);

        assertTrue(status.answered, seen.toString());
        assertTrue(status.unknownJob);
        assertEquals(2, count("busy STATUS"));
    }

    @Test
    void shouldProbeAgainAfterABusyRefusalAndSayBusyWhenTheProxyStaysBusy() throws Exception {
        InetSocketAddress address = startProxy();
        busyLeft.set(1);
        assertEquals(Prober.Answer.ANSWERED, V2Control.probe(List.of(address), KEYS, CEILING).get(address),
                "a busy refusal is no answer: probed again, then answered");
        assertEquals(1, count("busy STATUS"));

        busyLeft.set(Integer.MAX_VALUE);
        long before = count("busy STATUS");
        Prober.Answer busy = V2Control.probe(List.of(address), KEYS, Duration.ofSeconds(2)).get(address);

        assertFalse(busy.answered());
        assertTrue(busy.problem().startsWith("the proxy is busy: its replay cache is full"), busy.problem());
        assertTrue(count("busy STATUS") - before >= 2, "probed again after the back-off: " + seen);
    }
}
