package org.mpiproxy.mpi.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mpiproxy.protocol.MpiErrors;

/** Point-to-point between ranks in threads, over small rings: MPI's matching and ordering. */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EngineTest {

    static ByteBuffer ints(int... values) {
        ByteBuffer m = Engine.newMessage(4 * values.length);
        for (int v : values) {
            m.putInt(v);
        }
        return m;
    }

    /** Receives ints into an array. */
    static Operation.Recv recvInts(Communicator c, int source, int tag, int[] into) {
        return c.irecv(source, tag, Kind.INT, 4 * into.length, (src, at, n) -> {
            for (int i = 0; i < n / 4; i++) {
                into[i] = src.getInt(at + 4 * i);
            }
        });
    }

    @Test
    void aTokenGoesRoundARingOfEightRanksAThousandTimes() throws Exception {
        int rounds = 1000;
        new RingWorld(8).runAll(c -> {
            int n = c.size();
            int r = c.rank();
            int[] token = new int[1];
            for (int round = 0; round < rounds; round++) {
                if (r == 0) {
                    c.engine().await(c.isend(ints(round * n), Kind.INT, 1, 7));
                    c.engine().await(recvInts(c, n - 1, 7, token));
                    assertEquals(round * n + n - 1, token[0], "round " + round);
                } else {
                    c.engine().await(recvInts(c, r - 1, 7, token));
                    assertEquals(round * n + r - 1, token[0]);
                    c.engine().await(c.isend(ints(token[0] + 1), Kind.INT, (r + 1) % n, 7));
                }
            }
        });
    }

    @Test
    void everyPairOfEightRanksExchangesWithEveryReceivePostedFirst() throws Exception {
        new RingWorld(8).runAll(c -> {
            int n = c.size();
            int r = c.rank();
            int[][] got = new int[n][3];
            Operation[] ops = new Operation[2 * n];
            for (int p = 0; p < n; p++) {
                ops[p] = recvInts(c, p, 100 + p, got[p]);
            }
            for (int p = 0; p < n; p++) {
                ops[n + p] = c.isend(ints(r, p, r * 1000 + p), Kind.INT, p, 100 + r);
            }
            c.engine().awaitAll(ops);
            for (int p = 0; p < n; p++) {
                assertEquals(List.of(p, r, p * 1000 + r), List.of(got[p][0], got[p][1], got[p][2]), "from " + p);
                assertEquals(p, ops[p].source());
                assertEquals(12, ops[p].bytes());
                assertEquals(0, ops[p].error());
            }
        });
    }

    @Test
    void anySourceAndAnyTagMatchAndMessagesOfOnePairNeverOvertake() throws Exception {
        int count = 200;
        new RingWorld(3).runAll(c -> {
            if (c.rank() == 0) {
                // tag 9 first, though every tag-5 message was sent before it
                int[] one = new int[1];
                Operation.Recv nine = recvInts(c, 1, 9, one);
                c.engine().await(nine);
                assertEquals(-1, one[0]);
                int next1 = 0;
                int next2 = 0;
                for (int i = 0; i < 2 * count; i++) {
                    Operation.Recv any = recvInts(c, Engine.ANY_SOURCE, Engine.ANY_TAG, one);
                    c.engine().await(any);
                    assertEquals(any.source() == 1 ? 5 : 6, any.tag());
                    assertEquals(any.source() == 1 ? next1++ : next2++, one[0], "from " + any.source());
                }
                assertEquals(count, next1);
                assertEquals(count, next2);
                assertNull(c.iprobe(Engine.ANY_SOURCE, Engine.ANY_TAG));
            } else {
                for (int i = 0; i < count; i++) {
                    c.engine().await(c.isend(ints(i), Kind.INT, 0, c.rank() == 1 ? 5 : 6));
                }
                if (c.rank() == 1) {
                    c.engine().await(c.isend(ints(-1), Kind.INT, 0, 9));
                }
            }
        });
    }

    @Test
    void aMegabyteGoesThroughFourKilobyteRingsIntact() throws Exception {
        int n = 1 << 18;
        new RingWorld(2).runAll(c -> {
            if (c.rank() == 1) {
                ByteBuffer m = Engine.newMessage(4 * n);
                for (int i = 0; i < n; i++) {
                    m.putInt(i * 31 + 7);
                }
                c.engine().await(c.isend(m, Kind.INT, 0, 1));
            } else {
                Arrived a = c.probe(1, 1);
                assertEquals(4 * n, a.bytes());
                int[] got = new int[n];
                c.engine().await(recvInts(c, 1, 1, got));
                for (int i = 0; i < n; i++) {
                    assertEquals(i * 31 + 7, got[i], "element " + i);
                }
            }
        });
    }

    @Test
    void aReceiveIntoASmallerBufferIsTruncateAndAMismatchedTypeIsType() throws Exception {
        new RingWorld(2).runAll(c -> {
            if (c.rank() == 1) {
                c.engine().await(c.isend(ints(1, 2, 3, 4), Kind.INT, 0, 3));
                ByteBuffer d = Engine.newMessage(8);
                d.putDouble(1.5);
                c.engine().await(c.isend(d, Kind.DOUBLE, 0, 4));
            } else {
                int[] two = new int[2];
                Operation.Recv r = recvInts(c, 1, 3, two);
                c.engine().await(r);
                assertEquals(MpiErrors.ERR_TRUNCATE, r.error());
                assertTrue(r.errorText().contains("16 bytes"), r.errorText());
                assertEquals(List.of(1, 2), List.of(two[0], two[1]));
                Operation.Recv t = recvInts(c, 1, 4, two);
                c.engine().await(t);
                assertEquals(MpiErrors.ERR_TYPE, t.error());
                assertTrue(t.errorText().contains("MPI.DOUBLE"), t.errorText());
            }
        });
    }

    @Test
    void aReceiveThatNeverMatchesFailsNamingTheRankAndTag() throws Exception {
        List<Throwable> failures = new RingWorld(2).run(1, c -> {
            if (c.rank() == 0) {
                c.engine().await(recvInts(c, 1, 42, new int[1]));
            }
        });
        assertNull(failures.get(1));
        CommFailure f = (CommFailure) failures.get(0);
        assertNotNull(f);
        assertEquals("rank 0: no message from rank 1 with tag 42 arrived within 1 s", f.getMessage());
    }

    @Test
    void aSendToARankThatDoesNotExistOrANegativeTagIsRefused() throws Exception {
        new RingWorld(2).runAll(c -> {
            CommFailure rank = assertThrows(CommFailure.class, () -> c.isend(ints(1), Kind.INT, 2, 0));
            assertEquals(MpiErrors.ERR_RANK, rank.errorClass());
            assertEquals("rank 2 does not exist (the communicator has 2)", rank.getMessage());
            CommFailure tag = assertThrows(CommFailure.class, () -> c.isend(ints(1), Kind.INT, 0, -4));
            assertEquals(MpiErrors.ERR_TAG, tag.errorClass());
            Operation.Recv nobody = recvInts(c, Communicator.PROC_NULL, 0, new int[1]);
            assertTrue(nobody.done());
            assertEquals(Communicator.PROC_NULL, nobody.source());
        });
    }

    @Test
    void aMessageToItselfAndCancelOfAPendingReceive() throws Exception {
        new RingWorld(1).runAll(c -> {
            int[] got = new int[1];
            Operation.Recv pending = recvInts(c, 0, 2, got);
            assertTrue(c.engine().cancel(pending));
            assertTrue(pending.cancelled());
            c.engine().await(c.isend(ints(77), Kind.INT, 0, 2));
            Operation.Recv r = recvInts(c, 0, 2, got);
            assertTrue(r.done());
            assertEquals(77, got[0]);
        });
    }

    @Test
    void aCommunicatorsOwnContextKeepsItsMessagesApart() throws Exception {
        new RingWorld(4).runAll(c -> {
            Communicator dup = c.dup();
            assertEquals(c.rank(), dup.rank());
            Communicator half = c.split(c.rank() % 2, -c.rank());
            assertEquals(2, half.size());
            // key -rank: the higher world rank comes first
            assertEquals(c.rank() < 2 ? 1 : 0, half.rank());
            int peer = 1 - half.rank();
            int[] a = new int[1];
            int[] b = new int[1];
            Operation.Recv onWorld = recvInts(c, Engine.ANY_SOURCE, 0, a);
            Operation.Recv onHalf = recvInts(half, peer, 0, b);
            c.engine().await(half.isend(ints(10 + c.rank()), Kind.INT, peer, 0));
            c.engine().await(onHalf);
            assertEquals(10 + half.worldRank(peer), b[0]);
            c.engine().await(c.isend(ints(20 + c.rank()), Kind.INT, (c.rank() + 1) % 4, 0));
            c.engine().await(onWorld);
            // posted before the other context's message arrived, yet it took only its own context's
            assertEquals(20 + (c.rank() + 3) % 4, a[0]);
            assertNull(c.split(Communicator.UNDEFINED, 0));
        });
    }

    @Test
    void theEnvelopeIsLittleEndianAtFixedOffsets() {
        ByteBuffer b = ByteBuffer.allocate(Envelope.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        Envelope.write(b, 0, 0x01020304, 5, 6, 7, Kind.DOUBLE);
        assertEquals(0x01020304, b.getInt(0));
        assertEquals(5, b.getInt(4));
        assertEquals(7, b.getInt(8));
        assertEquals(Kind.DOUBLE.code(), b.get(12));
        assertEquals(6, Envelope.destination(b));
    }
}
