package org.mpiproxy.protocol;

/**
 * MPI basic datatypes with their wire codes and element sizes.
 * <p>
 * Codes 0..7 are FreeNOS's {@code mpi.h} enum order and the only ones v1 accepts; codes 8 and
 * up are ours. Sizes are those of the C types on LP64 Linux. Elements travel little-endian.
 */
public enum MpiDatatype {
    CHAR(0, 1),
    SHORT(1, 2),
    LONG(2, 8),
    INT(3, 4),
    UNSIGNED_CHAR(4, 1),
    UNSIGNED_SHORT(5, 2),
    UNSIGNED(6, 4),
    UNSIGNED_LONG(7, 8),
    SIGNED_CHAR(8, 1),
    BYTE(9, 1),
    LONG_LONG(10, 8),
    FLOAT(11, 4),
    DOUBLE(12, 8);

    /** Highest code v1 (FreeNOS) knows. */
    public static final int V1_MAX_CODE = 7;

    private static final MpiDatatype[] BY_CODE = values();
    private static final int[] SIZE_BY_CODE = new int[BY_CODE.length];

    static {
        for (MpiDatatype t : BY_CODE) {
            if (t.ordinal() != t.code) {
                throw new ExceptionInInitializerError("datatype codes must equal ordinals: " + t);
            }
            SIZE_BY_CODE[t.code] = t.size;
        }
    }

    private final int code;
    private final int size;

    MpiDatatype(int code, int size) {
        this.code = code;
        this.size = size;
    }

    /** @return the wire code */
    public int code() {
        return code;
    }

    /** @return bytes per element */
    public int size() {
        return size;
    }

    /**
     * Allocation-free lookup for the fast path.
     *
     * @param code a wire code, any value
     * @return bytes per element, or -1 when the code is unknown
     */
    public static int sizeOf(int code) {
        return code >= 0 && code < SIZE_BY_CODE.length ? SIZE_BY_CODE[code] : -1;
    }

    /**
     * @param code a wire code, any value
     * @return the datatype, or {@code null} when the code is unknown
     */
    public static MpiDatatype ofCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
