package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.channel.shm.internal.BenchmarkChannels;
import org.mpiproxy.proxy.internal.BenchmarkDispatchers;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.V1HeaderDescriptor;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The proxy's per-datagram hot paths, single-threaded, without sockets: a SEND datagram in the
 * receive buffer goes through the v1 dispatcher into the rank's mapped ring (and the rank
 * side takes it out again); a RECV request is answered from the rank's ring with an encoded
 * reply handed to the transport. Run with {@code -prof gc}: both must show 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class DispatchBenchmark {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final int CHAR = MpiDatatype.CHAR.code();
    private static final int PAYLOAD = V1HeaderDescriptor.MAX_PAYLOAD_LENGTH;

    private Path base;
    private BenchmarkDispatchers.Dispatcher dispatcher;
    private MappedRankChannel rankSide;
    private final ByteBuffer sendDatagram = direct(V1HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1);
    private final ByteBuffer recvDatagram = direct(V1HeaderDescriptor.MAX_DATAGRAM_LENGTH + 1);
    private final ByteBuffer rankBuffer = direct(PAYLOAD);
    private final CountingTransport replies = new CountingTransport();
    private volatile LaunchRequest launched;

    /**
     * Creates a job of one rank whose process is a stand-in, and maps its channel as the rank would.
     *
     * @throws IOException when the channel cannot be created
     */
    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path shm = Path.of("/dev/shm");
        base = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
                "mpiproxy-dispatch-bench");
        ProcessLauncher launcher = request -> {
            launched = request;
            return new IdleProcess();
        };
        dispatcher = BenchmarkDispatchers.v1(BenchmarkChannels.mappedFiles(base, 1 << 18), launcher,
                base.resolve("logs"), Duration.ofSeconds(5), Duration.ofSeconds(1), new ScheduledThreadPoolExecutor(1));
        ByteBuffer exec = direct(V1HeaderDescriptor.MAX_DATAGRAM_LENGTH);
        byte[] program = "bench".getBytes(StandardCharsets.UTF_8);
        new V1HeaderFlyweight().wrap(exec, 0).set(V1HeaderDescriptor.OP_EXEC, 0, 1, 0, 2, 0);
        exec.put(V1HeaderDescriptor.HEADER_LENGTH, program);
        exec.limit(V1HeaderDescriptor.HEADER_LENGTH + program.length);
        dispatcher.onDatagram(exec, HOST, replies);
        dispatcher.doWork(replies);
        if (launched == null || replies.datagrams != 1) {
            throw new IllegalStateException("EXEC was not acknowledged: " + dispatcher.counters());
        }
        rankSide = MappedRankChannel.map(launched.channelPath());

        new V1HeaderFlyweight().wrap(sendDatagram, 0).set(V1HeaderDescriptor.OP_SEND, 0, 1, 0, CHAR, PAYLOAD);
        sendDatagram.limit(V1HeaderDescriptor.MAX_DATAGRAM_LENGTH);
        new V1HeaderFlyweight().wrap(recvDatagram, 0).set(V1HeaderDescriptor.OP_RECV, 0, 1, 0, CHAR, PAYLOAD);
        recvDatagram.limit(V1HeaderDescriptor.HEADER_LENGTH);
    }

    /**
     * Removes the job and its files.
     *
     * @throws IOException when the files cannot be removed
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        rankSide.close();
        dispatcher.close();
        delete(base);
    }

    /** Deletes a directory and everything in it. */
    static void delete(Path directory) throws IOException {
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }

    /**
     * One 1448-byte SEND datagram from the receive buffer into the rank's ring, then the rank
     * takes the 1436 bytes out.
     *
     * @return elements the rank read
     */
    @Benchmark
    public int sendToRing() {
        sendDatagram.position(0);
        dispatcher.onDatagram(sendDatagram, HOST, replies);
        return rankSide.toRank().poll(CHAR, rankBuffer, 0, PAYLOAD);
    }

    /**
     * The rank writes 1436 bytes into its ring, then one RECV request is answered with a
     * 1448-byte reply datagram encoded straight from the ring.
     *
     * @return reply datagrams so far
     */
    @Benchmark
    public long recvReply() {
        rankSide.fromRank().offer(CHAR, PAYLOAD, rankBuffer, 0, PAYLOAD);
        recvDatagram.position(0);
        dispatcher.onDatagram(recvDatagram, HOST, replies);
        return replies.datagrams;
    }

    private static ByteBuffer direct(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A transport that counts what it is given. */
    static final class CountingTransport implements DatagramTransport {
        long datagrams;
        long bytes;

        @Override
        public boolean send(ByteBuffer datagram, InetSocketAddress target) {
            datagrams++;
            bytes += datagram.remaining();
            return true;
        }

        @Override
        public InetSocketAddress localAddress() {
            return HOST;
        }

        @Override
        public int maxDatagramSize() {
            return V1HeaderDescriptor.MAX_DATAGRAM_LENGTH;
        }

        @Override
        public void wakeup() {
        }
    }

    /** A rank process that runs until stopped. */
    static final class IdleProcess implements RankProcess {
        private final CompletableFuture<Integer> exit = new CompletableFuture<>();

        @Override
        public long pid() {
            return 0;
        }

        @Override
        public int coreId() {
            return 0;
        }

        @Override
        public boolean isAlive() {
            return !exit.isDone();
        }

        @Override
        public CompletableFuture<Integer> onExit() {
            return exit;
        }

        @Override
        public void stop(Duration grace) {
            exit.complete(143);
        }
    }
}
