package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Derived datatypes on worlds of several ranks, each checked against the same layout computed
 * here, sequentially, from MPI's definitions: the elements a type selects arrive where the
 * receiving type places them, and nowhere else.
 */
class DatatypeTest {

    private static final int ROWS = 4;
    private static final int COLUMNS = 5;

    static final class Programs {

        /** Column 2 of a 4x5 row-major matrix, into column 1 of a 4x3 one, and as 4 plain doubles. */
        static Object column(Intracomm world) throws MPIException {
            Datatype column5 = Datatype.createVector(ROWS, 1, COLUMNS, MPI.DOUBLE);
            column5.commit();
            Datatype column3 = Datatype.createVector(ROWS, 1, 3, MPI.DOUBLE);
            column3.commit();
            if (world.getRank() == 0) {
                double[] a = new double[ROWS * COLUMNS];
                for (int i = 0; i < a.length; i++) {
                    a[i] = 10 * (i / COLUMNS) + i % COLUMNS;
                }
                world.send(MPI.slice(a, 2), 1, column5, 1, 0);
                world.send(MPI.slice(a, 2), 1, column5, 1, 1);
                return null;
            }
            double[] b = new double[ROWS * 3];
            Arrays.fill(b, -1);
            Status s = world.recv(MPI.slice(b, 1), 1, column3, 0, 0);
            double[] plain = new double[ROWS];
            world.recv(plain, ROWS, MPI.DOUBLE, 0, 1);
            return List.of(b, plain, s.getCount(column3), s.getElements(column3), s.getCount(MPI.DOUBLE));
        }

        static final int[] LENGTHS = {2, 3, 1};
        static final int[] DISPLS = {0, 5, 12};

        /** Two elements of an indexed type with holes, into the same type and as plain ints. */
        static Object indexed(Intracomm world) throws MPIException {
            Datatype t = Datatype.createIndexed(LENGTHS, DISPLS, MPI.INT);
            t.commit();
            if (world.getRank() == 0) {
                int[] src = new int[26];
                for (int i = 0; i < src.length; i++) {
                    src[i] = 100 + i;
                }
                world.send(src, 2, t, 1, 0);
                world.send(src, 2, t, 1, 1);
                return List.of(t.getLb(), t.getExtent(), t.getSize(), t.getTrueLb(), t.getTrueExtent());
            }
            int[] dst = new int[26];
            Arrays.fill(dst, -1);
            world.recv(dst, 2, t, 0, 0);
            int[] plain = new int[12];
            world.recv(plain, 12, MPI.INT, 0, 1);
            return List.of(dst, plain);
        }

        /** Three ints 12 bytes apart in a direct ByteBuffer, into ints 8 bytes apart of another. */
        static Object hvector(Intracomm world) throws MPIException {
            Datatype wide = Datatype.createHVector(3, 1, 12, MPI.INT);
            wide.commit();
            Datatype narrow = Datatype.createHVector(3, 1, 8, MPI.INT);
            narrow.commit();
            ByteBuffer b = MPI.newByteBuffer(64);
            for (int i = 0; i < 16; i++) {
                b.putInt(4 * i, -1);
            }
            if (world.getRank() == 0) {
                b.putInt(0, 7).putInt(12, 8).putInt(24, 9);
                world.send(b, 1, wide, 1, 0);
                return List.of(wide.getExtent(), narrow.getExtent());
            }
            world.recv(b, 1, narrow, 0, 0);
            int[] ints = new int[16];
            for (int i = 0; i < 16; i++) {
                ints[i] = b.getInt(4 * i);
            }
            return ints;
        }

        /** A particle: an int id and a double mass at 8, as a C struct. */
        static final class Particle extends Struct {
            final int id = addInt();
            final int mass = setOffset(8).addDouble();

            @Override
            protected Data newData() {
                return new Data();
            }

            final class Data extends Struct.Data {
                int id() {
                    return getInt(id);
                }

