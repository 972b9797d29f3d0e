package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;

/** A rank over a real channel file; the test plays the proxy on the other ends of the rings. */
class MpiRankTest {

    private static final int INT = MpiDatatype.INT.code();
    private static final int UCHAR = MpiDatatype.UNSIGNED_CHAR.code();

    @TempDir
    Path dir;
    private MappedRankChannel proxySide;
    private Mpi mpi;

    @BeforeEach
    void setUp() throws Exception {
        Path file = dir.resolve("rank-2.chan");
        proxySide = MappedRankChannel.create(file, 4096, 0x1234L, 2);
        mpi = Mpi.init(new String[] {"--slave", file.toString(), "2", "3", "100", "extra"});
    }

    @AfterEach
    void tearDown() {
        mpi.close();
        proxySide.close();
    }

    private static ByteBuffer ints(int from, int count) {
        ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            b.putInt(i * 4, from + i);
        }
        return b;
    }

    @Test
    void shouldKnowRankSizeAndProgramArguments() {
        assertEquals(2, mpi.rank());
        assertEquals(3, mpi.size());
        assertEquals(List.of("100", "extra"), mpi.args());
    }

    @Test
    void shouldReceiveIntsGatheredFromSeveralRecords() {
        ByteBuffer data = ints(-5, 300);
        assertTrue(proxySide.toRank().offer(INT, 100, data, 0, 400));
        assertTrue(proxySide.toRank().offer(INT, 200, data, 400, 800));
        int[] buf = new int[302];

        mpi.recv(buf, 1, 250, 0);
        mpi.recv(buf, 251, 50, 0);

        for (int i = 0; i < 300; i++) {
            assertEquals(i - 5, buf[i + 1]);
        }
        assertTrue(proxySide.toRank().isEmpty());
    }

    @Test
    void shouldWaitForDataTheProxyWritesLater() throws Exception {
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            byte[] b = new byte[3];
            mpi.recv(b, 0, 3, 0);
            return b;
        });
        ByteBuffer src = ByteBuffer.wrap(new byte[] {7, (byte) 200, 9});
        assertTrue(proxySide.toRank().offer(UCHAR, 3, src, 0, 3));

        assertArrayEquals(new byte[] {7, (byte) 200, 9}, received.get(1, TimeUnit.MINUTES));
    }

    @Test
    void shouldSendMoreThanTheRingHoldsInRecordsThatFit() throws Exception {
        int count = 5000;
        int[] src = new int[count];
        for (int i = 0; i < count; i++) {
            src[i] = i * 31;
        }
        CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> mpi.send(src, 0, count, 0));
        ByteBuffer got = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        int elements = 0;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (elements < count && System.nanoTime() < deadline) {
            int n = proxySide.fromRank().poll(INT, got, elements * 4, count - elements);
            assertTrue(n >= 0, "datatype mismatch");
            if (n == 0) {
                Thread.onSpinWait();
            }
            elements += n;
        }
        sent.get(1, TimeUnit.MINUTES);

        assertEquals(count, elements);
        for (int i = 0; i < count; i++) {
            assertEquals(src[i], got.getInt(i * 4));
        }
    }

    @Test
    void shouldSendBytesAsUnsignedCharRecords() {
        mpi.send(new byte[] {1, 2, 3, 4}, 1, 3, 0);

        assertEquals(UCHAR, proxySide.fromRank().peekDatatype());
        ByteBuffer got = ByteBuffer.allocate(3);
        assertEquals(3, proxySide.fromRank().poll(UCHAR, got, 0, 3));
        assertArrayEquals(new byte[] {2, 3, 4}, got.array());
    }

    @Test
    void shouldRejectAnotherDatatypeThanSent() {
        assertTrue(proxySide.toRank().offer(UCHAR, 4, ByteBuffer.allocate(4), 0, 4));

        MpiException e = assertThrows(MpiException.class, () -> mpi.recv(new int[1], 0, 1, 0));

        assertEquals(MpiErrors.ERR_TYPE, e.errorCode());
        assertEquals(UCHAR, proxySide.toRank().peekDatatype());
        assertTrue(e.getMessage().startsWith("MPI_ERR_TYPE: "), e.getMessage());
    }

    @Test
    void shouldTalkToRankZeroOnly() {
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.send(new int[1], 0, 1, 1)).errorCode());
        assertEquals(MpiErrors.ERR_RANK, assertThrows(MpiException.class, () -> mpi.recv(new int[1], 0, 1, 2)).errorCode());
    }

    @Test
    void shouldValidateBufferArguments() {
        assertEquals(MpiErrors.ERR_COUNT, assertThrows(MpiException.class, () -> mpi.send(new int[1], 0, -1, 0)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class, () -> mpi.send(new int[1], 1, 1, 0)).errorCode());
        assertEquals(MpiErrors.ERR_BUFFER, assertThrows(MpiException.class, () -> mpi.recv((byte[]) null, 0, 0, 0)).errorCode());
        mpi.send(new byte[0], 0, 0, 0);
        assertTrue(proxySide.fromRank().isEmpty());
    }

    @Test
    void shouldRefuseCallsAfterClose() {
        mpi.close();
        mpi.close();

        assertEquals(MpiErrors.ERR_OTHER, assertThrows(MpiException.class, () -> mpi.send(new int[1], 0, 1, 0)).errorCode());
        assertEquals(0, mpi.exitStatuses().length);
    }

    @Test
    void shouldFailWithIoErrorWhenTheChannelFileIsMissing() {
        MpiException e = assertThrows(MpiException.class,
                () -> Mpi.init(new String[] {"--slave", dir.resolve("nope.chan").toString(), "1", "2"}));

        assertEquals(MpiErrors.ERR_IO, e.errorCode());
    }
}
