package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.mpiproxy.channel.shm.internal.BenchmarkChannels;
import org.mpiproxy.launcher.local.internal.BenchmarkLaunchers;
import org.mpiproxy.proxy.internal.EmbeddedProxy;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * The proxy as the distribution runs it (UDP transport, v1 dispatcher and optionally v2,
 * mapped-file channels, local launcher), embedded in this JVM on an ephemeral loopback port.
 */
final class ProxyFixture implements AutoCloseable {

    static final int RING_CAPACITY = 2097152;

    final Path channelBase;
    final EmbeddedProxy proxy;
    final UdpTransport transport;
    final InetSocketAddress address;
    /** The v2 settings, {@code null} when only v1 is served. */
    final EmbeddedProxy.V2 v2;

    ProxyFixture(Path programs, Path work, Duration terminateTimeout) throws IOException {
        this(programs, work, terminateTimeout, RING_CAPACITY, null, null);
    }

    /** @param launches runs launches; {@code null} for the proxy's default pool */
    ProxyFixture(Path programs, Path work, Duration terminateTimeout, java.util.concurrent.Executor launches)
            throws IOException {
        this(programs, work, terminateTimeout, RING_CAPACITY, null, launches);
    }

    /**
     * @param ringCapacity {@code ring.capacity} of the channel manager
     * @param v2           protocol v2 next to v1; {@code null} for v1 only
     */
    ProxyFixture(Path programs, Path work, Duration terminateTimeout, int ringCapacity, EmbeddedProxy.V2 v2)
            throws IOException {
        this(programs, work, terminateTimeout, ringCapacity, v2, null);
    }

    /**
     * @param ringCapacity {@code ring.capacity} of the channel manager
     * @param v2           protocol v2 next to v1; {@code null} for v1 only
     * @param launches     runs launches; {@code null} for the proxy's default pool
     */
    ProxyFixture(Path programs, Path work, Duration terminateTimeout, int ringCapacity, EmbeddedProxy.V2 v2,
                 java.util.concurrent.Executor launches)
            throws IOException {
        Path shm = Path.of("/dev/shm");
        this.v2 = v2;
        channelBase = Files.createTempDirectory(Files.isWritable(shm) ? shm : work, "mpiproxy-bench-");
        proxy = new EmbeddedProxy(BenchmarkChannels.mappedFiles(channelBase, ringCapacity),
                BenchmarkLaunchers.local(programs), work.resolve("logs"), launches, terminateTimeout, v2);
        String bind = v2 != null ? v2.nodeName() : EmbeddedProxy.NODE_NAME;
        transport = new UdpTransport(UdpTransportSettings.of(bind, 0, 4 << 20, 4 << 20, 65507), () -> proxy);
        proxy.transport(transport);
        address = transport.localAddress();
    }

    /** @return the channel file of a rank of the only job (there is one job at a time) */
    Path channelFile(int rankId) throws IOException {
        try (Stream<Path> jobs = Files.list(channelBase)) {
            List<Path> dirs = jobs.filter(Files::isDirectory).collect(Collectors.toList());
            if (dirs.size() != 1) {
                throw new IllegalStateException("expected one job directory, found " + dirs);
            }
            return dirs.get(0).resolve("rank-" + rankId + ".chan");
        }
    }

    /** @return bytes of all channel files now */
    long channelBytes() throws IOException {
        // the files are sparse: their length says what is mapped, du what is in memory
        Process du = new ProcessBuilder("du", "-s", "-B1", channelBase.toString()).redirectErrorStream(true).start();
        String out = new String(du.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII).trim();
        try {
            if (du.waitFor() != 0) {
                throw new IOException("du " + channelBase + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running du", e);
        }
        return Long.parseLong(out.split("\\s+")[0]);
    }

    @Override
    public void close() throws IOException {
        transport.close();
        proxy.close();
        try (Stream<Path> files = Files.walk(channelBase)) {
            for (Path p : (Iterable<Path>) files.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
