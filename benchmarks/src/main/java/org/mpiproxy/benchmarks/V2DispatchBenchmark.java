package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.channel.shm.internal.BenchmarkChannels;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.proxy.internal.BenchmarkDispatchers;
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
 * The v2 receive path, single-threaded, without sockets, as {@link DispatchBenchmark} measures
 * v1's: a SEND the host signs (its header stamped with the next sequence, the time and a fresh
 * nonce, the MAC computed by the product's {@link V2Authenticator}) goes through the v2
 * dispatcher (MAC checked, job and rank looked up by id, stored in the rank's mapped ring,
 * acknowledged with a signed reply) and the rank side takes it out; a signed RECV is answered
 * with a signed reply encoded from the rank's ring. Run with {@code -prof gc}: both must show
 * 0 B/op (no boxing of job ids, no per-datagram buffers).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class V2DispatchBenchmark {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 40001);
    private static final String NODE = "bench-node";
    private static final byte[] KEY = HexFormat.of().parseHex(
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    private static final int DATAGRAM = V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH;
    private static final int PAYLOAD = DATAGRAM - V2HeaderDescriptor.HEADER_LENGTH - V2HeaderDescriptor.MAC_LENGTH;
    private static final int CHAR = MpiDatatype.CHAR.code();
    private static final long JOB = 0x5eed_0000_0000_0001L;

    private Path base;
    private BenchmarkDispatchers.Dispatcher dispatcher;
    private MappedRankChannel rankSide;
    private V2Authenticator host;
    private long nodeId;
    private final V2HeaderFlyweight header = new V2HeaderFlyweight();
    private final ByteBuffer sendDatagram = ByteBuffer.allocateDirect(DATAGRAM).order(V2HeaderDescriptor.BYTE_ORDER);
    private final ByteBuffer recvDatagram = ByteBuffer.allocateDirect(DATAGRAM).order(V2HeaderDescriptor.BYTE_ORDER);
    private final ByteBuffer rankBuffer = ByteBuffer.allocateDirect(PAYLOAD).order(V2HeaderDescriptor.BYTE_ORDER);
    private final DispatchBenchmark.CountingTransport replies = new DispatchBenchmark.CountingTransport();
    private volatile LaunchRequest launched;
    private long nonce = 1;
    private long sendSequence;
    private long recvSequence;

    /**
     * Starts a job of two ranks (rank 1 here, a stand-in process) with a signed EXEC, and maps
     * its channel as the rank would.
     *
     * @throws IOException when the channel cannot be created
     */
    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path shm = Path.of("/dev/shm");
        base = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
                "mpiproxy-v2-dispatch-bench");
        ProcessLauncher launcher = request -> {
            launched = request;
            return new DispatchBenchmark.IdleProcess();
        };
        ClusterKeys keys = ClusterKeys.of(Map.of(1, KEY), 1);
        nodeId = NodeIds.of(NODE);
        host = new V2Authenticator(keys, nodeId, 30_000, 16);
        dispatcher = BenchmarkDispatchers.v2(BenchmarkChannels.mappedFiles(base, 1 << 18), launcher,
                base.resolve("logs"), Duration.ofSeconds(5), Duration.ofSeconds(1), new ScheduledThreadPoolExecutor(1),
                keys, NODE, DATAGRAM);
        ByteBuffer exec = ByteBuffer.allocateDirect(DATAGRAM).order(V2HeaderDescriptor.BYTE_ORDER);
        byte[] program = "bench".getBytes(StandardCharsets.UTF_8);
        stamp(exec, V2HeaderDescriptor.OP_EXEC).argument(2).core(0).payloadLength(program.length);
        exec.put(V2HeaderDescriptor.HEADER_LENGTH, program);
        signed(exec);
        dispatcher.onDatagram(exec, HOST, replies);
        dispatcher.doWork(replies);
        if (launched == null || replies.datagrams != 1) {
            throw new IllegalStateException("EXEC was not acknowledged: " + dispatcher.counters());
        }
        rankSide = MappedRankChannel.map(launched.channelPath());
        for (int i = 0; i < PAYLOAD; i++) {
            sendDatagram.put(V2HeaderDescriptor.HEADER_LENGTH + i, (byte) i);
        }
    }

    /**
     * Removes the job and its files.
     *
     * @throws IOException when the files cannot be removed
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        long stored = dispatcher.counters().getOrDefault("v2.send.stored", 0L);
        long fragments = dispatcher.counters().getOrDefault("v2.recv.fragments", 0L);
        rankSide.close();
        dispatcher.close();
        DispatchBenchmark.delete(base);
        // a benchmark whose datagrams were refused would measure the refusal path
        if (stored != sendSequence || fragments < recvSequence) {
            throw new IllegalStateException("stored " + stored + " of " + sendSequence + " SENDs, replied "
                    + fragments + " of " + recvSequence + " RECVs");
        }
    }

    /**
     * The host signs a 1448-byte SEND (1344 payload bytes), the v2 dispatcher verifies it,
     * stores it in the rank's ring and sends a signed acknowledgement; the rank takes it out.
     *
     * @return elements the rank read
     */
    @Benchmark
    public int v2SendToRing() {
        stamp(sendDatagram, V2HeaderDescriptor.OP_SEND).flags(V2HeaderDescriptor.FLAG_END_OF_MESSAGE)
                .datatype(CHAR).sequence(sendSequence++).argument(PAYLOAD).payloadLength(PAYLOAD);
        dispatcher.onDatagram(signed(sendDatagram), HOST, replies);
        return rankSide.toRank().poll(CHAR, rankBuffer, 0, PAYLOAD);
    }

    /**
     * The rank writes 1344 bytes into its ring; the host signs a RECV for the next fragment
     * (acknowledging the one before), answered with a signed 1448-byte reply from the ring.
     *
     * @return reply datagrams so far
     */
    @Benchmark
    public long v2RecvReply() {
        rankSide.fromRank().offer(CHAR, PAYLOAD, rankBuffer, 0, PAYLOAD);
        stamp(recvDatagram, V2HeaderDescriptor.OP_RECV).sequence(recvSequence++).argument(1);
        dispatcher.onDatagram(signed(recvDatagram), HOST, replies);
        return replies.datagrams;
    }

    private V2HeaderFlyweight stamp(ByteBuffer datagram, int op) {
        datagram.clear();
        return header.wrap(datagram, 0).reset(op, 0).keyId(1).nodeId(nodeId).jobId(JOB).rank(1)
                .timestamp(System.currentTimeMillis()).nonce(nonce++);
    }

    private ByteBuffer signed(ByteBuffer datagram) {
        int length = host.sign(datagram, 0);
        return datagram.limit(length).position(0);
    }
}
