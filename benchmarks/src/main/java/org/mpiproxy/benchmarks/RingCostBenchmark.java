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
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The CPU cost of one record through a ring: write it and read it back on the same thread.
 * Unlike {@link RingBenchmark} this does not depend on two threads getting a CPU each, so it
 * stays comparable on a loaded machine.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class RingCostBenchmark {

    /** Record payload in bytes. */
    @Param({"4", "1448", "65536"})
    public int size;

    private Path file;
    private FileChannel channel;
    private MappedMessageRing ours;
    private RingUnsafe20 unsafe;
    private OneToOneRingBuffer agrona;
    private ByteBuffer source;
    private ByteBuffer destination;
    private UnsafeBuffer agronaSource;
    private MutableDirectBuffer agronaDestination;
    private MessageHandler copy;
    private int datatype;
    private int count;

    /**
     * Maps two fresh rings of 1 MiB.
     *
     * @throws IOException when the file cannot be created
     */
    @Setup(Level.Trial)
    public void setup() throws IOException {
        Path dir = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        file = Files.createTempFile(dir, "mpiproxy-ring-cost", ".ring");
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        int oursLength = RingDescriptor.RING_HEADER_LENGTH + RingBenchmark.CAPACITY;
        MappedByteBuffer oursRegion = channel.map(FileChannel.MapMode.READ_WRITE, 0, oursLength);
        MappedByteBuffer agronaRegion = channel.map(FileChannel.MapMode.READ_WRITE, oursLength,
                RingBenchmark.CAPACITY + RingBufferDescriptor.TRAILER_LENGTH);
        // after Agrona's region, at a multiple of 8
        long unsafeStart = 2L * oursLength + 2L * RingBufferDescriptor.TRAILER_LENGTH;
        unsafe = new RingUnsafe20(channel.map(FileChannel.MapMode.READ_WRITE, unsafeStart, oursLength));
        ours = new MappedMessageRing(oursRegion);
        agrona = new OneToOneRingBuffer(new UnsafeBuffer(agronaRegion));
        source = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
        destination = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
        agronaSource = new UnsafeBuffer(source);
        agronaDestination = new UnsafeBuffer(destination);
        copy = (type, buffer, index, length) -> buffer.getBytes(index, agronaDestination, 0, length);
        datatype = size == 4 ? MpiDatatype.INT.code() : MpiDatatype.CHAR.code();
        count = size == 4 ? 1 : size;
    }

    /**
     * Closes and deletes the file.
     *
     * @throws IOException when the file cannot be deleted
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        channel.close();
        Files.deleteIfExists(file);
    }

    /** @return elements read back from our ring */
    @Benchmark
    public int ours() {
        ours.offer(datatype, count, source, 0, size);
        return ours.poll(datatype, destination, 0, count);
    }

    /** @return elements read back from the same layout through sun.misc.Unsafe (the experiment {@link RingUnsafe20}) */
    @Benchmark
    public int unsafe20() {
        unsafe.offer(datatype, count, source, 0, size);
        return unsafe.poll(datatype, destination, 0, count);
    }

    /** @return messages read back from Agrona's ring */
    @Benchmark
    public int agrona() {
        agrona.write(1, agronaSource, 0, size);
        return agrona.read(copy, 1);
    }
}
