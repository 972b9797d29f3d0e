package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.MessageRing;

/** Tag words, single-record reads and marks (channel layout 1.1). */
class TaggedRecordsTest {

    private static final int INT = 3;

    @TempDir
    Path dir;

    private MappedRankChannel channel;
    private MappedMessageRing ring;
    private final ByteBuffer src = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer dst = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);

    @BeforeEach
    void createRing() throws IOException {
        channel = MappedRankChannel.create(dir.resolve("rank-1.chan"), 4096, 7L, 1);
        ring = channel.toRank();
        for (int i = 0; i < 100; i++) {
            src.putInt(4 * i, i);
        }
    }

    @AfterEach
    void closeChannel() {
        channel.close();
    }

    @Test
    void shouldKeepTagWordsAndStopAtRecordBoundaries() {
        assertTrue(ring.offer(INT, 3, 5 | MessageRing.MORE_RECORDS, src, 0, 12));
        assertTrue(ring.offer(INT, 2, 5, src, 12, 8));
        assertTrue(ring.offer(INT, 4, 9, src, 20, 16));
        assertEquals(5 | MessageRing.MORE_RECORDS, ring.peekTagWord());
        assertEquals(3, ring.headRecordElements());
        assertEquals(2, ring.pollRecord(INT, dst, 0, 2));
        assertEquals(1, ring.headRecordElements());
        assertEquals(1, ring.pollRecord(INT, dst, 8, 10));
        assertEquals(5, ring.peekTagWord());
        assertEquals(2, ring.headRecordElements());
        assertEquals(2, ring.pollRecord(INT, dst, 12, 10));
        assertEquals(9, ring.peekTagWord());
        assertEquals(4, ring.pollRecord(INT, dst, 20, 10));
        for (int i = 0; i < 9; i++) {
            assertEquals(i, dst.getInt(4 * i));
        }
        assertEquals(0, ring.peekTagWord());
        assertEquals(0, ring.headRecordElements());
        assertEquals(0, ring.pollRecord(INT, dst, 0, 10));
    }

    @Test
    void shouldZeroTagWordsOfConsumedRecordsSoUntaggedRecordsReadAsTagZero() {
        for (int round = 0; round < 600; round++) {
            assertTrue(ring.offer(INT, 10, round % 2 == 0 ? 77 : 0, src, 0, 40), "round " + round);
            assertEquals(round % 2 == 0 ? 77 : 0, ring.peekTagWord(), "round " + round);
            assertEquals(10, ring.headRecordElements());
            assertEquals(10, ring.pollRecord(INT, dst, 0, 10));
        }
    }

    @Test
    void shouldReportTypeMismatchWithoutConsuming() {
        assertTrue(ring.offer(INT, 1, 3, src, 0, 4));
        assertEquals(MessageRing.TYPE_MISMATCH, ring.pollRecord(12, dst, 0, 1));
        assertEquals(1, ring.pollRecord(INT, dst, 0, 1));
    }

    @Test
    void shouldKeepMarksForANewInstance() throws IOException {
        ring.producerMark(41);
        channel.fromRank().consumerMark(17);
        try (MappedRankChannel again = MappedRankChannel.map(dir.resolve("rank-1.chan"))) {
            assertEquals(41, again.toRank().producerMark());
            assertEquals(17, again.fromRank().consumerMark());
            assertEquals(0, again.toRank().consumerMark());
        }
    }
}
