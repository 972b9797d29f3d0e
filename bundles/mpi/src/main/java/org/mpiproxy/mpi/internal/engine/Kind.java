package org.mpiproxy.mpi.internal.engine;

/**
 * The element kinds messages carry, with their packed size: every element is little-endian and
 * densely packed on every link. Pair kinds (value and index) serve {@code MINLOC}/{@code MAXLOC}.
 */
public enum Kind {
    BYTE(1, 1),
    CHAR(2, 1),
    SHORT(2, 1),
    BOOLEAN(1, 1),
    INT(4, 1),
    LONG(8, 1),
    FLOAT(4, 1),
    DOUBLE(8, 1),
    /** Packed bytes ({@code MPI.PACKED}): counted in bytes, reduced by no operation. */
    PACKED(1, 1),
    /** Two ints: value, index. */
    INT2(8, 2),
    /** A short value and an int index. */
    SHORT_INT(6, 2),
    /** A long value and an int index. */
    LONG_INT(12, 2),
    /** A float value and an int index. */
    FLOAT_INT(8, 2),
    /** A double value and an int index. */
    DOUBLE_INT(12, 2);

    private static final Kind[] BY_CODE = values();

    private final int size;
    private final int parts;

    Kind(int size, int parts) {
        this.size = size;
        this.parts = parts;
    }

    /** @return bytes of one element when packed */
    public int size() {
        return size;
    }

    /** @return 2 for a value-and-index pair, else 1 */
    public int parts() {
        return parts;
    }

    /** @return whether elements are value-and-index pairs */
    public boolean isPair() {
        return parts == 2;
    }

    /** @return the code carried in a message's envelope */
    public int code() {
        return ordinal();
    }

    /**
     * @param code an envelope's kind code
     * @return the kind, or {@code null} when the code names none
     */
    public static Kind ofCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
