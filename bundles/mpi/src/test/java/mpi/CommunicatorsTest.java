package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Communicators from groups and the null objects on a world of five ranks: {@code create} (one
 * group, groups that do not overlap, the empty group), {@code compare}, {@code clone},
 * {@code free}, {@code split(MPI.UNDEFINED, key)} giving {@code MPI.COMM_NULL}, a message of no
 * elements from and into no buffer, {@code MPI.REQUEST_NULL}.
 */
class CommunicatorsTest {

    static final int SIZE = 5;

    static final class Programs {

        @FunctionalInterface
        interface Call {
            void run() throws MPIException;
        }

        static int classOf(Call c) {
            try {
                c.run();
                return MPI.SUCCESS;
            } catch (MPIException e) {
                return e.getErrorClass();
            }
        }

        static Object create(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int rank = world.getRank();
            List<Object> r = new ArrayList<>();
            Intracomm sub = world.create(world.getGroup().incl(new int[] {4, 0, 2}));
            if (sub.isNull()) {
                r.add(sub == MPI.COMM_NULL ? "MPI.COMM_NULL" : "another null communicator");
            } else {
                int[] all = new int[sub.getSize()];
                sub.allGather(new int[] {rank}, 1, MPI.INT, all, 1, MPI.INT);
                r.add(Arrays.toString(all) + " rank " + sub.getRank());
            }
            // each rank passes the group of the ranks of its parity: two communicators at once
            Intracomm half = world.create(world.getGroup().rangeIncl(new int[][] {{rank % 2, SIZE - 1, 2}}));
            int[] sum = new int[1];
            half.allReduce(new int[] {rank}, sum, 1, MPI.INT, MPI.SUM);
            r.add(new int[] {half.getSize(), half.getRank(), sum[0]});
            r.add(world.create(MPI.GROUP_EMPTY) == MPI.COMM_NULL);
            r.add(classOf(() -> half.create(world.getGroup())));
            return r;
        }

        static Object compare(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int rank = world.getRank();
            Intracomm dup = world.dup();
            Intracomm clone = world.clone();
            Comm base = clone;
            Comm baseClone = base.clone();
            int[] r = {Comm.compare(world, world), Comm.compare(world, dup), Comm.compare(clone, world),
                Comm.compare(world, world.split(0, -rank)), Comm.compare(world, world.split(rank % 2, 0)),
                Comm.compare(MPI.COMM_SELF, world.split(rank, 0)), Comm.compare(dup, clone),
                Comm.compare(baseClone, base), baseClone instanceof Intracomm ? 1 : 0};
            // a message on the clone never meets a receive on the world
            if (rank == 0) {
                int[] got = new int[2];
                Request onWorld = world.iRecv(java.nio.IntBuffer.wrap(got, 1, 1).slice(), 1, MPI.INT, 1, 0);
                clone.recv(got, 1, MPI.INT, 1, 0);
                onWorld.waitFor();
                return new int[][] {r, got};
            } else if (rank == 1) {
                clone.send(new int[] {11}, 1, MPI.INT, 0, 0);
                world.send(new int[] {22}, 1, MPI.INT, 0, 0);
            }
            return new int[][] {r, null};
        }

        static Object nulls(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int rank = world.getRank();
            List<Object> r = new ArrayList<>();
            Intracomm none = world.split(rank == 0 ? MPI.UNDEFINED : 0, 0);
            r.add(List.of(none.isNull(), none == MPI.COMM_NULL, classOf(none::getSize), classOf(none::barrier)));
            Intracomm copy = world.dup();
            copy.free();
            r.add(List.of(copy.isNull(), classOf(copy::free), classOf(copy::barrier), classOf(MPI.COMM_NULL::free),
                    classOf(MPI.COMM_SELF::free), world.isNull()));
            if (rank == 0) {
                world.send(null, 0, MPI.INT, 1, 7);
                world.iSend(null, 0, MPI.DOUBLE, 1, 8).waitFor();
            } else if (rank == 1) {
                Status s = world.recv(null, 0, MPI.INT, 0, 7);
                Status t = world.iRecv(null, 0, MPI.DOUBLE, 0, 8).waitStatus();
                r.add(new int[] {s.getSource(), s.getTag(), s.getCount(MPI.INT), t.getSource(), t.getTag(),
                    t.getCount(MPI.DOUBLE)});
            }
            MPI.REQUEST_NULL.waitFor();
            Request.waitAll(new Request[] {MPI.REQUEST_NULL, MPI.REQUEST_NULL});
            r.add(List.of(MPI.REQUEST_NULL.isNull(), MPI.REQUEST_NULL.test(),
                    Request.waitAny(new Request[] {MPI.REQUEST_NULL}) == MPI.UNDEFINED));
            world.barrier();
            return r;
        }
    }

    @Test
    void shouldCreateACommunicatorOfAGroupInTheGroupsOrderAndNullElsewhere() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "create");

        List<Integer> group = List.of(4, 0, 2);
        for (int rank = 0; rank < SIZE; rank++) {
            @SuppressWarnings("unchecked")
            List<Object> got = (List<Object>) ranks.get(rank);
            String at = "rank " + rank;
            String created = group.contains(rank) ? "[4, 0, 2] rank " + group.indexOf(rank) : "MPI.COMM_NULL";
            assertEquals(created, got.get(0), at);
            List<Integer> mine = new ArrayList<>();
            for (int q = rank % 2; q < SIZE; q += 2) {
                mine.add(q);
            }
            assertArrayEquals(new int[] {mine.size(), mine.indexOf(rank), mine.stream().mapToInt(i -> i).sum()},
                    (int[]) got.get(1), at);
            assertEquals(true, got.get(2), at);
            assertEquals(MPI.ERR_GROUP, got.get(3), at + ": a group beyond the communicator");
        }
    }

    @Test
    void shouldCompareCommunicatorsAsMpiDefines() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "compare");

        for (int rank = 0; rank < SIZE; rank++) {
            int[][] got = (int[][]) ranks.get(rank);
            assertArrayEquals(new int[] {MPI.IDENT, MPI.CONGRUENT, MPI.CONGRUENT, MPI.SIMILAR, MPI.UNEQUAL,
                MPI.CONGRUENT, MPI.CONGRUENT, MPI.CONGRUENT, 1}, got[0], "rank " + rank);
        }
        assertArrayEquals(new int[] {11, 22}, ((int[][]) ranks.get(0))[1]);
    }

    @Test
    void shouldGiveNullObjectsWhereOpenMpiDoes() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "nulls");

        for (int rank = 0; rank < SIZE; rank++) {
            @SuppressWarnings("unchecked")
            List<Object> got = (List<Object>) ranks.get(rank);
            String at = "rank " + rank;
            boolean undefined = rank == 0;
            assertEquals(undefined ? List.of(true, true, MPI.ERR_COMM, MPI.ERR_COMM)
                    : List.of(false, false, MPI.SUCCESS, MPI.SUCCESS), got.get(0), at);
            assertEquals(List.of(true, MPI.ERR_COMM, MPI.ERR_COMM, MPI.ERR_COMM, MPI.ERR_COMM, false), got.get(1), at);
            int at2 = 2;
            if (rank == 1) {
                assertArrayEquals(new int[] {0, 7, 0, 0, 8, 0}, (int[]) got.get(at2++), at);
            }
            assertEquals(List.of(true, true, true), got.get(at2), at);
        }
    }
}