                double mass() {
                    return getDouble(mass);
                }

                void set(int i, double m) {
                    putInt(id, i);
                    putDouble(mass, m);
                }
            }
        }

        /** Three particles of a Struct over ByteBuffers, and the bounds of two createStruct types. */
        static Object struct(Intracomm world) throws MPIException {
            Particle p = new Particle();
            ByteBuffer b = MPI.newByteBuffer(3 * p.getExtent());
            List<Object> facts = new ArrayList<>();
            if (world.getRank() == 0) {
                for (int i = 0; i < 3; i++) {
                    Particle.Data d = p.getData(b, i);
                    d.set(10 + i, 0.5 * i);
                }
                world.send(b, 3, p.getType(), 1, 0);
                Datatype intDouble = Datatype.createStruct(new int[] {1, 1}, new int[] {0, 8},
                        new Datatype[] {MPI.INT, MPI.DOUBLE});
                Datatype doubleInt = Datatype.createStruct(new int[] {1, 1}, new int[] {0, 8},
                        new Datatype[] {MPI.DOUBLE, MPI.INT});
                for (Datatype t : new Datatype[] {intDouble, doubleInt}) {
                    facts.addAll(List.of(t.getLb(), t.getExtent(), t.getSize(), t.getTrueLb(), t.getTrueExtent()));
                }
                facts.add(p.getExtent());
                return facts;
            }
            Status s = world.recv(b, 3, p.getType(), 0, 0);
            for (int i = 0; i < 3; i++) {
                Particle.Data d = p.getData(b, i);
                facts.add(d.id());
                facts.add(d.mass());
            }
            facts.add(s.getCount(p.getType()));
            facts.add(s.getElements(p.getType()));
            return facts;
        }

        /** The bounds and sizes of types made from others, resized ones among them (no communication). */
        static Object bounds(Intracomm world) throws MPIException {
            List<Integer> facts = new ArrayList<>();
            Datatype v = Datatype.createVector(3, 2, 4, MPI.INT);
            Datatype r = Datatype.createResized(v, -4, 48);
            Datatype c = Datatype.createContiguous(2, r);
            Datatype block = Datatype.createIndexedBlock(2, new int[] {0, 3, 7}, MPI.INT);
            Datatype h = Datatype.createHIndexed(new int[] {1, 2}, new int[] {0, 16}, MPI.DOUBLE);
            Datatype d = c.dup();
            for (Datatype t : new Datatype[] {MPI.INT, MPI.DOUBLE_INT, MPI.FLOAT_COMPLEX, v, r, c, block, h, d}) {
                facts.addAll(List.of(t.getLb(), t.getExtent(), t.getSize(), t.getTrueLb(), t.getTrueExtent()));
            }
            return facts;
        }

        /** Pack a vector of ints and two doubles, send as MPI.PACKED, unpack into another layout. */
        static Object pack(Intracomm world) throws MPIException {
            Datatype everyOther = Datatype.createVector(3, 1, 2, MPI.INT);
            everyOther.commit();
            int size = world.packSize(1, everyOther) + world.packSize(2, MPI.DOUBLE);
            if (world.getRank() == 0) {
                byte[] packed = new byte[size];
                int at = world.pack(new int[] {1, -1, 2, -1, 3}, 1, everyOther, packed, 0);
                int end = world.pack(new double[] {0.25, 4.5}, 2, MPI.DOUBLE, packed, at);
                world.send(packed, end, MPI.PACKED, 1, 0);
                // the same bytes, unpacked here: a round trip
                int[] back = new int[3];
                int next = world.unpack(packed, 0, back, 3, MPI.INT);
                return List.of(size, at, end, back, next);
            }
            byte[] packed = new byte[size];
            Status s = world.recv(packed, size, MPI.PACKED, 0, 0);
            int[] ints = new int[5];
            Arrays.fill(ints, -1);
            int at = world.unpack(packed, 0, ints, 1, everyOther);
            double[] doubles = new double[2];
            int end = world.unpack(packed, at, doubles, 2, MPI.DOUBLE);
            return List.of(s.getCount(MPI.PACKED), ints, doubles, end);
        }

