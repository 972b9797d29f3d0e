package mpi;

import java.util.EnumSet;
import java.util.Set;

import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * What one element of a datatype is in memory, as MPI defines it: a list of (basic kind, byte
 * displacement) entries, in the order they are packed, and the bounds. {@code lb}/{@code ub} are
 * the bounds the extent comes from (set by {@code createResized}, else the entries' own, and for a
 * struct rounded up to its entries' alignment, the standard's epsilon); {@code trueLb}/
 * {@code trueUb} are always the entries' own. A message carries an element as its entries packed
 * densely, each little-endian, in order ({@link #packedSize} bytes).
 */
final class Typemap {

    /** Most entries one datatype may have: beyond, a constructor fails rather than the memory. */
    static final int MAX_ENTRIES = 1 << 24;

    final Kind[] kinds;
    final long[] displs;
    final long lb;
    final long ub;
    final long trueLb;
    final long trueUb;
    final int packedSize;
    /** Bytes to the start of each entry in the packed form, and {@link #packedSize} last. */
    final int[] packedAt;
    private final Set<Kind> kindSet;
    private final long grain;

    Typemap(Kind[] kinds, long[] displs, long lb, long ub, long trueLb, long trueUb) {
        this.kinds = kinds;
        this.displs = displs;
        this.lb = lb;
        this.ub = ub;
        this.trueLb = trueLb;
        this.trueUb = trueUb;
        this.packedAt = new int[kinds.length + 1];
        int at = 0;
        for (int i = 0; i < kinds.length; i++) {
            packedAt[i] = at;
            at += kinds[i].size();
        }
        packedAt[kinds.length] = at;
        this.packedSize = at;
        Set<Kind> set = EnumSet.noneOf(Kind.class);
        long g = lb == 0 ? ub : gcd(Math.abs(lb), Math.abs(ub));
        for (int i = 0; i < kinds.length; i++) {
            set.add(kinds[i]);
            g = gcd(g, Math.abs(displs[i]));
        }
        this.kindSet = set;
        this.grain = g;
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** @return the kinds of the entries */
    Set<Kind> kindSet() {
        return kindSet;
    }

    /** @return the largest number that divides every displacement and bound (0 when all are 0) */
    long grain() {
        return grain;
    }

    /** @return the typemap of a predefined kind: one entry at 0, {@code extentBytes} long in memory */
    static Typemap of(Kind kind, int extentBytes) {
        return new Typemap(new Kind[] {kind}, new long[] {0}, 0, extentBytes, 0, span(kind));
    }

    long extent() {
        return ub - lb;
    }

    long trueExtent() {
        return trueUb - trueLb;
    }

    /** @return bytes from the start of an entry of {@code k} to the end of its data (a pair's index at its alignment) */
    static int span(Kind k) {
        return k.isPair() ? alignment(k) + 4 : k.size();
    }

    /** @return the alignment of {@code k} in memory: its largest primitive */
    static int alignment(Kind k) {
        return switch (k) {
            case SHORT_INT, FLOAT_INT, INT2 -> 4;
            case LONG_INT, DOUBLE_INT -> 8;
            default -> k.size();
        };
    }

    /**
     * The general constructor all of MPI's reduce to: block {@code i} is {@code lengths[i]} copies of
     * {@code olds[i]}, one extent apart, the first at byte {@code starts[i]}.
     *
     * @param aligned whether the bounds are rounded up to the entries' alignment (a struct)
     */
    static Typemap blocks(String call, int[] lengths, long[] starts, Typemap[] olds, boolean aligned)
            throws MPIException {
        long entries = 0;
        for (int i = 0; i < lengths.length; i++) {
            if (lengths[i] < 0) {
                throw new MPIException(MPI.ERR_COUNT, call + ": block " + i + " has length " + lengths[i]);
            }
            entries += (long) lengths[i] * olds[i].kinds.length;
        }
        if (entries > MAX_ENTRIES) {
            throw new MPIException(MPI.ERR_NO_MEM, call + ": the type would have " + entries
                    + " basic elements (at most " + MAX_ENTRIES + ")");
        }
        Kind[] kinds = new Kind[(int) entries];
        long[] displs = new long[(int) entries];
        long lb = Long.MAX_VALUE;
        long ub = Long.MIN_VALUE;
        long trueLb = Long.MAX_VALUE;
        long trueUb = Long.MIN_VALUE;
        int align = 1;
        int n = 0;
        for (int i = 0; i < lengths.length; i++) {
            Typemap old = olds[i];
            for (int k = 0; k < lengths[i]; k++) {
                long at = starts[i] + k * old.extent();
                lb = Math.min(lb, at + old.lb);
                ub = Math.max(ub, at + old.ub);
                for (int e = 0; e < old.kinds.length; e++) {
                    kinds[n] = old.kinds[e];
                    displs[n] = at + old.displs[e];
                    align = Math.max(align, alignment(kinds[n]));
                    n++;
                }
                if (old.kinds.length > 0) {
                    trueLb = Math.min(trueLb, at + old.trueLb);
                    trueUb = Math.max(trueUb, at + old.trueUb);
                }
            }
        }
        if (lb == Long.MAX_VALUE) {
            lb = 0;
            ub = 0;
        }
        if (trueLb == Long.MAX_VALUE) {
            trueLb = 0;
            trueUb = 0;
        }
        if (aligned && (ub - lb) % align != 0) {
            ub += align - Math.floorMod(ub - lb, align);
        }
        return new Typemap(kinds, displs, lb, ub, trueLb, trueUb);
    }

    /** @return the same entries with the bounds {@code lb} and {@code lb + extent} */
    Typemap resized(long newLb, long newExtent) {
        return new Typemap(kinds, displs, newLb, newLb + newExtent, trueLb, trueUb);
    }

    /**
     * @return the kind every entry has, {@link Kind#PACKED} when they differ (a message of such a
     *         type matches any receive, as packed bytes do), {@link Kind#BYTE} for none
     */
    Kind commonKind() {
        if (kinds.length == 0) {
            return Kind.BYTE;
        }
        for (Kind k : kinds) {
            if (k != kinds[0]) {
                return Kind.PACKED;
            }
        }
        return kinds[0];
    }

    /**
     * @param bytes bytes of a message of elements of this type
     * @return the basic elements in them, {@code MPI.UNDEFINED} when they end inside one
     */
    int elements(int bytes) {
        if (packedSize == 0) {
            return bytes == 0 ? 0 : MPI.UNDEFINED;
        }
        int whole = bytes / packedSize;
        int rest = bytes % packedSize;
        int e = 0;
        while (packedAt[e] < rest) {
            e++;
        }
        return packedAt[e] == rest ? whole * kinds.length + e : MPI.UNDEFINED;
    }
}
