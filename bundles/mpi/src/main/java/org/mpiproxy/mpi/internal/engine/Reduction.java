package org.mpiproxy.mpi.internal.engine;

import java.nio.ByteBuffer;

/**
 * The predefined reduction operations over packed little-endian elements: {@code inout[i] =
 * inout[i] op in[i]}. Every one is commutative and associative (floating-point sums aside, as in
 * every MPI), so the collectives may combine in any tree order. Which kinds each applies to
 * follows MPI's groups: arithmetic and ordering on the numeric kinds, logical on the integers
 * and {@code BOOLEAN}, bitwise on the integers, {@code MINLOC}/{@code MAXLOC} on the pairs.
 * {@code CHAR} is Java's unsigned 16-bit {@code char}.
 */
public enum Reduction implements Combiner {
    MAX, MIN, SUM, PROD, LAND, BAND, LOR, BOR, LXOR, BXOR, MINLOC, MAXLOC;

    /** MPI's error class for an operation that does not apply ({@code MPI_ERR_OP}). */
    public static final int ERR_OP = 10;

    /** @return {@code true}: every predefined operation is */
    @Override
    public boolean commutative() {
        return true;
    }

    /** @return the ordinal plus one */
    @Override
    public int code() {
        return ordinal() + 1;
    }

    /** @return whether this operation applies to elements of {@code kind} */
    public boolean appliesTo(Kind kind) {
        switch (this) {
            case MAX: case MIN: case SUM: case PROD:
                return numeric(kind);
            case LAND: case LOR: case LXOR:
                return integer(kind) || kind == Kind.BOOLEAN;
            case BAND: case BOR: case BXOR:
                return integer(kind);
            default:
                return kind.isPair();
        }
    }

    private static boolean integer(Kind k) {
        return k == Kind.BYTE || k == Kind.CHAR || k == Kind.SHORT || k == Kind.INT || k == Kind.LONG;
    }

    private static boolean numeric(Kind k) {
        return integer(k) || k == Kind.FLOAT || k == Kind.DOUBLE;
    }

    /**
     * @throws CommFailure ({@link #ERR_OP}) when this operation does not apply to {@code kind}
     */
    @Override
    public void check(Kind kind) {
        if (!appliesTo(kind)) {
            throw new CommFailure(ERR_OP, "MPI." + this + " does not apply to MPI." + kind);
        }
    }

    /**
     * Combines {@code count} elements: {@code inout = inout op in}.
     *
     * @param kind  the elements' kind (checked with {@link #check})
     * @param inout the left operands and the results, from index {@code a}
     * @param in    the right operands, from index {@code b}
     */
    @Override
    public void apply(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b) {
        switch (kind) {
            case BYTE -> {
                for (int i = 0; i < count; i++) {
                    inout.put(a + i, (byte) longOp(inout.get(a + i), in.get(b + i)));
                }
            }
            case CHAR -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 2 * i;
                    inout.putChar(x, (char) longOp(inout.getChar(x), in.getChar(b + 2 * i)));
                }
            }
            case SHORT -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 2 * i;
                    inout.putShort(x, (short) longOp(inout.getShort(x), in.getShort(b + 2 * i)));
                }
            }
            case INT -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 4 * i;
                    inout.putInt(x, (int) longOp(inout.getInt(x), in.getInt(b + 4 * i)));
                }
            }
            case LONG -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 8 * i;
                    inout.putLong(x, longOp(inout.getLong(x), in.getLong(b + 8 * i)));
                }
            }
            case BOOLEAN -> {
                for (int i = 0; i < count; i++) {
                    inout.put(a + i, (byte) longOp(inout.get(a + i) != 0 ? 1 : 0, in.get(b + i) != 0 ? 1 : 0));
                }
            }
            case FLOAT -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 4 * i;
                    inout.putFloat(x, (float) doubleOp(inout.getFloat(x), in.getFloat(b + 4 * i)));
                }
            }
            case DOUBLE -> {
                for (int i = 0; i < count; i++) {
                    int x = a + 8 * i;
                    inout.putDouble(x, doubleOp(inout.getDouble(x), in.getDouble(b + 8 * i)));
                }
            }
            default -> pairs(kind, count, inout, a, in, b);
        }
    }

    private long longOp(long x, long y) {
        switch (this) {
            case MAX: return Math.max(x, y);
            case MIN: return Math.min(x, y);
            case SUM: return x + y;
            case PROD: return x * y;
            case LAND: return x != 0 && y != 0 ? 1 : 0;
            case LOR: return x != 0 || y != 0 ? 1 : 0;
            case LXOR: return (x != 0) != (y != 0) ? 1 : 0;
            case BAND: return x & y;
            case BOR: return x | y;
            case BXOR: return x ^ y;
            default: throw new IllegalStateException(name());
        }
    }

    private double doubleOp(double x, double y) {
        switch (this) {
            case MAX: return Math.max(x, y);
            case MIN: return Math.min(x, y);
            case SUM: return x + y;
            case PROD: return x * y;
            default: throw new IllegalStateException(name());
        }
    }

    /** MINLOC/MAXLOC: the smaller (larger) value wins; on a tie the smaller index. */
    private void pairs(Kind kind, int count, ByteBuffer inout, int a, ByteBuffer in, int b) {
        int size = kind.size();
        int valueBytes = size - 4;
        boolean max = this == MAXLOC;
        for (int i = 0; i < count; i++) {
            int x = a + size * i;
            int y = b + size * i;
            int cmp = switch (kind) {
                case INT2 -> Integer.compare(inout.getInt(x), in.getInt(y));
                case SHORT_INT -> Short.compare(inout.getShort(x), in.getShort(y));
                case LONG_INT -> Long.compare(inout.getLong(x), in.getLong(y));
                case FLOAT_INT -> Float.compare(inout.getFloat(x), in.getFloat(y));
                case DOUBLE_INT -> Double.compare(inout.getDouble(x), in.getDouble(y));
                default -> throw new IllegalStateException(kind.name());
            };
            int xi = inout.getInt(x + valueBytes);
            int yi = in.getInt(y + valueBytes);
            boolean takeIn = max ? cmp < 0 : cmp > 0;
            if (takeIn || (cmp == 0 && yi < xi)) {
                inout.put(x, in, y, size);
            }
        }
    }
}