        /** Four ints into room for two elements of three ints: a partial receive. */
        static Object partial(Intracomm world) throws MPIException {
            Datatype three = Datatype.createContiguous(3, MPI.INT);
            three.commit();
            if (world.getRank() == 0) {
                world.send(new int[] {5, 6, 7, 8}, 4, MPI.INT, 1, 0);
                return null;
            }
            int[] into = new int[6];
            Arrays.fill(into, -1);
            Status s = world.recv(into, 2, three, 0, 0);
            return List.of(s.getCount(three), s.getElements(three), s.getCount(MPI.INT), into);
        }

        /** A rank's three DOUBLE_INT values; ties on element 1 at 3.0 (ranks 1, 3) and 7.0 (ranks 0, 2). */
        static double value(int rank, int i) {
            return switch (i) {
                case 0 -> rank * 1.5;
                case 1 -> rank % 2 == 0 ? 7.0 : 3.0;
                default -> -rank;
            };
        }

        static Object minMaxLoc(Intracomm world) throws MPIException {
            int rank = world.getRank();
            ByteBuffer mine = MPI.newByteBuffer(3 * 16);
            for (int i = 0; i < 3; i++) {
                DoubleInt.Data d = MPI.doubleInt.getData(mine, i);
                d.putValue(value(rank, i));
                d.putIndex(rank);
            }
            ByteBuffer min = MPI.newByteBuffer(3 * 16);
            ByteBuffer max = MPI.newByteBuffer(3 * 16);
            world.allReduce(mine, min, 3, MPI.DOUBLE_INT, MPI.MINLOC);
            world.reduce(mine, max, 3, MPI.DOUBLE_INT, MPI.MAXLOC, 0);
            double[] result = new double[12];
            for (int i = 0; i < 3; i++) {
                DoubleInt.Data lo = MPI.doubleInt.getData(min, i);
                DoubleInt.Data hi = MPI.doubleInt.getData(max, i);
                result[2 * i] = lo.getValue();
                result[2 * i + 1] = lo.getIndex();
                result[6 + 2 * i] = hi.getValue();
                result[6 + 2 * i + 1] = hi.getIndex();
            }
            return result;
        }

        /**
         * bcast of a column from rank 1, received as plain doubles; gather of each rank's two ints into
         * column {@code rank} of the root's 2 x size matrix (a column type resized to one int).
         */
        static Object collectives(Intracomm world) throws MPIException {
            int n = world.getSize();
            int rank = world.getRank();
            Datatype column = Datatype.createVector(3, 1, 3, MPI.DOUBLE);
            column.commit();
            double[] got = new double[3];
            if (rank == 1) {
                double[] m = {1, 2, 3, 4, 5, 6, 7, 8, 9};
                world.bcast(m, 1, column, 1);
            } else {
                world.bcast(got, 3, MPI.DOUBLE, 1);
            }
            Datatype slot = Datatype.createResized(Datatype.createVector(2, 1, n, MPI.INT), 0, 4);
            slot.commit();
            int[] matrix = new int[2 * n];
            world.gather(new int[] {rank, 10 * rank}, 2, MPI.INT, matrix, 1, slot, 0);
            // non-blocking too: iBcast of a column of a DoubleBuffer
            java.nio.DoubleBuffer cols = MPI.newDoubleBuffer(9);
            if (rank == 0) {
                for (int i = 0; i < 9; i++) {
                    cols.put(i, i);
                }
            }
            world.iBcast(MPI.slice(cols, 2), 1, column, 0).waitFor();
            return List.of(got, matrix, new double[] {cols.get(2), cols.get(5), cols.get(8), cols.get(0)});
        }
    }

