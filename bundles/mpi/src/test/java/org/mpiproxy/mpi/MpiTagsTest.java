package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/** The tagged calls of a rank over a real channel file; the test plays the proxy. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MpiTagsTest {

    private static final int INT = MpiDatatype.INT.code();

    @TempDir
    Path dir;
    private MappedRankChannel proxySide;
    private Mpi mpi;

    @BeforeEach
    void setUp() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        proxySide = MappedRankChannel.create(file, 4096, 0x99L, 1);
        mpi = Mpi.init(new String[] {"--slave", file.toString(), "1", "2"});
    }

    @AfterEach
    void tearDown() {
        mpi.close();
        proxySide.close();
    }

    private void deliver(int tagWord, int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        assertEquals(true, proxySide.toRank().offer(INT, values.length, tagWord, b, 0, values.length * 4));
    }

    @Test
    void shouldReceiveByTagKeepingEarlierMessagesOfOtherTags() {
        deliver(5, 1);
        deliver(6 | MessageRing.MORE_RECORDS, 2, 3);
        deliver(6, 4);
        deliver(5, 9);
        int[] buf = new int[8];
        assertEquals(new Status(0, 6, 3), mpi.recv(buf, 1, 7, 0, 6));
        assertArrayEquals(new int[] {0, 2, 3, 4, 0, 0, 0, 0}, buf);
        assertEquals(new Status(0, 5, 1), mpi.recv(buf, 0, 8, Mpi.ANY_SOURCE, 5));
        assertEquals(1, buf[0]);
        assertEquals(new Status(0, 5, 1), mpi.recv(buf, 0, 8, 0, Mpi.ANY_TAG));
        assertEquals(9, buf[0]);
    }

    @Test
    void shouldGiveCallsWithoutATagTheKeptMessagesFirst() {
        deliver(3, 11);
        deliver(4, 12);
        deliver(0, 13);
        int[] buf = new int[2];
        assertEquals(new Status(0, 4, 1), mpi.recv(buf, 0, 2, 0, 4));
        assertEquals(12, buf[0]);
        mpi.recv(buf, 0, 2, 0);
        assertArrayEquals(new int[] {11, 13}, buf);
    }

    @Test
    void shouldSendOneMessageWithItsTag() {
        mpi.send(new double[] {1.5, -2.25}, 0, 2, 0, 42);
        MessageRing out = proxySide.fromRank();
        assertEquals(42, out.peekTagWord());
        ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(2, out.pollRecord(MpiDatatype.DOUBLE.code(), b, 0, 2));
        assertEquals(1.5, b.getDouble(0));
        assertEquals(-2.25, b.getDouble(8));
    }

    @Test
    void shouldRefuseBadTagsEmptyMessagesAndOtherSources() {
        int[] buf = new int[4];
        assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class, () -> mpi.send(buf, 0, 1, 0, -1)).errorCode());
        assertEquals(MpiErrors.ERR_TAG, assertThrows(MpiException.class, () -> mpi.recv(buf, 0, 1, 0, -2)).errorCode());
        assertEquals(MpiErrors.ERR_COUNT, assertThrows(MpiException.class, () -> mpi.send(buf, 0, 0, 0, 1)).errorCode());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.recv(buf, 0, 1, 1, 1)).errorCode());
        deliver(7, 1, 2, 3);
        assertEquals(MpiErrors.ERR_TRUNCATE,
                assertThrows(MpiException.class, () -> mpi.recv(buf, 0, 2, 0, 7)).errorCode());
    }
}
