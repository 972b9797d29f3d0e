package org.mpiproxy.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.RingDescriptor;
import org.mpiproxy.protocol.MpiDatatype;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Our {@link MappedMessageRing} against Agrona's {@link OneToOneRingBuffer}: the same records
 * (4 B, 1448 B, 64 KiB), the same capacity, both over a mapped file in {@code /dev/shm} (or the
 * temp directory), a producer thread and a consumer thread. Each invocation offers (or polls)
 * one record once; the {@code received} counter is the throughput in records per second.
 * Results are bimodal on small machines (consumer trailing the producer or not), which is why
 * {@code run.sh} runs many forks and reports min/median/max.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class RingBenchmark {

    /** Ring data capacity: large enough for 64 KiB records in both rings (Agrona allows capacity/8). */
    static final int CAPACITY = 1 << 20;

    /** Record payload in bytes. */
    @Param({"4", "1448", "65536"})
    public int size;

    private Path file;
    private FileChannel channel;
    private MappedMessageRing ours;
    private OneToOneRingBuffer agrona;
    private int datatype;
    private int count;

    /** Per-thread counts of records moved; JMH reports them as rates. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Counters {
        /** Records the producer wrote. */
        public long sent;
        /** Records the consumer read. */
        public long received;
        /** Offers refused because the ring was full. */
        public long full;

        /** Resets the counts before each iteration. */
        @Setup(Level.Iteration)
        public void reset() {
            sent = 0;
            received = 0;
            full = 0;
        }
    }

    /** Producer-side buffers. */
    @State(Scope.Thread)
    public static class ProducerBuffers {
        ByteBuffer source;
        UnsafeBuffer agronaSource;

        /** Allocates the record source once. */
        @Setup(Level.Trial)
        public void setup() {
            source = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < source.capacity(); i++) {
                source.put(i, (byte) i);
            }
            agronaSource = new UnsafeBuffer(source);
        }
    }

    /** Consumer-side buffers and handler. */
    @State(Scope.Thread)
    public static class ConsumerBuffers {
        ByteBuffer destination;
        MutableDirectBuffer agronaDestination;
        MessageHandler copy;

        /** Allocates the destination once. */
        @Setup(Level.Trial)
        public void setup() {
            destination = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
            agronaDestination = new UnsafeBuffer(destination);
            copy = (type, buffer, index, length) -> buffer.getBytes(index, agronaDestination, 0, length);
        }
    }

    /**
     * Maps two fresh rings.
     *
     * @throws IOException when the files cannot be created
     */
    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path dir = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        file = Files.createTempFile(dir, "mpiproxy-ring-bench", ".ring");
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        int oursLength = RingDescriptor.RING_HEADER_LENGTH + CAPACITY;
        int agronaLength = CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
        MappedByteBuffer oursRegion = channel.map(FileChannel.MapMode.READ_WRITE, 0, oursLength);
        MappedByteBuffer agronaRegion = channel.map(FileChannel.MapMode.READ_WRITE, oursLength, agronaLength);
        ours = new MappedMessageRing(oursRegion);
        agrona = new OneToOneRingBuffer(new UnsafeBuffer(agronaRegion));
        datatype = size == 4 ? MpiDatatype.INT.code() : MpiDatatype.CHAR.code();
        count = size == 4 ? 1 : size;
    }

    /**
     * Unmaps by dropping references and deletes the file.
     *
     * @throws IOException when the file cannot be deleted
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        channel.close();
        Files.deleteIfExists(file);
    }

    /**
     * Offers one record to our ring.
     *
     * @param buffers the source
     * @param counters the counts
     */
    @Benchmark
    @Group("ours")
    @GroupThreads(1)
    public void oursProduce(ProducerBuffers buffers, Counters counters) {
        if (ours.offer(datatype, count, buffers.source, 0, size)) {
            counters.sent++;
        } else {
            counters.full++;
        }
    }

    /**
     * Polls one record from our ring.
     *
     * @param buffers the destination
     * @param counters the counts
     */
    @Benchmark
    @Group("ours")
    @GroupThreads(1)
    public void oursConsume(ConsumerBuffers buffers, Counters counters) {
        if (ours.poll(datatype, buffers.destination, 0, count) > 0) {
            counters.received++;
        }
    }

    /**
     * Offers one record to Agrona's ring.
     *
     * @param buffers the source
     * @param counters the counts
     */
    @Benchmark
    @Group("agrona")
    @GroupThreads(1)
    public void agronaProduce(ProducerBuffers buffers, Counters counters) {
        if (agrona.write(1, buffers.agronaSource, 0, size)) {
            counters.sent++;
        } else {
            counters.full++;
        }
    }

    /**
     * Reads one record from Agrona's ring.
     *
     * @param buffers the destination
     * @param counters the counts
     */
    @Benchmark
    @Group("agrona")
    @GroupThreads(1)
    public void agronaConsume(ConsumerBuffers buffers, Counters counters) {
        counters.received += agrona.read(buffers.copy, 1);
    }
}
