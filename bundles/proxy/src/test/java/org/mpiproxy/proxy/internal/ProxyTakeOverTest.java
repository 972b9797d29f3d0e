package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderFlyweight;

/**
 * A new revision of the proxy component takes over the jobs of the previous one on the thread that
 * binds the channel manager, while the transport's receive thread may already hand it datagrams:
 * none of them reaches a dispatcher before the jobs are there. A SEND answered "unknown job"
 * meanwhile would end its host's stream to that rank silently (the host stops sending the
 * fragment again, and the rank never gets it).
 */
class ProxyTakeOverTest {

    private static final InetSocketAddress V1_HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final InetSocketAddress V2_HOST = new InetSocketAddress("127.0.0.1", 40002);
    private static final long JOB = 0x5678L;
    private static final ProxySettings SETTINGS =
            new ProxySettings(Path.of("logs"), 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1));

    private final FakeChannelManager channels = new FakeChannelManager();
    private final FakeLauncher launcher = new FakeLauncher();
    private final RecordingTransport transport = new RecordingTransport();
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final List<Runnable> closing = new ArrayList<>();

    @AfterEach
    void tearDown() {
        closing.forEach(Runnable::run);
        timer.shutdownNow();
    }

    @Test
    void shouldServeNoDatagramOfAHandedOverJobBeforeEveryJobIsTakenOver(@TempDir Path dir) throws Exception {
        // the previous revision: a v1 job and a v2 job beside it, handed over
        V1Dispatcher v1 = previousV1();
        V2Dispatcher v2 = previousV2();
        v1.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), V1_HOST, transport);
        v1.doWork(transport);
        long v1Job = launcher.requests.get(0).jobId();
        V2Datagrams host = new V2Datagrams(System.currentTimeMillis());
        v2.onDatagram(host.exec(JOB, 1, 0, 2, "prog"), V2_HOST, transport);
        v2.doWork(transport);
        assertEquals(2, transport.take().size(), "both EXECs acknowledged");
        v2.closeRelay();
        Map<String, Object> state = v1.handOver();
        state.put("v2", v2.handOver());
        assertTrue(HandOver.offer(state, Duration.ofMinutes(5), () -> { }));

        // the next revision maps the v1 job's channel again when the channel manager is bound, and
        // stays there until the test lets it go on
        ProxyComponent next = nextRevision(dir, 0);
        next.bindLauncher(launcher, Map.of(ProcessLauncher.KIND, "local", ProcessLauncher.CORES, "0"));
        CountDownLatch mapping = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        closing.add(0, goOn::countDown);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread binder = new Thread(() -> {
            try {
                next.bindChannels(pausing(v1Job, mapping, goOn));
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-bind-channels");
        binder.start();
        assertTrue(mapping.await(1, TimeUnit.MINUTES), "the take-over maps the v1 job's channel");

        // the receive thread meanwhile: the v2 job is not taken over yet
        next.onDatagram(host.sendInts(JOB, 1, 0, 5, true, 10), V2_HOST, transport);
        List<V2HeaderFlyweight> early = v2Replies();
        assertEquals(List.of(), early.stream().map(V2HeaderFlyweight::result).toList(),
                "a datagram that comes while the jobs are taken over gets no answer, not 'unknown job'");
        goOn.countDown();
        binder.join(TimeUnit.MINUTES.toMillis(1));
        assertEquals(null, failed.get());

        // the host sends the fragment again: stored and acknowledged
        next.onDatagram(host.sendInts(JOB, 1, 0, 5, true, 10), V2_HOST, transport);
        List<V2HeaderFlyweight> r = v2Replies();
        assertEquals(1, r.size());
        assertEquals(MpiErrors.SUCCESS, r.get(0).result());
        assertEquals(1, r.get(0).ack());
        ByteBuffer element = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, channels.channel(JOB, 1).toRank.pollRecord(3, element, 0, 1));
        assertEquals(10, element.getInt(0), "the rank gets the fragment");
        assertEquals(2, next.jobs().size());
    }

    @Test
    void shouldHoldBackAnExecUntilALauncherIsBoundAgainAfterATakeOver(@TempDir Path dir) throws Exception {
        V2Dispatcher v2 = previousV2();
        V2Datagrams host = new V2Datagrams(System.currentTimeMillis());
        v2.onDatagram(host.exec(JOB, 1, 0, 2, "prog"), V2_HOST, transport);
        v2.doWork(transport);
        assertEquals(1, transport.take().size());
        v2.closeRelay();
        V1Dispatcher v1 = previousV1();
        Map<String, Object> state = v1.handOver();
        state.put("v2", v2.handOver());
        assertTrue(HandOver.offer(state, Duration.ofMinutes(5), () -> { }));

        // a refreshed node: the proxy comes back, takes the job over, and its launcher binds later
        ProxyComponent next = nextRevision(dir, 3600);
        next.bindChannels(channels);

        next.onDatagram(host.sendInts(JOB, 1, 0, 5, true, 10), V2_HOST, transport);
        List<V2HeaderFlyweight> served = v2Replies();
        assertEquals(1, served.size(), "the taken-over job is served at once");
        assertEquals(MpiErrors.SUCCESS, served.get(0).result());
        assertEquals(1, next.jobs().size(), "taken over");
        long other = JOB + 1;
        next.onDatagram(host.exec(other, 1, 0, 2, "prog"), V2_HOST, transport);
        assertEquals(List.of(), v2Replies(), "no launcher yet: no answer (the host resends), not 'no launcher'");

        next.bindLauncher(launcher, Map.of(ProcessLauncher.KIND, "local", ProcessLauncher.CORES, "0"));
        next.onDatagram(host.exec(other, 1, 0, 2, "prog"), V2_HOST, transport);
        // the rank starts on the component's launch thread; its acknowledgement leaves with the work loop
        List<V2HeaderFlyweight> started = new ArrayList<>();
        long ceiling = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (started.isEmpty() && System.nanoTime() < ceiling) {
            next.doWork(transport);
            started.addAll(v2Replies());
            Thread.yield();
        }
        assertEquals(1, started.size());
        assertEquals(MpiErrors.SUCCESS, started.get(0).result(), "the resent EXEC starts its rank");
        assertEquals(2, next.jobs().size());
    }

    /** The revision that hands over: its v1 dispatcher. */
    private V1Dispatcher previousV1() {
        V1Dispatcher v1 = new V1Dispatcher(channels, SETTINGS, core -> launcher, transport::wakeup, Runnable::run,
                timer);
        closing.add(v1::close);
        return v1;
    }

    /** The revision that hands over: its v2 dispatcher. */
    private V2Dispatcher previousV2() {
        V2Dispatcher v2 = new V2Dispatcher(channels, SETTINGS, new V2Settings(V2Datagrams.KEYS, V2Datagrams.NODE,
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300)), core -> launcher, transport::wakeup,
                Runnable::run, timer, System::currentTimeMillis);
        closing.add(v2::close);
        return v2;
    }

    /** The revision that takes over, with {@code startup.wait.seconds} of {@code waitSeconds}. */
    private ProxyComponent nextRevision(Path dir, int waitSeconds) throws IOException {
        ProxyComponent next = new ProxyComponent(TestConfigs.of(ProxyConfig.class, Map.of(
                "v2.key.files", "1:" + privateKey(dir.resolve("key")), "node.name", V2Datagrams.NODE,
                "startup.wait.seconds", waitSeconds, "log.directory", dir.resolve("logs").toString(),
                "state.directory", dir.resolve("state").toString())));
        closing.add(0, next::deactivate);
        return next;
    }

    /** The channel manager, but the first mapping of {@code jobId}'s channels waits for {@code goOn}. */
    private ChannelManager pausing(long jobId, CountDownLatch mapping, CountDownLatch goOn) {
        return new ChannelManager() {
            @Override
            public RankChannel open(long job, int rankId) throws IOException {
                return channels.open(job, rankId);
            }

            @Override
            public RankChannel reopen(long job, int rankId) throws IOException {
                if (job == jobId && mapping.getCount() > 0) {
                    mapping.countDown();
                    try {
                        goOn.await(1, TimeUnit.MINUTES);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return channels.reopen(job, rankId);
            }

            @Override
            public void remove(long job, int rankId) {
                channels.remove(job, rankId);
            }

            @Override
            public void release(long job) {
                channels.release(job);
            }

            @Override
            public Path jobDirectory(long job) {
                return channels.jobDirectory(job);
            }

            @Override
            public Path baseDirectory() {
                return channels.baseDirectory();
            }
        };
    }

    /** @return the v2 replies sent since the last call, each verified */
    private List<V2HeaderFlyweight> v2Replies() {
        V2Authenticator verifier = V2Datagrams.hostVerifier();
        List<V2HeaderFlyweight> list = new ArrayList<>();
        for (RecordingTransport.Sent s : transport.take()) {
            if (s.target.equals(V2_HOST)) {
                assertEquals(V2Authenticator.OK, verifier.verifyReply(s.bytes, 0, s.bytes.limit(),
                        System.currentTimeMillis()));
                list.add(new V2HeaderFlyweight().wrap(s.bytes, 0));
            }
        }
        return list;
    }

    private static Path privateKey(Path file) throws IOException {
        Files.writeString(file, java.util.HexFormat.of().formatHex(V2Datagrams.KEY));
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return file;
    }
}
