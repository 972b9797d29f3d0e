package mpi;

import java.util.Arrays;

/**
 * An ordered set of processes ({@link Comm#getGroup}): the rank of a process in the group is its
 * place in that order. Every operation is local, as in MPI; {@link Intracomm#create} makes a
 * communicator of a group. A failure goes to {@code MPI.COMM_WORLD}'s error handler.
 */
public final class Group implements Freeable {

    /** The processes as ranks of {@code MPI.COMM_WORLD}, in group order; {@code null} once freed. */
    private int[] members;

    Group(int[] members) {
        this.members = members;
    }

    /** @return the members as world ranks, in group order */
    int[] members() throws MPIException {
        if (members == null) {
            throw new MPIException(MPI.ERR_GROUP, "the group has been freed");
        }
        return members;
    }

    private static int[] of(Group g, String call) throws MPIException {
        MPI.check();
        if (g == null) {
            throw fail(MPI.ERR_GROUP, call + ": the group is null");
        }
        if (g.members == null) {
            throw fail(MPI.ERR_GROUP, call + ": the group has been freed");
        }
        return g.members;
    }

    private static MPIException fail(int errorClass, String message) {
        return MPI.raise(new MPIException(errorClass, message));
    }

    /** @return processes in the group */
    public int getSize() throws MPIException {
        return of(this, "getSize").length;
    }

    /** @return this process's rank in the group, {@code MPI.UNDEFINED} when it is not a member */
    public int getRank() throws MPIException {
        return indexOf(of(this, "getRank"), MPI.worldRank());
    }

    private static int indexOf(int[] members, int process) {
        for (int i = 0; i < members.length; i++) {
            if (members[i] == process) {
                return i;
            }
        }
        return MPI.UNDEFINED;
    }

    /** Frees the group: it becomes null ({@link #isNull}). Freeing {@code MPI.GROUP_EMPTY} leaves it as it is. */
    @Override
    public void free() throws MPIException {
        of(this, "free");
        if (this != MPI.GROUP_EMPTY) {
            members = null;
        }
    }

    /** @return whether the group was freed */
    public boolean isNull() {
        return members == null;
    }

    /**
     * @param ranks1 ranks of {@code group1} ({@code MPI.PROC_NULL} stays itself)
     * @return the rank in {@code group2} of each of those processes, {@code MPI.UNDEFINED} where
     *         it is not in {@code group2}
     */
    public static int[] translateRanks(Group group1, int[] ranks1, Group group2) throws MPIException {
        int[] a = of(group1, "translateRanks");
        int[] b = of(group2, "translateRanks");
        if (ranks1 == null) {
            throw fail(MPI.ERR_ARG, "translateRanks: the ranks are null");
        }
        int[] result = new int[ranks1.length];
        for (int i = 0; i < ranks1.length; i++) {
            int r = ranks1[i];
            if (r == MPI.PROC_NULL) {
                result[i] = MPI.PROC_NULL;
                continue;
            }
            checkRank("translateRanks", r, a.length);
            result[i] = indexOf(b, a[r]);
        }
        return result;
    }

    private static void checkRank(String call, int r, int size) throws MPIException {
        if (r < 0 || r >= size) {
            throw fail(MPI.ERR_RANK, call + ": rank " + r + " is not in a group of " + size);
        }
    }

    /**
     * @return {@code MPI.IDENT} for the same processes in the same order, {@code MPI.SIMILAR} for
     *         the same processes in another order, {@code MPI.UNEQUAL} otherwise
     */
    public static int compare(Group group1, Group group2) throws MPIException {
        return compare(of(group1, "compare"), of(group2, "compare"));
    }

    static int compare(int[] a, int[] b) {
        if (Arrays.equals(a, b)) {
            return MPI.IDENT;
        }
        if (a.length != b.length) {
            return MPI.UNEQUAL;
        }
        int[] x = a.clone();
        int[] y = b.clone();
        Arrays.sort(x);
        Arrays.sort(y);
        return Arrays.equals(x, y) ? MPI.SIMILAR : MPI.UNEQUAL;
    }

    /** @return the processes of {@code group1} in its order, then those of {@code group2} not in {@code group1} */
    public static Group union(Group group1, Group group2) throws MPIException {
        int[] a = of(group1, "union");
        int[] b = of(group2, "union");
        int[] u = Arrays.copyOf(a, a.length + b.length);
        int n = a.length;
        for (int p : b) {
            if (indexOf(a, p) == MPI.UNDEFINED) {
                u[n++] = p;
            }
        }
        return new Group(Arrays.copyOf(u, n));
    }