    @Test
    void shouldSendAColumnOfOneMatrixIntoAColumnOfAnotherAndAsPlainElements() throws Exception {
        Object[] got = ((List<?>) World.values(2, Programs.class, "column").get(1)).toArray();
        double[] expected = new double[ROWS * 3];
        Arrays.fill(expected, -1);
        double[] plain = new double[ROWS];
        for (int i = 0; i < ROWS; i++) {
            expected[i * 3 + 1] = 10 * i + 2;
            plain[i] = 10 * i + 2;
        }
        assertArrayEquals(expected, (double[]) got[0]);
        assertArrayEquals(plain, (double[]) got[1]);
        assertEquals(List.of(1, ROWS, ROWS), List.of(got[2], got[3], got[4]));
    }

    @Test
    void shouldMoveOnlyTheBlocksOfAnIndexedTypeLeavingItsHolesAlone() throws Exception {
        List<Object> v = World.values(2, Programs.class, "indexed");
        // the typemap, sequentially: block i at DISPLS[i], LENGTHS[i] long; element 2 one extent on
        int extent = Programs.DISPLS[2] + Programs.LENGTHS[2];
        int[] dst = new int[26];
        Arrays.fill(dst, -1);
        int[] plain = new int[12];
        int k = 0;
        for (int e = 0; e < 2; e++) {
            for (int b = 0; b < 3; b++) {
                for (int j = 0; j < Programs.LENGTHS[b]; j++) {
                    int at = e * extent + Programs.DISPLS[b] + j;
                    dst[at] = 100 + at;
                    plain[k++] = 100 + at;
                }
            }
        }
        assertEquals(List.of(0, extent, 6, 0, extent), v.get(0));
        List<?> got = (List<?>) v.get(1);
        assertArrayEquals(dst, (int[]) got.get(0));
        assertArrayEquals(plain, (int[]) got.get(1));
    }

    @Test
    void shouldSpreadAnHVectorOverAByteBufferByByteStrides() throws Exception {
        List<Object> v = World.values(2, Programs.class, "hvector");
        // extents in ints: (2 * 12 + 4) / 4 and (2 * 8 + 4) / 4
        assertEquals(List.of(7, 5), v.get(0));
        int[] expected = new int[16];
        Arrays.fill(expected, -1);
        expected[0] = 7;
        expected[2] = 8;
        expected[4] = 9;
        assertArrayEquals(expected, (int[]) v.get(1));
    }

    @Test
    void shouldSendStructsOfIntAndDoubleAndPadTheirExtentToTheDoubleAlignment() throws Exception {
        List<Object> v = World.values(2, Programs.class, "struct");
        // int@0 + double@8: ub 16; double@0 + int@8: ub 12 rounded up to 16 (epsilon), true extent 12
        assertEquals(List.of(0, 16, 12, 0, 16, 0, 16, 12, 0, 12, 16), v.get(0));
        assertEquals(List.of(10, 0.0, 11, 0.5, 12, 1.0, 3, 6), v.get(1));
    }

