package org.mpiproxy.mpi.internal.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mpiproxy.protocol.MpiErrors;

/**
 * Every collective on groups of 1 to 8 ranks, every reduction on every kind it applies to,
 * checked against a sequential computation written out here element by element.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CollectivesTest {

    static final int COUNT = 3;

    /** Element i of rank r's contribution, as a long (integers, booleans) or a double. */
    static double value(Kind k, int r, int i) {
        switch (k) {
            case BOOLEAN: return (r + i) % 3 == 0 ? 1 : 0;
            case CHAR: return (r * 7919 + i * 31 + 60000) % 65536;
            case BYTE: case SHORT: case INT: case LONG: return ((r * 37 + i * 11) % 23) - 11;
            case FLOAT: case DOUBLE: return (((r * 37 + i * 11) % 5) - 2) * 0.5; // exact sums and products
            default: return (r * 13 + i * 7) % 5 - 2; // the value of a pair: ties on purpose
        }
    }

    /** Packs rank r's elements. */
    static ByteBuffer contribution(Kind k, int r, int count) {
        ByteBuffer b = ByteBuffer.allocate(k.size() * count).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            put(b, k, i, value(k, r, i), (long) value(k, r, i), r);
        }
        return b;
    }

    static void put(ByteBuffer b, Kind k, int i, double v, long l, int index) {
        int at = i * k.size();
        switch (k) {
            case BYTE, BOOLEAN -> b.put(at, (byte) l);
            case CHAR -> b.putChar(at, (char) l);
            case SHORT -> b.putShort(at, (short) l);
            case INT -> b.putInt(at, (int) l);
            case LONG -> b.putLong(at, l);
            case FLOAT -> b.putFloat(at, (float) v);
            case DOUBLE -> b.putDouble(at, v);
            case INT2 -> b.putInt(at, (int) l).putInt(at + 4, index);
            case SHORT_INT -> b.putShort(at, (short) l).putInt(at + 2, index);
            case LONG_INT -> b.putLong(at, l).putInt(at + 8, index);
            case FLOAT_INT -> b.putFloat(at, (float) v).putInt(at + 4, index);
            case DOUBLE_INT -> b.putDouble(at, v).putInt(at + 8, index);
            default -> throw new IllegalArgumentException(k.name());
        }
    }

    /** The sequential result of combining ranks from..to-1 with op, packed. */
    static ByteBuffer expected(Reduction op, Kind k, int from, int to) {
        ByteBuffer b = ByteBuffer.allocate(k.size() * COUNT).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < COUNT; i++) {
            double acc = value(k, from, i);
            long lacc = (long) acc;
            int index = from;
            for (int r = from + 1; r < to; r++) {
                double v = value(k, r, i);
                long l = (long) v;
                switch (op) {
                    case SUM -> { acc += v; lacc += l; }
                    case PROD -> { acc *= v; lacc *= l; }
                    case MAX -> { acc = Math.max(acc, v); lacc = Math.max(lacc, l); }
                    case MIN -> { acc = Math.min(acc, v); lacc = Math.min(lacc, l); }
                    case LAND -> lacc = lacc != 0 && l != 0 ? 1 : 0;
                    case LOR -> lacc = lacc != 0 || l != 0 ? 1 : 0;
                    case LXOR -> lacc = (lacc != 0) ^ (l != 0) ? 1 : 0;
                    case BAND -> lacc &= l;
                    case BOR -> lacc |= l;
                    case BXOR -> lacc ^= l;
                    case MINLOC -> { if (v < acc) { acc = v; index = r; } }
                    case MAXLOC -> { if (v > acc) { acc = v; index = r; } }
                    default -> throw new IllegalArgumentException(op.name());
                }
            }
            boolean floating = k == Kind.FLOAT || k == Kind.DOUBLE || k.isPair();
            put(b, k, i, floating ? acc : lacc, floating ? (long) acc : lacc, index);
        }
        return b;
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.capacity()];
        b.get(0, a);
        return a;
    }

    static List<Object[]> cases() {
        List<Object[]> cases = new ArrayList<>();
        for (Reduction op : Reduction.values()) {
            for (Kind k : Kind.values()) {
                if (op.appliesTo(k)) {
                    cases.add(new Object[] {op, k});
                }
            }
        }
        return cases;
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 5, 8})
    void reductionsOfEveryOperationOnEveryKindAgreeWithTheSequentialResult(int n) throws Exception {
        List<Object[]> cases = cases();
        assertEquals(4 * 7 + 3 * 6 + 3 * 5 + 2 * 5, cases.size());
        new RingWorld(n).runAll(c -> {
            int r = c.rank();
            for (Object[] x : cases) {
                Reduction op = (Reduction) x[0];
                Kind k = (Kind) x[1];
                String what = op + " on " + k + " over " + n;
                ByteBuffer mine = contribution(k, r, COUNT);
                ByteBuffer all = ByteBuffer.allocate(k.size() * COUNT).order(ByteOrder.LITTLE_ENDIAN);
                Collectives.allReduce(c, mine, all, COUNT, k, op);
                assertArrayEquals(bytes(expected(op, k, 0, n)), bytes(all), "allReduce " + what);
                int root = n - 1;
                ByteBuffer atRoot = ByteBuffer.allocate(k.size() * COUNT).order(ByteOrder.LITTLE_ENDIAN);
                Collectives.reduce(c, mine, atRoot, COUNT, k, op, root);
                if (r == root) {
                    assertArrayEquals(bytes(expected(op, k, 0, n)), bytes(atRoot), "reduce " + what);
                }
                ByteBuffer prefix = ByteBuffer.allocate(k.size() * COUNT).order(ByteOrder.LITTLE_ENDIAN);
                Collectives.scan(c, mine, prefix, COUNT, k, op);
                assertArrayEquals(bytes(expected(op, k, 0, r + 1)), bytes(prefix), "scan " + what);
                ByteBuffer before = ByteBuffer.allocate(k.size() * COUNT).order(ByteOrder.LITTLE_ENDIAN);
                Collectives.exScan(c, mine, before, COUNT, k, op);
                if (r > 0) {
                    assertArrayEquals(bytes(expected(op, k, 0, r)), bytes(before), "exScan " + what);
                }
            }
        });
    }

    @Test
    void anOperationOnAKindItDoesNotApplyToIsRefused() throws Exception {
        new RingWorld(2).runAll(c -> {
            CommFailure f = org.junit.jupiter.api.Assertions.assertThrows(CommFailure.class,
                    () -> Collectives.allReduce(c, contribution(Kind.DOUBLE, 0, 1), contribution(Kind.DOUBLE, 0, 1),
                            1, Kind.DOUBLE, Reduction.BAND));
            assertEquals(Reduction.ERR_OP, f.errorClass());
            assertEquals("MPI.BAND does not apply to MPI.DOUBLE", f.getMessage());
        });
    }

    /** A block of rank r for rank d: distinct in every byte that matters. */
    static int cell(int r, int d, int i) {
        return r * 1_000_000 + d * 1000 + i;
    }

    static ByteBuffer intsBuffer(int n) {
        return ByteBuffer.allocate(4 * n).order(ByteOrder.LITTLE_ENDIAN);
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8})
    void dataMovementCollectivesPutEveryBlockWhereItBelongs(int n) throws Exception {
        int b = 5;
        new RingWorld(n).runAll(c -> {
            int r = c.rank();
            for (int root : new int[] {0, n - 1, n / 2}) {
                // bcast
                ByteBuffer data = intsBuffer(b);
                if (r == root) {
                    for (int i = 0; i < b; i++) {
                        data.putInt(4 * i, cell(root, 0, i));
                    }
                }
                Collectives.bcast(c, data, 4 * b, Kind.INT, root);
                for (int i = 0; i < b; i++) {
                    assertEquals(cell(root, 0, i), data.getInt(4 * i), "bcast root " + root);
                }
                // gather
                ByteBuffer mine = intsBuffer(b);
                for (int i = 0; i < b; i++) {
                    mine.putInt(4 * i, cell(r, root, i));
                }
                ByteBuffer gathered = intsBuffer(b * n);
                Collectives.gather(c, mine, 4 * b, gathered, Kind.INT, root);
                if (r == root) {
                    for (int q = 0; q < n; q++) {
                        for (int i = 0; i < b; i++) {
                            assertEquals(cell(q, root, i), gathered.getInt(4 * (q * b + i)), "gather from " + q);
                        }
                    }
                }
                // scatter
                ByteBuffer blocks = intsBuffer(b * n);
                if (r == root) {
                    for (int q = 0; q < n; q++) {
                        for (int i = 0; i < b; i++) {
                            blocks.putInt(4 * (q * b + i), cell(root, q, i));
                        }
                    }
                }
                ByteBuffer part = intsBuffer(b);
                Collectives.scatter(c, blocks, 4 * b, part, Kind.INT, root);
                for (int i = 0; i < b; i++) {
                    assertEquals(cell(root, r, i), part.getInt(4 * i), "scatter to " + r);
                }
                // gatherv and scatterv: rank q has q + 1 elements, laid out backwards with a gap
                int[] counts = new int[n];
                int[] displs = new int[n];
                int at = 0;
                for (int q = n - 1; q >= 0; q--) {
                    counts[q] = 4 * (q + 1);
                    displs[q] = at;
                    at += counts[q] + 4;
                }
                ByteBuffer ragged = intsBuffer(r + 1);
                for (int i = 0; i <= r; i++) {
                    ragged.putInt(4 * i, cell(r, 9, i));
                }
                ByteBuffer v = ByteBuffer.allocate(at).order(ByteOrder.LITTLE_ENDIAN);
                Collectives.gatherv(c, ragged, 4 * (r + 1), v, counts, displs, Kind.INT, root);
                if (r == root) {
                    for (int q = 0; q < n; q++) {
                        for (int i = 0; i <= q; i++) {
                            assertEquals(cell(q, 9, i), v.getInt(displs[q] + 4 * i), "gatherv from " + q);
                        }
                    }
                }
                ByteBuffer back = intsBuffer(r + 1);
                Collectives.scatterv(c, v, counts, displs, back, 4 * (r + 1), Kind.INT, root);
                // the root's v holds everyone's blocks, so each rank gets its own back
                for (int i = 0; i <= r; i++) {
                    assertEquals(cell(r, 9, i), back.getInt(4 * i), "scatterv to " + r);
                }
            }
            // allGather and allGatherv
            ByteBuffer mine = intsBuffer(b);
            for (int i = 0; i < b; i++) {
                mine.putInt(4 * i, cell(r, 0, i));
            }
            ByteBuffer everyone = intsBuffer(b * n);
            Collectives.allGather(c, mine, 4 * b, everyone, Kind.INT);
            for (int q = 0; q < n; q++) {
                for (int i = 0; i < b; i++) {
                    assertEquals(cell(q, 0, i), everyone.getInt(4 * (q * b + i)), "allGather of " + q);
                }
            }
            int[] counts = new int[n];
            int[] displs = new int[n];
            int at = 0;
            for (int q = 0; q < n; q++) {
                counts[q] = 4 * ((q % 3) + 1);
                displs[q] = at;
                at += counts[q];
            }
            ByteBuffer ragged = intsBuffer(r % 3 + 1);
            for (int i = 0; i <= r % 3; i++) {
                ragged.putInt(4 * i, cell(r, 5, i));
            }
            ByteBuffer all = ByteBuffer.allocate(at).order(ByteOrder.LITTLE_ENDIAN);
            Collectives.allGatherv(c, ragged, counts[r], all, counts, displs, Kind.INT);
            for (int q = 0; q < n; q++) {
                for (int i = 0; i <= q % 3; i++) {
                    assertEquals(cell(q, 5, i), all.getInt(displs[q] + 4 * i), "allGatherv of " + q);
                }
            }
            // allToAll and allToAllv
            ByteBuffer out = intsBuffer(b * n);
            for (int d = 0; d < n; d++) {
                for (int i = 0; i < b; i++) {
                    out.putInt(4 * (d * b + i), cell(r, d, i));
                }
            }
            ByteBuffer in = intsBuffer(b * n);
            Collectives.allToAll(c, out, 4 * b, in, Kind.INT);
            for (int q = 0; q < n; q++) {
                for (int i = 0; i < b; i++) {
                    assertEquals(cell(q, r, i), in.getInt(4 * (q * b + i)), "allToAll from " + q);
                }
            }
            // rank r sends (d + 1) elements to rank d
            int[] sc = new int[n];
            int[] sd = new int[n];
            int[] rc = new int[n];
            int[] rd = new int[n];
            int sAt = 0;
            int rAt = 0;
            for (int q = 0; q < n; q++) {
                sc[q] = 4 * (q + 1);
                sd[q] = sAt;
                sAt += sc[q];
                rc[q] = 4 * (r + 1);
                rd[q] = rAt;
                rAt += rc[q];
            }
            ByteBuffer vs = ByteBuffer.allocate(sAt).order(ByteOrder.LITTLE_ENDIAN);
            for (int d = 0; d < n; d++) {
                for (int i = 0; i <= d; i++) {
                    vs.putInt(sd[d] + 4 * i, cell(r, d, i));
                }
            }
            ByteBuffer vr = ByteBuffer.allocate(rAt).order(ByteOrder.LITTLE_ENDIAN);
            Collectives.allToAllv(c, vs, sc, sd, vr, rc, rd, Kind.INT);
            for (int q = 0; q < n; q++) {
                for (int i = 0; i <= r; i++) {
                    assertEquals(cell(q, r, i), vr.getInt(rd[q] + 4 * i), "allToAllv from " + q);
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 8})
    void noRankLeavesABarrierBeforeEveryRankReachedIt(int n) throws Exception {
        int rounds = 50;
        AtomicInteger[] arrived = new AtomicInteger[rounds];
        for (int i = 0; i < rounds; i++) {
            arrived[i] = new AtomicInteger();
        }
        new RingWorld(n).runAll(c -> {
            for (int i = 0; i < rounds; i++) {
                if ((c.rank() + i) % n == 0) {
                    Thread.sleep(2);
                }
                arrived[i].incrementAndGet();
                Collectives.barrier(c);
                assertEquals(n, arrived[i].get(), "round " + i);
            }
        });
    }

    @Test
    void collectivesOnASplitCommunicatorInvolveOnlyItsRanks() throws Exception {
        new RingWorld(8).runAll(c -> {
            Communicator part = c.split(c.rank() % 3, c.rank());
            ByteBuffer one = intsBuffer(1).putInt(0, c.rank());
            ByteBuffer sum = intsBuffer(1);
            Collectives.allReduce(part, one, sum, 1, Kind.INT, Reduction.SUM);
            int expected = 0;
            for (int q = c.rank() % 3; q < 8; q += 3) {
                expected += q;
            }
            assertEquals(expected, sum.getInt(0));
            ByteBuffer ranks = intsBuffer(part.size());
            Collectives.allGather(part, one, 4, ranks, Kind.INT);
            for (int i = 0; i < part.size(); i++) {
                assertEquals(c.rank() % 3 + 3 * i, ranks.getInt(4 * i));
            }
        });
    }

    @Test
    void aMismatchedCollectiveFailsNamingBothCalls() throws Exception {
        List<Throwable> failures = new RingWorld(2).run(2, c -> {
            ByteBuffer d = intsBuffer(2);
            if (c.rank() == 0) {
                Collectives.bcast(c, d, 8, Kind.INT, 0);
            } else {
                Collectives.reduce(c, d, intsBuffer(2), 2, Kind.INT, Reduction.SUM, 1);
            }
        });
        CommFailure f = (CommFailure) failures.get(1);
        assertEquals("rank 1: reduce with MPI.SUM (root 1) on communicator of 2 ranks (context 0) met bcast (root 0)"
                + " of rank 0 (every rank must call the same collectives in the same order, with the same root and"
                + " operation)", f.getMessage());
    }

    @Test
    void differentCountsInOneCollectiveFailWithTheCounts() throws Exception {
        List<Throwable> failures = new RingWorld(3).run(2, c -> {
            int count = c.rank() == 0 ? 4 : 8;
            Collectives.bcast(c, intsBuffer(8), 4 * count, Kind.INT, 0);
        });
        for (int r = 1; r < 3; r++) {
            CommFailure f = (CommFailure) failures.get(r);
            assertEquals(MpiErrors.ERR_COUNT, f.errorClass(), "rank " + r);
            assertTrue(f.getMessage().contains("sent 16 bytes, 32 expected (the ranks passed different counts)"),
                    f.getMessage());
        }
    }

    @Test
    void aRootThatDoesNotExistIsRefused() throws Exception {
        new RingWorld(2).runAll(c -> {
            CommFailure f = org.junit.jupiter.api.Assertions.assertThrows(CommFailure.class,
                    () -> Collectives.bcast(c, intsBuffer(1), 4, Kind.INT, 2));
            assertEquals(Collectives.ERR_ROOT, f.errorClass());
            assertEquals("bcast: root 2 does not exist (the communicator has 2 ranks)", f.getMessage());
        });
    }
}
