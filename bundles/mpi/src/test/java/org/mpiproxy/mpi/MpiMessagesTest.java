package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/** The calls for messages of any datatype on a rank over a real channel file; the test plays the proxy. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MpiMessagesTest {

    private static final int SHORT = MpiDatatype.SHORT.code();
    private static final int DOUBLE = MpiDatatype.DOUBLE.code();
    private static final int INT = MpiDatatype.INT.code();

    @TempDir
    Path dir;
    private MappedRankChannel proxySide;
    private Mpi mpi;

    @BeforeEach
    void setUp() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        proxySide = MappedRankChannel.create(file, 1 << 16, 0x77L, 1);
        mpi = Mpi.init(new String[] {"--slave", file.toString(), "1", "2"});
    }

    @AfterEach
    void tearDown() {
        mpi.close();
        proxySide.close();
    }

    private static byte[] random(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Offers {@code data} as records of at most {@code perRecord} bytes, all but the last with MORE_RECORDS. */
    private void deliver(int datatype, int tag, byte[] data, int perRecord) {
        int size = MpiDatatype.sizeOf(datatype);
        ByteBuffer src = ByteBuffer.wrap(data);
        for (int done = 0; done < data.length; ) {
            int n = Math.min(perRecord, data.length - done);
            int tagWord = done + n < data.length ? tag | MessageRing.MORE_RECORDS : tag;
            while (!proxySide.toRank().offer(datatype, n / size, tagWord, src, done, n)) {
                Thread.onSpinWait();
            }
            done += n;
        }
    }

    /** Reads one whole message from the rank-to-host ring; returns its bytes and checks datatype and tag. */
    private byte[] collect(int datatype, int tag, int length) {
        MessageRing ring = proxySide.fromRank();
        ByteBuffer got = ByteBuffer.allocate(length);
        int size = MpiDatatype.sizeOf(datatype);
        int bytes = 0;
        boolean last = false;
        while (!last) {
            if (ring.isEmpty()) {
                Thread.onSpinWait();
                continue;
            }
            assertEquals(datatype, ring.peekDatatype());
            int tagWord = ring.peekTagWord();
            assertEquals(tag, tagWord & ~MessageRing.MORE_RECORDS);
            int n = ring.pollRecord(datatype, got, bytes, (length - bytes) / size);
            bytes += n * size;
            last = (tagWord & MessageRing.MORE_RECORDS) == 0;
        }
        assertEquals(length, bytes, "the last record came early");
        return got.array();
    }

    @Test
    void shouldReceiveAMessageOfAnyDatatypeAsItArrivedAndSendItBackUnchanged() {
        byte[] shorts = random(3000, 1);
        deliver(SHORT, 9, shorts, 1000);

        Message m = mpi.recv(0, Mpi.ANY_TAG);

        assertEquals(0, m.source());
        assertEquals(9, m.tag());
        assertEquals(SHORT, m.datatype());
        assertEquals(1500, m.count());
        assertEquals(3000, m.length());
        assertArrayEquals(shorts, m.toByteArray());
        assertEquals(ByteOrder.LITTLE_ENDIAN, m.elements().order());
        assertTrue(m.elements().isReadOnly());
        assertTrue(proxySide.toRank().isEmpty());

        mpi.send(m, 0);

        assertArrayEquals(shorts, collect(SHORT, 9, 3000));
        assertTrue(proxySide.fromRank().isEmpty());
    }

    @Test
    void shouldRoundTripAMessageLargerThanTheRingsWhileTheyWrap() throws Exception {
        byte[] doubles = random(1 << 20, 2);
        CompletableFuture<Void> fed = CompletableFuture.runAsync(() -> deliver(DOUBLE, 0, doubles, 12_000));
        CompletableFuture<Void> echoed = CompletableFuture.runAsync(() -> mpi.send(mpi.recv(0, 0), 0));

        byte[] back = collect(DOUBLE, 0, 1 << 20);

        fed.get(20, TimeUnit.SECONDS);
        echoed.get(20, TimeUnit.SECONDS);
        assertArrayEquals(doubles, back);
    }

    @Test
    void shouldMatchByTagKeepOthersAndLeaveOutWhatAReceiveByElementsTook() {
        deliver(INT, 5, random(40, 3), 40);
        byte[] wanted = random(16, 4);
        deliver(DOUBLE, 6, wanted, 16);
        byte[] ints = random(40, 5);
        deliver(INT, 0, ints, 40);

        Message six = mpi.recv(0, 6);
        assertEquals(DOUBLE, six.datatype());
        assertArrayEquals(wanted, six.toByteArray());

        int[] first = new int[3];
        mpi.recv(first, 0, 3, 0);
        Message rest = mpi.recv(0, Mpi.ANY_TAG);
        assertEquals(5, rest.tag());
        assertEquals(7, rest.count());
        Message zero = mpi.recv(Mpi.ANY_SOURCE, 0);
        assertArrayEquals(ints, zero.toByteArray());
    }

    @Test
    void shouldReceiveElementsOfAnyDatatypeByCountIntoABuffer() {
        byte[] shorts = random(10, 6);
        deliver(SHORT, 3, shorts, 4);
        ByteBuffer buf = ByteBuffer.allocate(12);
        buf.position(1);

        mpi.recvElements(buf, 5, SHORT, 0);

        assertEquals(11, buf.position());
        byte[] got = new byte[10];
        buf.get(1, got);
        assertArrayEquals(shorts, got);
    }

    @Test
    void shouldRefuseBadArgumentsWithTheirMpiErrors() {
        assertEquals(MpiErrors.ERR_TYPE, assertThrows(MpiException.class, () -> Message.of(13, 0, new byte[1])).errorCode());
        assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class, () -> Message.of(INT, -1, new byte[4])).errorCode());
        assertEquals(MpiErrors.ERR_COUNT, assertThrows(MpiException.class, () -> Message.of(INT, 0, new byte[6])).errorCode());
        assertEquals(MpiErrors.ERR_COUNT, assertThrows(MpiException.class, () -> Message.of(INT, 0, new byte[0])).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class, () -> Message.of(INT, 0, null)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class, () -> mpi.send(null, 0)).errorCode());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class,
                () -> mpi.send(Message.of(INT, 0, new byte[4]), 1)).errorCode());
        assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class, () -> mpi.recv(0, -2)).errorCode());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.recv(1, 0)).errorCode());
        assertEquals(MpiErrors.ERR_TYPE, assertThrows(MpiException.class,
                () -> mpi.recvElements(ByteBuffer.allocate(4), 1, 99, 0)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class,
                () -> mpi.recvElements(ByteBuffer.allocate(4), 3, SHORT, 0)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class,
                () -> mpi.recvElements(ByteBuffer.allocate(4).asReadOnlyBuffer(), 1, SHORT, 0)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class, () -> mpi.recvElements(null, 1, SHORT, 0)).errorCode());
        assertTrue(mpi.hasTags());
        assertTrue(proxySide.fromRank().isEmpty());
    }

    @Test
    void shouldCopyTheElementsOfAMessageItMakes() {
        byte[] bytes = {1, 0, 2, 0};
        Message m = Message.of(SHORT, 4, bytes);
        bytes[0] = 9;

        assertEquals(1, m.elements().getShort(0));
        assertEquals(Mpi.ANY_SOURCE, m.source());
        assertEquals("MPI_SHORT x 2, tag 4", m.toString());
        assertFalse(m.elements() == m.elements());
    }
}
