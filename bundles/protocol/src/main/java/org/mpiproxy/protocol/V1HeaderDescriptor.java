package org.mpiproxy.protocol;

import java.nio.ByteOrder;

/**
 * Layout of the v1 (FreeNOS) datagram header: 12 bytes, little-endian, packed.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |   operation   |    result     |            rankId             |
 *  +---------------+---------------+-------------------------------+
 *  |            coreId             |  coreCount (EXEC) / datatype  |
 *  +-------------------------------+-------------------------------+
 *  |                           datacount                           |
 *  +---------------------------------------------------------------+
 *  |                       payload ...                             |
 * </pre>
 * A datagram is at most {@link #MAX_DATAGRAM_LENGTH} bytes including the header.
 */
public final class V1HeaderDescriptor {

    /** Byte order of every header field and payload element. */
    public static final ByteOrder BYTE_ORDER = ByteOrder.LITTLE_ENDIAN;

    public static final int OPERATION_OFFSET = 0;
    public static final int RESULT_OFFSET = 1;
    public static final int RANK_ID_OFFSET = 2;
    public static final int CORE_ID_OFFSET = 4;
    /** EXEC: coreCount (world size including rank 0); SEND and RECV: datatype. */
    public static final int CORE_COUNT_OFFSET = 6;
    public static final int DATATYPE_OFFSET = 6;
    public static final int DATACOUNT_OFFSET = 8;
    public static final int HEADER_LENGTH = 12;

    /** UDP port of the proxy. */
    public static final int DEFAULT_PORT = 6660;
    /** Largest v1 datagram, header included: fits a 1500-byte MTU. */
    public static final int MAX_DATAGRAM_LENGTH = 1448;
    /** Largest v1 payload. */
    public static final int MAX_PAYLOAD_LENGTH = MAX_DATAGRAM_LENGTH - HEADER_LENGTH;

    public static final int OP_SEND = 0;
    public static final int OP_RECV = 1;
    public static final int OP_EXEC = 2;
    public static final int OP_TERMINATE = 3;

    private V1HeaderDescriptor() {
    }

    /**
     * @param operation an operation code
     * @return its name, or {@code OP(<code>)} when unknown
     */
    public static String operationName(int operation) {
        switch (operation) {
            case OP_SEND: return "SEND";
            case OP_RECV: return "RECV";
            case OP_EXEC: return "EXEC";
            case OP_TERMINATE: return "TERMINATE";
            default: return "OP(" + operation + ")";
        }
    }
}