    @Test
    void shouldGiveTheBoundsAndSizesOfTheStandardInUnitsOfTheBase() throws Exception {
        List<?> f = (List<?>) World.values(1, Programs.class, "bounds").get(0);
        List<Integer> expected = new ArrayList<>();
        // {lb, extent, size, trueLb, trueExtent}, computed from the typemaps in bytes, divided by the base's size
        expected.addAll(List.of(0, 1, 1, 0, 1)); // MPI.INT
        expected.addAll(List.of(0, 16, 12, 0, 12)); // MPI.DOUBLE_INT: bytes, as Open MPI (a C struct, 4 bytes padding)
        expected.addAll(List.of(0, 2, 2, 0, 2)); // MPI.FLOAT_COMPLEX: floats
        int vUb = 2 * 4 * 4 + 2 * 4; // ints at bytes 0,4,16,20,32,36: ub 40
        expected.addAll(List.of(0, vUb / 4, 6, 0, vUb / 4));
        expected.addAll(List.of(-1, 48 / 4, 6, 0, vUb / 4)); // resized: lb -4, extent 48 bytes
        int cLb = -4;
        int cUb = 48 + (-4 + 48); // second copy one extent (48) on, its ub at 48 + 44
        int cTrueUb = 48 + vUb;
        expected.addAll(List.of(cLb / 4, (cUb - cLb) / 4, 12, 0, cTrueUb / 4));
        expected.addAll(List.of(0, 9, 6, 0, 9)); // indexed block of 2 at 0, 3, 7
        expected.addAll(List.of(0, 4, 3, 0, 4)); // hindexed: 1 double at 0, 2 at byte 16: ub 32 bytes
        expected.addAll(List.of(cLb / 4, (cUb - cLb) / 4, 12, 0, cTrueUb / 4)); // dup of the contiguous
        assertEquals(expected, f);
    }

    @Test
    void shouldPackSendAsPackedAndUnpackIntoAnotherLayout() throws Exception {
        List<Object> v = World.values(2, Programs.class, "pack");
        List<?> root = (List<?>) v.get(0);
        assertEquals(List.of(28, 12, 28), root.subList(0, 3));
        assertArrayEquals(new int[] {1, 2, 3}, (int[]) root.get(3));
        assertEquals(12, root.get(4));
        List<?> other = (List<?>) v.get(1);
        assertEquals(28, other.get(0));
        assertArrayEquals(new int[] {1, -1, 2, -1, 3}, (int[]) other.get(1));
        assertArrayEquals(new double[] {0.25, 4.5}, (double[]) other.get(2));
        assertEquals(28, other.get(3));
    }

    @Test
    void shouldCountTheBasicElementsOfAPartialReceive() throws Exception {
        List<?> got = (List<?>) World.values(2, Programs.class, "partial").get(1);
        assertEquals(List.of(MPI.UNDEFINED, 4, 4), got.subList(0, 3));
        assertArrayEquals(new int[] {5, 6, 7, 8, -1, -1}, (int[]) got.get(3));
    }

    @Test
    void shouldFindMinlocAndMaxlocOfDoubleIntPairsOverFourRanks() throws Exception {
        List<Object> v = World.values(4, Programs.class, "minMaxLoc");
        double[] expected = new double[12];
        for (int i = 0; i < 3; i++) {
            double min = Double.POSITIVE_INFINITY;
            double max = Double.NEGATIVE_INFINITY;
            int minAt = -1;
            int maxAt = -1;
            for (int r = 0; r < 4; r++) { // ascending ranks: a tie keeps the smaller index
                double x = Programs.value(r, i);
                if (x < min) {
                    min = x;
                    minAt = r;
                }
                if (x > max) {
                    max = x;
                    maxAt = r;
                }
            }
            expected[2 * i] = min;
            expected[2 * i + 1] = minAt;
            expected[6 + 2 * i] = max;
            expected[6 + 2 * i + 1] = maxAt;
        }
        assertArrayEquals(expected, (double[]) v.get(0));
        for (int r = 1; r < 4; r++) {
            assertArrayEquals(Arrays.copyOf(expected, 6), Arrays.copyOf((double[]) v.get(r), 6), "rank " + r);
        }
    }

    @Test
    void shouldUseDerivedTypesInBcastGatherAndIBcast() throws Exception {
        int n = 3;
        List<Object> v = World.values(n, Programs.class, "collectives");
        int[] matrix = new int[2 * n];
        for (int r = 0; r < n; r++) {
            matrix[r] = r;
            matrix[n + r] = 10 * r;
        }
        for (int r = 0; r < n; r++) {
            List<?> got = (List<?>) v.get(r);
            if (r != 1) {
                assertArrayEquals(new double[] {1, 4, 7}, (double[]) got.get(0), "rank " + r);
            }
            if (r == 0) {
                assertArrayEquals(matrix, (int[]) got.get(1));
            }
            // column 2 of the 3x3 DoubleBuffer of rank 0; element 0 stays as it was (0 everywhere)
            assertArrayEquals(new double[] {2, 5, 8, 0}, (double[]) got.get(2), "rank " + r);
        }
    }

