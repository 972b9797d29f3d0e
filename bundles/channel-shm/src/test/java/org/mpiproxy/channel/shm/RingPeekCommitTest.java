package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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

/** The consumer's read-ahead cursor: peek without releasing, commit what was acknowledged. */
class RingPeekCommitTest {

    private static final int INT = 3;
    private static final int DOUBLE = 12;
    private static final int CAPACITY = 4096;

    @TempDir
    Path dir;

    private MappedRankChannel channel;
    private MappedMessageRing ring;
    private final ByteBuffer src = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer dst = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private int nextValue;
    private int expectedValue;

    @BeforeEach
    void createRing() throws IOException {
        channel = MappedRankChannel.create(dir.resolve("rank-1.chan"), CAPACITY, 7L, 1);
        ring = channel.fromRank();
    }

    @AfterEach
    void closeChannel() {
        channel.close();
    }

    /** Offers {@code count} consecutive ints as one record. */
    private boolean offerInts(MessageRing r, int count, int tagWord) {
        for (int i = 0; i < count; i++) {
            src.putInt(4 * i, nextValue + i);
        }
        boolean stored = r.offer(INT, count, tagWord, src, 0, 4 * count);
        if (stored) {
            nextValue += count;
        }
        return stored;
    }

    /** Peeks up to {@code max} ints of the record at the cursor and checks they continue the sequence. */
    private int peekInts(MessageRing r, int max) {
        int n = r.peekRecord(INT, dst, 0, max);
        for (int i = 0; i < n; i++) {
            assertEquals(expectedValue + i, dst.getInt(4 * i), "element " + (expectedValue + i));
        }
        expectedValue += Math.max(0, n);
        return n;
    }

    @Test
    void shouldPeekWithoutReleasingAndReleaseOnCommit() {
        assertTrue(offerInts(ring, 10, 5 | MessageRing.MORE_RECORDS));
        assertTrue(offerInts(ring, 4, 6));
        int freeBefore = ring.freeBytes();
        long start = ring.peekPosition();
        assertEquals(0, start);
        assertEquals(INT, ring.peekNextDatatype());
        assertEquals(5 | MessageRing.MORE_RECORDS, ring.peekNextTagWord());
        assertEquals(10, ring.peekNextElements());
        assertEquals(3, peekInts(ring, 3));
        long afterThree = ring.peekPosition();
        assertEquals(7, ring.peekNextElements());
        assertEquals(7, peekInts(ring, 100), "one record at a time");
        assertEquals(6, ring.peekNextTagWord());
        assertEquals(4, peekInts(ring, 100));
        assertEquals(MessageRing.EMPTY, ring.peekNextDatatype());
        assertEquals(0, ring.peekRecord(INT, dst, 0, 10));

        // nothing released: same free space, same head, the records are still there for poll
        assertEquals(freeBefore, ring.freeBytes());
        assertEquals(0, ring.headPosition());
        assertFalse(ring.isEmpty());

        ring.commit(afterThree);
        assertEquals(0, ring.headPosition());
        assertEquals(12, ring.headRecordOffset(), "three ints of the head record released");
        assertEquals(7, ring.headRecordElements());
        ring.commit(ring.peekPosition());
        assertTrue(ring.isEmpty());
        assertEquals(CAPACITY - RingDescriptor.END_MARK_LENGTH, ring.freeBytes());
    }

    @Test
    void shouldRefuseCommitsOutsideWhatWasPeekedOrInsideAnElement() {
        assertTrue(offerInts(ring, 4, 0));
        assertThrows(IllegalArgumentException.class, () -> ring.commit(8), "not peeked yet");
        assertEquals(2, peekInts(ring, 2));
        assertThrows(IllegalArgumentException.class, () -> ring.commit(6), "inside an element");
        ring.commit(8);
        assertThrows(IllegalArgumentException.class, () -> ring.commit(4), "before the released head");
        assertEquals(8, ring.headRecordOffset());
    }

    @Test
    void shouldRewindToTheReleasedHead() {
        assertTrue(offerInts(ring, 6, 0));
        assertEquals(2, peekInts(ring, 2));
        ring.commit(ring.peekPosition());
        assertEquals(4, peekInts(ring, 4));
        ring.rewindPeek();
        expectedValue = 2;
        assertEquals(4, ring.peekNextElements());
        assertEquals(4, peekInts(ring, 10));
    }

