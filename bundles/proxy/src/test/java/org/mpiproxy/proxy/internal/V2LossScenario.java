package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;

import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * Two concurrent v2 jobs of two ranks each over 127.0.0.1, every rank receiving its elements
 * from the host and sending each back plus its rank id; checks that every element arrives
 * exactly once and in order. Run as a program (inside a network namespace with faults) by
 * {@link NetworkFaultsTest}; prints {@code ok <elements>} and exits 0 on success.
 */
public final class V2LossScenario {

    private V2LossScenario() {
    }

    /**
     * @param args the work directory, elements per rank
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int count = Integer.parseInt(args[1]);
        Files.createDirectories(dir);
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString()));
        ProcessLauncher launcher = ThreadRanks.launcher((rank, request) -> {
            ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, count, 0);
            for (int i = 0; i < count; i++) {
                b.putInt(4 * i, b.getInt(4 * i) + request.rankId());
            }
            rank.send(MpiDatatype.INT.code(), b, 0, count, 0);
        });
        ExecutorService launches = Executors.newFixedThreadPool(2);
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
        AtomicReference<UdpTransport> ref = new AtomicReference<>();
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        V2Dispatcher v2 = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1 << 16, 1448, Duration.ofSeconds(300)), core -> launcher,
                () -> ref.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, v2);
        UdpTransport transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 8 << 20, 8 << 20, 65507),
                () -> front);
        ref.set(transport);
        int port = transport.localAddress().getPort();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Runnable job = () -> {
            try {
                List<HostfileEntry> hostfile = List.of(new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port, 0),
                        new HostfileEntry(2, new byte[] {127, 0, 0, 1}, port, 0));
                V2HostTransport host = V2HostTransport.start(hostfile, "add", List.of(), V2Datagrams.KEYS, 1448,
                        Duration.ofSeconds(60), System.err);
                ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
                for (int r = 1; r <= 2; r++) {
                    for (int i = 0; i < count; i++) {
                        b.putInt(4 * i, i * 7 + r);
                    }
                    host.send(MpiDatatype.INT.code(), b, 0, count, r);
                }
                for (int r = 1; r <= 2; r++) {
                    host.recv(MpiDatatype.INT.code(), b, 0, count, r);
                    for (int i = 0; i < count; i++) {
                        if (b.getInt(4 * i) != i * 7 + 2 * r) {
                            throw new AssertionError("rank " + r + " element " + i + ": " + b.getInt(4 * i));
                        }
                    }
                }
                int[] statuses = host.finish();
                if (statuses[1] != 0 || statuses[2] != 0) {
                    throw new AssertionError("exit statuses " + java.util.Arrays.toString(statuses));
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        };
        Thread a = new Thread(job);
        Thread b = new Thread(job);
        a.start();
        b.start();
        a.join(240_000);
        b.join(240_000);
        Map<String, Long> counters = v2.counters();
        transport.close();
        front.close();
        launches.shutdownNow();
        timer.shutdownNow();
        if (a.isAlive() || b.isAlive()) {
            System.out.println("jobs did not finish; counters " + counters);
            System.exit(2);
        }
        if (failure.get() != null) {
            failure.get().printStackTrace(System.out);
            System.out.println("counters " + counters);
            System.exit(1);
        }
        System.out.println("counters " + counters);
        System.out.println("ok " + 4L * count);
        System.exit(0);
    }
}
