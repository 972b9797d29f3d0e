package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Groups on a world of five ranks, each operation checked against the standard's definition
 * computed here on lists: ranks, translation, inclusion and exclusion by lists and by ranges,
 * union, intersection, difference, comparison, free.
 */
class GroupTest {

    static final int SIZE = 5;

    static final class Programs {

        /** @return the world ranks of {@code g}'s members, in group order */
        static int[] members(Group g, Group world) throws MPIException {
            int[] ranks = new int[g.getSize()];
            Arrays.setAll(ranks, i -> i);
            return Group.translateRanks(g, ranks, world);
        }

        static Object groups(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Group w = world.getGroup();
            List<Object> r = new ArrayList<>();
            r.add(new int[] {w.getSize(), w.getRank()});
            Group ex = w.excl(new int[] {1, 3});
            r.add(members(ex, w));
            r.add(ex.getRank());
            Group in = w.incl(new int[] {4, 0, 2});
            r.add(Group.translateRanks(w, new int[] {0, 1, 2, 3, 4, MPI.PROC_NULL}, in));
            r.add(in.getRank());
            r.add(members(w.rangeIncl(new int[][] {{0, 4, 2}}), w));
            r.add(members(w.rangeIncl(new int[][] {{4, 0, -2}, {1, 1, 1}, {3, 2, 1}}), w));
            r.add(members(w.rangeExcl(new int[][] {{1, 3, 2}}), w));
            Group a = w.incl(new int[] {3, 1});
            Group b = w.incl(new int[] {1, 4, 0});
            r.add(members(Group.union(a, b), w));
            r.add(members(Group.intersection(b, a), w));
            r.add(members(Group.difference(b, a), w));
            r.add(new int[] {Group.compare(w, w.incl(new int[] {0, 1, 2, 3, 4})),
                Group.compare(w, w.incl(new int[] {4, 3, 2, 1, 0})), Group.compare(w, ex),
                Group.compare(MPI.GROUP_EMPTY, w.excl(new int[] {0, 1, 2, 3, 4}))});
            r.add(new int[] {MPI.GROUP_EMPTY.getSize(), MPI.GROUP_EMPTY.getRank()});
            ex.free();
            MPI.GROUP_EMPTY.free();
            r.add(List.of(ex.isNull(), MPI.GROUP_EMPTY.isNull(), w.isNull()));
            return r;
        }
    }

    private static int indexOf(List<Integer> list, int rank) {
        int i = list.indexOf(rank);
        return i < 0 ? MPI.UNDEFINED : i;
    }

    private static int[] array(List<Integer> list) {
        return list.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The ranks {first, first + stride, ..} up to last, as the standard defines a range. */
    private static List<Integer> range(int first, int last, int stride) {
        List<Integer> r = new ArrayList<>();
        for (int k = first; stride > 0 ? k <= last : k >= last; k += stride) {
            r.add(k);
        }
        return r;
    }

    @Test
    void shouldComputeEveryGroupOperationAsTheStandardDefinesIt() throws Exception {
        List<Object> ranks = World.values(SIZE, Programs.class, "groups");

        List<Integer> world = range(0, SIZE - 1, 1);
        List<Integer> ex = new ArrayList<>(world);
        ex.removeAll(List.of(1, 3));
        List<Integer> in = List.of(4, 0, 2);
        List<Integer> a = List.of(3, 1);
        List<Integer> b = List.of(1, 4, 0);
        List<Integer> union = new ArrayList<>(a);
        b.stream().filter(p -> !a.contains(p)).forEach(union::add);
        List<Integer> inter = b.stream().filter(a::contains).toList();
        List<Integer> diff = b.stream().filter(p -> !a.contains(p)).toList();
        List<Integer> rangeIncl = new ArrayList<>(range(4, 0, -2));
        rangeIncl.addAll(range(1, 1, 1));
        rangeIncl.addAll(range(3, 2, 1));
        List<Integer> rangeExcl = new ArrayList<>(world);
        rangeExcl.removeAll(range(1, 3, 2));
        for (int rank = 0; rank < SIZE; rank++) {
            @SuppressWarnings("unchecked")
            List<Object> got = (List<Object>) ranks.get(rank);
            String at = "rank " + rank;
            int[] translated = new int[SIZE + 1];
            for (int q = 0; q < SIZE; q++) {
                translated[q] = indexOf(in, q);
            }
            translated[SIZE] = MPI.PROC_NULL;
            assertArrayEquals(new int[] {SIZE, rank}, (int[]) got.get(0), at);
            assertArrayEquals(array(ex), (int[]) got.get(1), at);
            assertEquals(indexOf(ex, rank), got.get(2), at);
            assertArrayEquals(translated, (int[]) got.get(3), at);
            assertEquals(indexOf(in, rank), got.get(4), at);
            assertArrayEquals(array(range(0, 4, 2)), (int[]) got.get(5), at);
            assertArrayEquals(array(rangeIncl), (int[]) got.get(6), at);
            assertArrayEquals(array(rangeExcl), (int[]) got.get(7), at);
            assertArrayEquals(array(union), (int[]) got.get(8), at);
            assertArrayEquals(array(inter), (int[]) got.get(9), at);
            assertArrayEquals(array(diff), (int[]) got.get(10), at);
            assertArrayEquals(new int[] {MPI.IDENT, MPI.SIMILAR, MPI.UNEQUAL, MPI.IDENT}, (int[]) got.get(11), at);
            assertArrayEquals(new int[] {0, MPI.UNDEFINED}, (int[]) got.get(12), at);
            assertEquals(List.of(true, false, false), got.get(13), at);
        }
    }
}