    @Test
    void shouldSkipPaddingAndWrapAroundWhilePeekingAndCommitting() {
        // records of 16 + 400 bytes: the tenth does not fit before the end of the 4096-byte area
        for (int round = 0; round < 40; round++) {
            int stored = 0;
            while (offerInts(ring, 100, round)) {
                stored++;
            }
            assertTrue(stored > 0, "space after the commit of round " + (round - 1));
            long acknowledged = ring.peekPosition();
            for (int i = 0; i < stored; i++) {
                assertEquals(INT, ring.peekNextDatatype());
                assertEquals(round, ring.peekNextTagWord());
                assertEquals(60, peekInts(ring, 60));
                if (i == stored / 2) {
                    acknowledged = ring.peekPosition();
                }
                assertEquals(40, peekInts(ring, 60));
            }
            assertEquals(MessageRing.EMPTY, ring.peekNextDatatype());
            // release only up to the middle of a record, then the rest in a later round
            ring.commit(acknowledged);
            assertFalse(ring.isEmpty());
            ring.commit(ring.peekPosition());
            assertTrue(ring.isEmpty());
        }
        assertEquals(nextValue, expectedValue);
        assertTrue(ring.tailPosition() > 8L * CAPACITY, "wrapped around several times");
    }

    @Test
    void shouldRefuseAnotherDatatypeAtTheCursorWithoutMovingIt() {
        assertTrue(offerInts(ring, 2, 0));
        src.putDouble(0, 1.5);
        assertTrue(ring.offer(DOUBLE, 1, src, 0, 8));
        assertEquals(2, peekInts(ring, 5));
        assertEquals(MessageRing.TYPE_MISMATCH, ring.peekRecord(INT, dst, 0, 5));
        assertEquals(DOUBLE, ring.peekNextDatatype());
        assertEquals(1, ring.peekRecord(DOUBLE, dst, 0, 5));
        assertEquals(1.5, dst.getDouble(0));
    }

    @Test
    void shouldLetANewConsumerReadAgainWhatWasPeekedButNotCommitted() throws IOException {
        MappedMessageRing producer = ring;
        for (int round = 0; round < 30; round++) {
            while (offerInts(producer, 37, 0)) {
                // fill: wraps around with padding records in later rounds
            }
            // a consumer peeks everything, releases a part and is dropped (a refreshed bundle)
            MappedRankChannel oldMapping = MappedRankChannel.map(channel.path());
            MappedMessageRing old = oldMapping.fromRank();
            int start = expectedValue;
            long middle = -1;
            int peekedElements = 0;
            while (old.peekNextDatatype() != MessageRing.EMPTY) {
                peekedElements += peekInts(old, 25);
                if (middle < 0 && peekedElements >= 100) {
                    middle = old.peekPosition();
                    start = expectedValue;
                }
            }
            old.commit(middle);
            old.consumerMark(round);
            oldMapping.close();
            // a new consumer starts at the released head and reads exactly the rest again
            MappedRankChannel freshMapping = MappedRankChannel.map(channel.path());
            MappedMessageRing fresh = freshMapping.fromRank();
            assertEquals(round, fresh.consumerMark());
            assertEquals(middle, fresh.peekPosition());
            expectedValue = start;
            while (fresh.peekNextDatatype() != MessageRing.EMPTY) {
                peekInts(fresh, 1000);
            }
            assertEquals(nextValue, expectedValue, "every element after the commit once, in order");
            fresh.commit(fresh.peekPosition());
            assertTrue(fresh.isEmpty());
            freshMapping.close();
        }
        assertTrue(ring.tailPosition() > 8L * CAPACITY, "wrapped around several times");
    }

    @Test
    void shouldRestartTheCursorAfterAPollPassedIt() {
        assertTrue(offerInts(ring, 4, 0));
        assertTrue(offerInts(ring, 4, 0));
        assertEquals(2, peekInts(ring, 2));
        assertEquals(6, ring.poll(INT, dst, 0, 6));
        assertEquals(32 + 8, ring.peekPosition(), "the second record (at 32) with two ints taken");
        expectedValue = 6;
        assertEquals(2, peekInts(ring, 10));
    }
}