    /** @return the processes of {@code group1} that are in {@code group2}, in {@code group1}'s order */
    public static Group intersection(Group group1, Group group2) throws MPIException {
        return new Group(select(of(group1, "intersection"), of(group2, "intersection"), true));
    }

    /** @return the processes of {@code group1} that are not in {@code group2}, in {@code group1}'s order */
    public static Group difference(Group group1, Group group2) throws MPIException {
        return new Group(select(of(group1, "difference"), of(group2, "difference"), false));
    }

    private static int[] select(int[] a, int[] b, boolean in) {
        int[] s = new int[a.length];
        int n = 0;
        for (int p : a) {
            if ((indexOf(b, p) != MPI.UNDEFINED) == in) {
                s[n++] = p;
            }
        }
        return Arrays.copyOf(s, n);
    }

    /** @return a group of the processes of ranks {@code ranks} of this group, in that order */
    public Group incl(int[] ranks) throws MPIException {
        return incl("incl", ranks);
    }

    private Group incl(String call, int[] ranks) throws MPIException {
        int[] m = of(this, call);
        listed(call, ranks, m.length);
        int[] g = new int[ranks.length];
        for (int i = 0; i < ranks.length; i++) {
            g[i] = m[ranks[i]];
        }
        return new Group(g);
    }

    /** @return a group of this group's processes but those of ranks {@code ranks}, in this group's order */
    public Group excl(int[] ranks) throws MPIException {
        return excl("excl", ranks);
    }

    private Group excl(String call, int[] ranks) throws MPIException {
        int[] m = of(this, call);
        return new Group(without(m, listed(call, ranks, m.length)));
    }

    private static int[] without(int[] m, boolean[] listed) {
        int[] g = new int[m.length];
        int n = 0;
        for (int r = 0; r < m.length; r++) {
            if (!listed[r]) {
                g[n++] = m[r];
            }
        }
        return Arrays.copyOf(g, n);
    }

    /** @return which ranks of a group of {@code size} are listed: each valid and listed once */
    private static boolean[] listed(String call, int[] ranks, int size) throws MPIException {
        if (ranks == null) {
            throw fail(MPI.ERR_ARG, call + ": the ranks are null");
        }
        boolean[] listed = new boolean[size];
        for (int r : ranks) {
            checkRank(call, r, size);
            if (listed[r]) {
                throw fail(MPI.ERR_RANK, call + ": rank " + r + " is listed twice");
            }
            listed[r] = true;
        }
        return listed;
    }

    /**
     * @param ranges triplets {first rank, last rank, stride}: the ranks first, first + stride, ...
     *               up to last (stride may be negative, not 0)
     * @return a group of the processes of those ranks of this group, in that order
     */
    public Group rangeIncl(int[][] ranges) throws MPIException {
        return incl("rangeIncl", ranks("rangeIncl", ranges, of(this, "rangeIncl").length));
    }

    /** @return a group of this group's processes but those of the ranks of {@code ranges} ({@link #rangeIncl}) */
    public Group rangeExcl(int[][] ranges) throws MPIException {
        return excl("rangeExcl", ranks("rangeExcl", ranges, of(this, "rangeExcl").length));
    }

    private static int[] ranks(String call, int[][] ranges, int size) throws MPIException {
        if (ranges == null) {
            throw fail(MPI.ERR_ARG, call + ": the ranges are null");
        }
        int[] ranks = new int[0];
        for (int[] t : ranges) {
            if (t == null || t.length != 3 || t[2] == 0) {
                throw fail(MPI.ERR_ARG, call + ": " + Arrays.toString(t) + " is no triplet {first, last, stride}"
                        + " with a stride other than 0");
            }
            long count = Math.max(0, Math.floorDiv((long) t[1] - t[0], t[2]) + 1);
            if (count > size) {
                throw fail(MPI.ERR_RANK, call + ": " + Arrays.toString(t) + " names more ranks than the group's "
                        + size);
            }
            int from = ranks.length;
            ranks = Arrays.copyOf(ranks, from + (int) count);
            for (int k = 0; k < count; k++) {
                ranks[from + k] = t[0] + k * t[2];
            }
        }
        return ranks;
    }

    @Override
    public String toString() {
        return members == null ? "MPI.GROUP_NULL" : "Group" + Arrays.toString(members);
    }
}
