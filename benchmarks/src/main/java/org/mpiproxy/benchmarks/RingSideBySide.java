package org.mpiproxy.benchmarks;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.RingDescriptor;

/**
 * The CPU cost of offer+poll on one thread for our ring (layout 2.0, through {@code ByteBuffer}
 * VarHandles), the same layout through {@code sun.misc.Unsafe} ({@link RingUnsafe20}, an
 * experiment the product does not use), the layout 1.1
 * ring ({@link RingLayout11}) and Agrona's {@link OneToOneRingBuffer}, measured in interleaved
 * 100 ms slices in random order, so that load that comes and goes on a shared machine falls on
 * all alike (JMH runs them one after the other). Prints median and quartiles of the
 * slices' ns per record.
 * <p>
 * Usage: {@code RingSideBySide <record bytes> <rounds> [<only: 0 ours, 1 layout 1.1, 2 Agrona, 3 2.0 through Unsafe>]},
 * with {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED} for Agrona.
 */
public final class RingSideBySide {
    static int sink;

    public static void main(String[] args) throws Exception {
        int size = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int cap = 1 << 20;
        Path file = Files.createTempFile(Path.of("/dev/shm"), "mpiproxy-ring-sbs", ".ring");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            int len = RingDescriptor.RING_HEADER_LENGTH + cap;
            MappedMessageRing ours = new MappedMessageRing(ch.map(FileChannel.MapMode.READ_WRITE, 0, len));
            RingLayout11 old = new RingLayout11(ch.map(FileChannel.MapMode.READ_WRITE, 2L * len, len));
            RingUnsafe20 unsafe = new RingUnsafe20(ch.map(FileChannel.MapMode.READ_WRITE, 6L * len, len));
            MappedByteBuffer ar = ch.map(FileChannel.MapMode.READ_WRITE, 4L * len, cap + RingBufferDescriptor.TRAILER_LENGTH);
            OneToOneRingBuffer agrona = new OneToOneRingBuffer(new UnsafeBuffer(ar));
            ByteBuffer src = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer dst = ByteBuffer.allocateDirect(65536).order(ByteOrder.LITTLE_ENDIAN);
            UnsafeBuffer asrc = new UnsafeBuffer(src);
            MutableDirectBuffer adst = new UnsafeBuffer(dst);
            MessageHandler copy = (t, b, i, l) -> b.getBytes(i, adst, 0, l);
            int dt = size == 4 ? 3 : 0;
            int count = size == 4 ? 1 : size;
            Slice[] impl = {
                n -> { long t0 = System.nanoTime(); long k = 0; long end = t0 + n; long t;
                    do { for (int i = 0; i < 256; i++) { ours.offer(dt, count, src, 0, size); sink += ours.poll(dt, dst, 0, count); }
                         k += 256; t = System.nanoTime(); } while (t < end); return (double) (t - t0) / k; },
                n -> { long t0 = System.nanoTime(); long k = 0; long end = t0 + n; long t;
                    do { for (int i = 0; i < 256; i++) { old.offer(dt, count, src, 0, size); sink += old.poll(dt, dst, 0, count); }
                         k += 256; t = System.nanoTime(); } while (t < end); return (double) (t - t0) / k; },
                n -> { long t0 = System.nanoTime(); long k = 0; long end = t0 + n; long t;
                    do { for (int i = 0; i < 256; i++) { agrona.write(1, asrc, 0, size); sink += agrona.read(copy, 1); }
                         k += 256; t = System.nanoTime(); } while (t < end); return (double) (t - t0) / k; },
                n -> { long t0 = System.nanoTime(); long k = 0; long end = t0 + n; long t;
                    do { for (int i = 0; i < 256; i++) { unsafe.offer(dt, count, src, 0, size); sink += unsafe.poll(dt, dst, 0, count); }
                         k += 256; t = System.nanoTime(); } while (t < end); return (double) (t - t0) / k; },
            };
            String[] names = {"ours", "1.1", "agrona", "2.0-unsafe"};
            long sliceNanos = 100_000_000L;
            for (int w = 0; w < 3; w++) {
                for (Slice r : impl) {
                    r.run(sliceNanos * 5);
                }
            }
            List<List<Double>> res = new ArrayList<>();
            for (int i = 0; i < impl.length; i++) {
                res.add(new ArrayList<>());
            }
            Random rnd = new Random(1);
            List<Integer> order = new ArrayList<>(args.length > 2 ? List.of(Integer.parseInt(args[2])) : List.of(0, 1, 2, 3));
            for (int r = 0; r < rounds; r++) {
                Collections.shuffle(order, rnd);
                for (int i : order) {
                    res.get(i).add(impl[i].run(sliceNanos));
                }
            }
            StringBuilder sb = new StringBuilder("size " + size + " B, " + rounds + " interleaved slices of 100 ms each, ns per offer+poll:");
            double[] med = new double[impl.length];
            for (int i = 0; i < impl.length; i++) {
                List<Double> l = res.get(i);
                if (l.isEmpty()) {
                    l.add(Double.NaN);
                }
                Collections.sort(l);
                med[i] = l.get(l.size() / 2);
                sb.append(String.format("%n  %-7s median %8.1f  p25 %8.1f  p75 %8.1f", names[i], med[i], l.get(l.size() / 4), l.get(3 * l.size() / 4)));
            }
            sb.append(String.format("%n  1.1/ours %.2f   2.0-unsafe/ours %.2f   agrona/ours %.2f (>1: ours faster)",
                med[1] / med[0], med[3] / med[0], med[2] / med[0]));
            System.out.println(sb);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    interface Slice {
        double run(long nanos);
    }
}
