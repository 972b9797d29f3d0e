package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.MessageRing;

class MappedMessageRingTest {

    static final int CHAR = 0;
    static final int SHORT = 1;
    static final int LONG = 2;
    static final int INT = 3;
    static final int DOUBLE = 12;

    private static final int CAPACITY = 4096;
    /**
     * How long a consumer thread may go without taking anything before the test counts it as
     * hung: on a busy machine the transfers take what they take, only a stop fails them.
     */
    private static final long STALL_NANOS = TimeUnit.MINUTES.toNanos(2);

    @TempDir
    Path dir;

    private MappedRankChannel channel;
    private MappedMessageRing ring;
    private final ByteBuffer src = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer dst = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);

    @BeforeEach
    void createRing() throws IOException {
        channel = MappedRankChannel.create(dir.resolve("rank-1.chan"), CAPACITY, 7L, 1);
        ring = channel.toRank();
    }

    @AfterEach
    void closeChannel() {
        channel.close();
    }

    @Test
    void shouldBeEmptyWhenCreated() {
        assertTrue(ring.isEmpty());
        assertEquals(MessageRing.EMPTY, ring.peekDatatype());
        assertEquals(0, ring.poll(INT, dst, 0, 10));
        assertEquals(CAPACITY, ring.capacity());
        assertEquals(CAPACITY - RingDescriptor.END_MARK_LENGTH, ring.freeBytes());
        assertEquals(0, ring.bytesWritten());
        assertEquals(0, ring.bytesRead());
        assertEquals(0, ring.availableElements(INT));
    }

    @Test
    void shouldRoundTripIntsDoublesShortsCharsAndLongs() {
        for (int i = 0; i < 5; i++) {
            src.putInt(4 * i, 1000 + i);
        }
        assertTrue(ring.offer(INT, 5, src, 0, 20));
        for (int i = 0; i < 3; i++) {
            src.putDouble(8 * i, i + 0.5);
        }
        assertTrue(ring.offer(DOUBLE, 3, src, 0, 24));
        src.putShort(0, (short) -2).putShort(2, (short) 300);
        assertTrue(ring.offer(SHORT, 2, src, 0, 4));
        src.put(0, (byte) 'h').put(1, (byte) 'i').put(2, (byte) '!');
        assertTrue(ring.offer(CHAR, 3, src, 0, 3));
        src.putLong(8, Long.MIN_VALUE);
        assertTrue(ring.offer(LONG, 1, src, 8, 8));
        assertFalse(ring.isEmpty());
        // ring bytes: align8(16 + payload) per record
        assertEquals(40 + 40 + 24 + 24 + 24, ring.bytesWritten());

        assertEquals(INT, ring.peekDatatype());
        assertEquals(5, ring.availableElements(INT));
        assertEquals(5, ring.poll(INT, dst, 0, 100));
        for (int i = 0; i < 5; i++) {
            assertEquals(1000 + i, dst.getInt(4 * i));
        }
        assertEquals(DOUBLE, ring.peekDatatype());
        assertEquals(3, ring.poll(DOUBLE, dst, 16, 3));
        for (int i = 0; i < 3; i++) {
            assertEquals(i + 0.5, dst.getDouble(16 + 8 * i));
        }
        assertEquals(2, ring.poll(SHORT, dst, 0, 2));
        assertEquals(-2, dst.getShort(0));
        assertEquals(300, dst.getShort(2));
        assertEquals(3, ring.poll(CHAR, dst, 1, 3));
        assertEquals('h', dst.get(1));
        assertEquals('!', dst.get(3));
        assertEquals(1, ring.poll(LONG, dst, 0, 1));
        assertEquals(Long.MIN_VALUE, dst.getLong(0));

        assertTrue(ring.isEmpty());
        assertEquals(MessageRing.EMPTY, ring.peekDatatype());
        assertEquals(ring.bytesWritten(), ring.bytesRead());
        assertEquals(CAPACITY - RingDescriptor.END_MARK_LENGTH, ring.freeBytes());
    }

    @Test
    void shouldWorkWithHeapBuffers() {
        ByteBuffer heapSrc = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer heapDst = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        heapSrc.putInt(4, 42).putInt(8, 43);
        assertTrue(ring.offer(INT, 2, heapSrc, 4, 8));
        assertEquals(2, ring.poll(INT, heapDst, 12, 2));
        assertEquals(42, heapDst.getInt(12));
        assertEquals(43, heapDst.getInt(16));
    }

    @Test
    void shouldTakePartOfARecordAndLeaveTheRestForTheNextPoll() {
        fillInts(0, 10);
        assertTrue(ring.offer(INT, 10, src, 0, 40));

        assertEquals(3, ring.poll(INT, dst, 0, 3));
        assertInts(dst, 0, 0, 3);
        assertEquals(12, ring.headRecordOffset());
        assertEquals(7, ring.availableElements(INT));
        assertEquals(12, ring.bytesRead()); // head 0 plus 12 payload bytes of the head record
        assertFalse(ring.isEmpty());

        assertEquals(4, ring.poll(INT, dst, 0, 4));
        assertInts(dst, 0, 3, 4);
        assertEquals(3, ring.poll(INT, dst, 0, 100));
        assertInts(dst, 0, 7, 3);
        assertTrue(ring.isEmpty());
        assertEquals(0, ring.headRecordOffset());
        assertEquals(56, ring.bytesRead());
        assertEquals(ring.bytesWritten(), ring.bytesRead());
    }

    @Test
    void shouldGatherElementsAcrossConsecutiveRecordsOfTheSameDatatype() {
        offerIntRecords(3, 1, 5, 2);
        src.putDouble(0, 9.25);
        assertTrue(ring.offer(DOUBLE, 1, src, 0, 8));

        assertEquals(11, ring.availableElements(INT));
        assertEquals(2, ring.poll(INT, dst, 0, 2));
        assertEquals(7, ring.poll(INT, dst, 8, 7));
        assertInts(dst, 0, 0, 9);
        assertEquals(2, ring.availableElements(INT));
        assertEquals(2, ring.poll(INT, dst, 0, 50));
        assertInts(dst, 0, 9, 2);
        assertEquals(DOUBLE, ring.peekDatatype());
        assertEquals(0, ring.availableElements(INT));
        assertEquals(1, ring.availableElements(DOUBLE));
        assertEquals(1, ring.poll(DOUBLE, dst, 0, 50));
        assertEquals(9.25, dst.getDouble(0));
    }

    @Test
    void shouldCountTheHeadRunOnlyAsFarAsTheCallerNeeds() {
        offerIntRecords(3, 1, 5, 2);
        // exact below the limit, across records and behind a partly read head record
        assertEquals(11, ring.availableElements(INT, 12));
        assertEquals(11, ring.availableElements(INT, Long.MAX_VALUE));
        // enough once the limit is reached: the walk stops at the record that reaches it
        assertEquals(4, ring.availableElements(INT, 4));
        assertEquals(3, ring.availableElements(INT, 1));
        assertEquals(2, ring.poll(INT, dst, 0, 2));
        assertEquals(1, ring.availableElements(INT, 1));
        assertEquals(9, ring.availableElements(INT, 9));
        assertEquals(0, ring.availableElements(DOUBLE, 1));
        // the count does not move the head
        assertEquals(9, ring.poll(INT, dst, 0, 50));
        assertEquals(0, ring.availableElements(INT, 1));
    }

    @Test
    void shouldKeepTheConsumersDoorbellUntilAProducerTakesItOnce() {
        long bell = Doorbell.encode(new java.net.InetSocketAddress("127.0.0.1", 41000));
        assertEquals(0, ring.doorbell());
        assertEquals(0, Doorbell.take(ring), "nobody sleeps");
        assertFalse(Doorbell.arm(ring, bell), "empty: the consumer may sleep");
        assertEquals(bell, ring.doorbell());
        assertEquals(bell, Doorbell.take(ring));
        assertEquals(0, ring.doorbell());
        assertEquals(0, Doorbell.take(ring), "rung once");
        ring.doorbell(bell);
        ring.doorbell(0);
        assertFalse(ring.takeDoorbell(bell), "withdrawn by the consumer");

        offerIntRecords(1);
        assertTrue(Doorbell.arm(ring, bell), "records wait: the consumer must not sleep");
        // the field is outside the data area: the records are intact
        assertEquals(1, ring.poll(INT, dst, 0, 1));
        assertEquals(0, dst.getInt(0));
    }

    @Test
    void shouldMarkTheHostToRankRingOfANewChannelAsRungByItsProducer() {
        assertTrue(channel.toRank().producerRingsDoorbell(), "the proxy creates the channel and rings");
        assertFalse(channel.fromRank().producerRingsDoorbell(), "until the rank's library says so");
        channel.fromRank().producerRingsDoorbell(true);
        assertTrue(channel.fromRank().producerRingsDoorbell());
    }

    /** Offers one INT record per count, with the values 0, 1, 2, ... running on across records. */
    private void offerIntRecords(int... counts) {
        int next = 0;
        for (int count : counts) {
            fillInts(next, count);
            assertTrue(ring.offer(INT, count, src, 0, 4 * count));
            next += count;
        }
    }

    @Test
    void shouldReturnTypeMismatchAndLeaveTheRecordWhenTheHeadHoldsAnotherDatatype() {
        fillInts(0, 4);
        assertTrue(ring.offer(INT, 4, src, 0, 16));
        assertEquals(1, ring.poll(INT, dst, 0, 1));

        assertEquals(MessageRing.TYPE_MISMATCH, ring.poll(DOUBLE, dst, 0, 10));
        assertEquals(4, ring.bytesRead());
        assertEquals(3, ring.availableElements(INT));
        assertEquals(3, ring.poll(INT, dst, 0, 10));
        assertInts(dst, 0, 1, 3);
    }

    @Test
    void shouldStopGatheringAtARecordOfAnotherDatatype() {
        fillInts(0, 2);
        assertTrue(ring.offer(INT, 2, src, 0, 8));
        assertTrue(ring.offer(SHORT, 4, src, 0, 8));
        assertEquals(2, ring.poll(INT, dst, 0, 10));
        assertEquals(SHORT, ring.peekDatatype());
        assertEquals(MessageRing.TYPE_MISMATCH, ring.poll(INT, dst, 0, 10));
        assertEquals(4, ring.poll(SHORT, dst, 0, 10));
    }

    @Test
    void shouldRefuseOfferWhenTheRingIsFullAndAcceptAgainAfterPoll() {
        int payload = 1000; // aligned record of 1016 bytes: four take 4064 of 4096
        for (int i = 0; i < 4; i++) {
            fillInts(i * 1000, payload / 4);
            assertTrue(ring.offer(INT, payload / 4, src, 0, payload), "record " + i);
        }
        // 32 bytes left: a record of 24 plus the 8-byte end mark fit exactly
        assertEquals(24, ring.freeBytes());
        assertFalse(ring.offer(INT, 3, src, 0, 12), "a record of 32 bytes leaves no room for the end mark");
        src.putInt(0, 77).putInt(4, 78);
        assertTrue(ring.offer(INT, 2, src, 0, 8));
        assertEquals(0, ring.freeBytes());
        long written = ring.bytesWritten();
        assertFalse(ring.offer(INT, 1, src, 0, 4));
        assertFalse(ring.offer(INT, payload / 4, src, 0, payload));
        assertEquals(written, ring.bytesWritten());

        assertEquals(payload / 4, ring.poll(INT, dst, 0, payload / 4));
        assertInts(dst, 0, 0, payload / 4);
        assertEquals(1016, ring.freeBytes());
        fillInts(4000, payload / 4);
        assertFalse(ring.offer(INT, payload / 4, src, 0, payload), "8 bytes of padding make it 1024");
        assertEquals(payload / 4, ring.poll(INT, dst, 0, payload / 4));
        assertInts(dst, 0, 1000, payload / 4);
        assertEquals(2032, ring.freeBytes());
        assertTrue(ring.offer(INT, payload / 4, src, 0, payload)); // padding of 8 bytes, then at index 0
        assertEquals(1008, ring.freeBytes());
        for (int i = 2; i <= 3; i++) {
            assertEquals(payload / 4, ring.poll(INT, dst, 0, payload / 4));
            assertInts(dst, 0, i * 1000, payload / 4);
        }
        assertEquals(2, ring.poll(INT, dst, 0, 2));
        assertEquals(77, dst.getInt(0));
        assertEquals(78, dst.getInt(4));
        assertEquals(payload / 4, ring.poll(INT, dst, 0, payload / 4));
        assertInts(dst, 0, 4000, payload / 4);
        assertTrue(ring.isEmpty());
        assertEquals(0, ring.poll(INT, dst, 0, 1));
    }

    @Test
    void shouldNotFreeSpaceOfAPartlyReadRecord() {
        fillInts(0, 1000 / 4);
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.offer(INT, 1000 / 4, src, 0, 1000));
        }
        assertTrue(ring.offer(INT, 2, src, 0, 8));
        assertEquals(0, ring.freeBytes());
        assertEquals(10, ring.poll(INT, dst, 0, 10));
        assertEquals(0, ring.freeBytes());
        assertFalse(ring.offer(INT, 1, src, 0, 4));
    }

    @Test
    void shouldRejectRecordsThatCanNeverFitOrDisagree() {
        MappedMessageRing mapped = ring;
        assertEquals(CAPACITY / 2 - 16, mapped.maxPayloadLength());
        ByteBuffer big = ByteBuffer.allocate(CAPACITY);
        assertThrows(IllegalArgumentException.class, () -> ring.offer(CHAR, CAPACITY / 2, big, 0, CAPACITY / 2));
        assertThrows(IllegalArgumentException.class, () -> ring.offer(INT, 0, src, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> ring.offer(INT, 3, src, 0, 10));
        assertThrows(IllegalArgumentException.class, () -> ring.offer(INT, 4, src, 0, 2));
        assertThrows(IllegalArgumentException.class, () -> ring.offer(RingDescriptor.PADDING_TYPE, 1, src, 0, 4));
        assertThrows(IndexOutOfBoundsException.class, () -> ring.offer(INT, 2, src, 4090, 8));
        assertTrue(ring.isEmpty());
        assertTrue(ring.offer(CHAR, mapped.maxPayloadLength(), big, 0, mapped.maxPayloadLength()));
    }

    @Test
    void shouldAcceptTheLargestRecordAtAnyPositionOfAnEmptyRing() {
        MappedMessageRing mapped = ring;
        ByteBuffer big = ByteBuffer.allocate(CAPACITY);
        ByteBuffer out = ByteBuffer.allocate(CAPACITY);
        for (int shift = 0; shift < CAPACITY; shift += 8 * 37) {
            assertTrue(ring.isEmpty());
            int small = Math.max(1, (shift % 400) / 8 * 8);
            assertTrue(ring.offer(CHAR, small, big, 0, small));
            assertEquals(small, ring.poll(CHAR, out, 0, CAPACITY));
            assertTrue(ring.offer(CHAR, mapped.maxPayloadLength(), big, 0, mapped.maxPayloadLength()),
                "at position " + mapped.tailPosition());
            assertEquals(mapped.maxPayloadLength(), ring.poll(CHAR, out, 0, CAPACITY));
        }
    }

    @Test
    void shouldWrapAroundWithPaddingAMillionTimesInOrder() {
        MappedMessageRing mapped = ring;
        long sent = 0;
        long received = 0;
        int records = 0;
        int sizeSeed = 1;
        while (records < 1_000_000) {
            int count = 1 + ((sizeSeed = sizeSeed * 1103515245 + 12345) >>> 1 & 63);
            for (int i = 0; i < count; i++) {
                src.putInt(4 * i, (int) (sent + i));
            }
            if (ring.offer(INT, count, src, 0, 4 * count)) {
                sent += count;
                records++;
            } else if (records % 3 == 0) {
                while (received < sent) {
                    received = drain(received, 1 + records % 97);
                }
                assertEquals(0, ring.poll(INT, dst, 0, 100), "empty after draining");
                assertEquals(MessageRing.EMPTY, ring.peekDatatype());
            } else {
                received = drain(received, 1 + records % 97);
            }
        }
        while (received < sent) {
            received = drain(received, 50);
        }
        assertTrue(ring.isEmpty());
        assertEquals(ring.bytesWritten(), ring.bytesRead());
        assertTrue(mapped.tailPosition() > 1000L * CAPACITY, "wrapped many times");
        assertEquals(mapped.headPosition(), mapped.tailPosition());
    }

    @Test
    void shouldSkipPaddingWhenPeekingAndCountingAcrossTheWrap() {
        MappedMessageRing mapped = ring;
        // move the positions close to the end of the data area
        fillInts(0, 250);
        for (int i = 0; i < 3; i++) {
            assertTrue(ring.offer(INT, 250, src, 0, 1000));
            assertEquals(250, ring.poll(INT, dst, 0, 250));
        }
        assertEquals(3 * 1016, mapped.headPosition());
        fillInts(0, 260);
        assertTrue(ring.offer(INT, 260, src, 0, 1040)); // does not fit in the last 1024 bytes
        assertEquals(4096 + 1056, mapped.tailPosition());
        assertEquals(INT, ring.peekDatatype());
        assertEquals(260, ring.availableElements(INT));
        assertEquals(MessageRing.TYPE_MISMATCH, ring.poll(DOUBLE, dst, 0, 10));
        assertEquals(4096, mapped.headPosition()); // the padding was consumed, the record left
        assertEquals(260, ring.poll(INT, dst, 0, 1000));
        assertInts(dst, 0, 0, 260);
        assertTrue(ring.isEmpty());
    }

    @Test
    void shouldNotTakeStaleBytesOfConsumedRecordsForNewRecords() {
        MappedMessageRing mapped = ring;
        // fill the whole data area once with payload bytes that would read as a huge Length
        ByteBuffer stale = ByteBuffer.allocate(1000);
        for (int i = 0; i < stale.capacity(); i++) {
            stale.put(i, (byte) 0x7f);
        }
        for (int i = 0; i < 4; i++) {
            assertTrue(ring.offer(CHAR, 1000, stale, 0, 1000));
            assertEquals(1000, ring.poll(CHAR, dst, 0, 1000));
        }
        assertEquals(4 * 1016, mapped.headPosition());
        // small records now start inside the old payloads: each must end where the next begins
        for (int round = 0; round < 600; round++) {
            src.putInt(0, round);
            assertTrue(ring.offer(INT, 1, src, 0, 4));
            assertEquals(1, ring.availableElements(INT));
            assertEquals(1, ring.headRecordElements());
            assertEquals(1, ring.poll(INT, dst, 0, 10));
            assertEquals(round, dst.getInt(0));
            assertEquals(MessageRing.EMPTY, ring.peekDatatype(), "after round " + round);
            assertEquals(0, ring.availableElements(INT));
            assertEquals(0, ring.poll(INT, dst, 0, 10));
            assertTrue(ring.isEmpty());
        }
        assertTrue(mapped.tailPosition() > 2L * CAPACITY, "wrapped over the old payloads");
    }

    @Test
    void shouldMoveTenMillionIntsBetweenTwoThreadsInOrder() throws Exception {
        final int total = 10_000_000;
        AtomicLong taken = new AtomicLong();
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try {
            Future<Long> producer = executor.submit(() -> {
                ByteBuffer out = ByteBuffer.allocateDirect(1024).order(ByteOrder.LITTLE_ENDIAN);
                BackoffIdler idler = new BackoffIdler();
                int next = 0;
                int seed = 7;
                while (next < total && !Thread.currentThread().isInterrupted()) {
                    int count = Math.min(total - next, 1 + ((seed = seed * 1103515245 + 12345) >>> 8) % 200);
                    for (int i = 0; i < count; i++) {
                        out.putInt(4 * i, next + i);
                    }
                    while (!ring.offer(INT, count, out, 0, 4 * count)) {
                        idler.idle(0);
                        if (Thread.currentThread().isInterrupted()) {
                            return -1L;
                        }
                    }
                    idler.reset();
                    next += count;
                }
                return (long) next;
            });
            Future<Long> consumer = executor.submit(() -> {
                ByteBuffer in = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
                BackoffIdler idler = new BackoffIdler();
                int expected = 0;
                int max = 1;
                while (expected < total && !Thread.currentThread().isInterrupted()) {
                    max = max % 1000 + 1;
                    int n = ring.poll(INT, in, 0, max);
                    if (n < 0) {
                        throw new AssertionError("unexpected TYPE_MISMATCH at " + expected);
                    }
                    for (int i = 0; i < n; i++) {
                        int value = in.getInt(4 * i);
                        if (value != expected) {
                            throw new AssertionError("expected " + expected + " but got " + value);
                        }
                        expected++;
                    }
                    taken.lazySet(expected);
                    idler.idle(n);
                }
                return (long) expected;
            });
            assertEquals(total, awaitProgressing(consumer, taken));
            // its last offer was taken: it returns at once
            assertEquals(total, producer.get(60, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } finally {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        }
        assertTrue(ring.isEmpty());
        assertEquals(ring.bytesWritten(), ring.bytesRead());
    }

    @Test
    void shouldPassRecordsOfEverySizeAndStaleLookingBytesBetweenTwoThreads() throws Exception {
        // payload bytes 0x10..0x7f read as Lengths would be huge or misplaced; sizes from 1 byte
        // to the largest record force padding records and end marks at every kind of position
        final int records = 200_000;
        final int max = ring.maxPayloadLength();
        AtomicLong taken = new AtomicLong();
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try {
            Future<Long> producer = executor.submit(() -> {
                ByteBuffer out = ByteBuffer.allocateDirect(max).order(ByteOrder.LITTLE_ENDIAN);
                BackoffIdler idler = new BackoffIdler();
                int seed = 11;
                long bytes = 0;
                for (int r = 0; r < records; r++) {
                    seed = seed * 1103515245 + 12345;
                    int size = (seed >>> 4) % 16 == 0 ? max - ((seed >>> 12) & 7) : 1 + ((seed >>> 8) & 511);
                    byte fill = (byte) (0x10 + r % 0x70);
                    for (int i = 0; i < size; i++) {
                        out.put(i, fill);
                    }
                    out.put(0, (byte) r);
                    while (!ring.offer(CHAR, size, r & 0x7fff_ffff, out, 0, size)) {
                        idler.idle(0);
                    }
                    idler.reset();
                    bytes += size;
                }
                return bytes;
            });
            Future<Long> consumer = executor.submit(() -> {
                ByteBuffer in = ByteBuffer.allocateDirect(max).order(ByteOrder.LITTLE_ENDIAN);
                BackoffIdler idler = new BackoffIdler();
                int seed = 11;
                long bytes = 0;
                for (int r = 0; r < records; r++) {
                    seed = seed * 1103515245 + 12345;
                    int size = (seed >>> 4) % 16 == 0 ? max - ((seed >>> 12) & 7) : 1 + ((seed >>> 8) & 511);
                    int n;
                    while ((n = ring.pollRecord(CHAR, in, 0, max)) == 0) {
                        idler.idle(0);
                    }
                    idler.reset();
                    taken.lazySet(r + 1);
                    if (n != size) {
                        throw new AssertionError("record " + r + ": " + n + " bytes, expected " + size);
                    }
                    byte fill = (byte) (0x10 + r % 0x70);
                    if (in.get(0) != (byte) r || in.get(size - 1) != (size == 1 ? (byte) r : fill)
                            || in.get(size / 2) != (size / 2 == 0 ? (byte) r : fill)) {
                        throw new AssertionError("record " + r + " holds other bytes");
                    }
                    bytes += n;
                }
                return bytes;
            });
            long received = awaitProgressing(consumer, taken);
            // its last offer was taken: it returns at once
            assertEquals(producer.get(60, TimeUnit.SECONDS), received);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause());
        } finally {
            executor.shutdownNow();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        }
        assertTrue(ring.isEmpty());
        assertEquals(MessageRing.EMPTY, ring.peekDatatype());
        assertEquals(ring.bytesWritten(), ring.bytesRead());
    }

    @Test
    void shouldRejectBuffersThatAreNotARing() {
        assertThrows(IllegalArgumentException.class, () -> new MappedMessageRing(ByteBuffer.allocate(256 + 4096)));
        assertThrows(IllegalArgumentException.class, () -> new MappedMessageRing(ByteBuffer.allocateDirect(256 + 4000)));
        assertThrows(IllegalArgumentException.class,
            () -> new MappedMessageRing(ByteBuffer.allocateDirect(256 + 4096).asReadOnlyBuffer()));
        MappedMessageRing plain = new MappedMessageRing(ByteBuffer.allocateDirect(8192).alignedSlice(8).limit(256 + 4096).slice());
        assertEquals(4096, plain.capacity());
        assertTrue(plain.isEmpty());
    }

    /**
     * Waits for {@code consumer} as long as it takes while {@code taken} grows: it fails only
     * when the consumer took nothing for {@link #STALL_NANOS}.
     */
    private static <T> T awaitProgressing(Future<T> consumer, AtomicLong taken) throws Exception {
        long last = taken.get();
        long lastChange = System.nanoTime();
        while (true) {
            try {
                return consumer.get(1, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                long now = taken.get();
                if (now != last) {
                    last = now;
                    lastChange = System.nanoTime();
                } else if (System.nanoTime() - lastChange > STALL_NANOS) {
                    throw new AssertionError("the consumer took nothing for " + TimeUnit.NANOSECONDS.toSeconds(
                            STALL_NANOS) + " s, after " + now);
                }
            }
        }
    }

    private long drain(long received, int max) {
        int n = ring.poll(INT, dst, 0, max);
        assertTrue(n >= 0, "poll returned " + n);
        for (int i = 0; i < n; i++) {
            assertEquals((int) (received + i), dst.getInt(4 * i));
        }
        return received + n;
    }

    private void fillInts(int first, int count) {
        for (int i = 0; i < count; i++) {
            src.putInt(4 * i, first + i);
        }
    }

    private static void assertInts(ByteBuffer buffer, int index, int first, int count) {
        for (int i = 0; i < count; i++) {
            assertEquals(first + i, buffer.getInt(index + 4 * i), "element " + i);
        }
    }
}