    static final class BadPrograms {

        @FunctionalInterface
        interface Call {
            void run() throws MPIException;
        }

        static Object badTypes(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            MPI.COMM_WORLD.setErrhandler(MPI.ERRORS_RETURN);
            Datatype uncommitted = Datatype.createContiguous(2, MPI.INT);
            Datatype freed = Datatype.createContiguous(2, MPI.INT);
            freed.commit();
            freed.free();
            Datatype pair = Datatype.createContiguous(2, MPI.INT);
            pair.commit();
            Datatype mixed = Datatype.createStruct(new int[] {1, 1}, new int[] {0, 8},
                    new Datatype[] {MPI.INT, MPI.DOUBLE});
            mixed.commit();
            int peer = 1 - world.getRank();
            List<Call> calls = List.of(
                () -> world.send(new int[2], 1, uncommitted, peer, 0),
                () -> world.recv(new int[2], 1, freed, peer, 0),
                () -> MPI.INT.free(),
                () -> freed.free(),
                () -> Datatype.createVector(-1, 1, 1, MPI.INT),
                () -> Datatype.createIndexed(new int[] {1, 2}, new int[] {0}, MPI.INT),
                () -> Datatype.createContiguous(2, freed),
                () -> world.allReduce(new int[4], new int[4], 2, pair, MPI.SUM),
                () -> world.send(new double[4], 1, mixed, peer, 0),
                () -> world.pack(new int[4], 2, pair, new byte[8], 0),
                () -> world.send(new int[1], 1, MPI.DATATYPE_NULL, peer, 0),
                () -> world.send(new int[3], 2, pair, peer, 0),
                () -> world.packSize(1, uncommitted));
            List<Integer> classes = new ArrayList<>();
            for (Call c : calls) {
                try {
                    c.run();
                    classes.add(-1);
                } catch (MPIException e) {
                    classes.add(e.getErrorClass());
                }
            }
            classes.add(freed.isNull() ? 1 : 0);
            return classes;
        }

        /** An uncommitted type under the default handler: the rank ends with MPI_ERR_TYPE. */
        static Object fatalUncommitted(Intracomm world) throws MPIException {
            world.send(new int[2], 1, Datatype.createContiguous(2, MPI.INT), 1 - world.getRank(), 0);
            return "not ended";
        }
    }

    @Test
    void shouldRefuseBadTypesWithTheErrorClassesOfOpenMpi() throws Exception {
        List<Integer> expected = List.of(MPI.ERR_TYPE, MPI.ERR_TYPE, MPI.ERR_TYPE, MPI.ERR_TYPE, MPI.ERR_COUNT,
                MPI.ERR_ARG, MPI.ERR_TYPE, MPI.ERR_OP, MPI.ERR_TYPE, MPI.ERR_TRUNCATE, MPI.ERR_TYPE, MPI.ERR_BUFFER,
                MPI.ERR_TYPE, 1);
        for (Object o : World.values(2, BadPrograms.class, "badTypes")) {
            assertEquals(expected, o);
        }
    }

    @Test
    void shouldEndTheRankWithErrTypeForAnUncommittedTypeUnderTheDefaultHandler() throws Exception {
        for (World.Outcome o : World.run(2, BadPrograms.class, "fatalUncommitted")) {
            assertEquals(MPI.ERR_TYPE, o.endedStatus(), String.valueOf(o));
            assertTrue(o.endedMessage().contains("is not committed"), o.endedMessage());
        }
    }
}
