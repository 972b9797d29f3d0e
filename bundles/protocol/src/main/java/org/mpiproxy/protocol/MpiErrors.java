package org.mpiproxy.protocol;

/**
 * MPI error codes as carried in the result field of replies (MPI-3.1 order, as FreeNOS).
 */
public final class MpiErrors {

    public static final int SUCCESS = 0;
    public static final int ERR_BUFFER = 1;
    public static final int ERR_COUNT = 2;
    public static final int ERR_TYPE = 3;
    public static final int ERR_TAG = 4;
    public static final int ERR_COMM = 5;
    public static final int ERR_RANK = 6;
    public static final int ERR_ARG = 13;
    public static final int ERR_UNKNOWN = 14;
    public static final int ERR_TRUNCATE = 15;
    public static final int ERR_OTHER = 16;
    public static final int ERR_INTERN = 17;
    public static final int ERR_IO = 35;
    public static final int ERR_NO_MEM = 39;
    public static final int ERR_SPAWN = 54;
    /**
     * Not an MPI-3.1 class (those end below 100): a v2 SEND of a message larger than the
     * proxy's {@code v2.max.message.bytes}; the reply's argument carries that maximum.
     */
    public static final int ERR_MESSAGE_TOO_LARGE = 201;
    /**
     * Not an MPI-3.1 class: a v2 CREDENTIAL (docs/protocol-v2.md 5.9) for a job the node has with
     * another user or under a cluster key, or of uid 0 where ranks may not run as root.
     */
    public static final int ERR_PERMISSION = 202;
    /**
     * Not an MPI-3.1 class: a v2 CREDENTIAL that is expired or issued in the future, for a job the
     * node does not have with that user.
     */
    public static final int ERR_EXPIRED = 203;
    /**
     * Not an MPI-3.1 class: a plain EXEC naming a job environment (docs/protocol-v2.md 5.10) the
     * node does not hold (never sent, dropped idle, or its job ended): send it again, then the EXEC.
     */
    public static final int ERR_NO_ENVIRONMENT = 204;

    private MpiErrors() {
    }

    /**
     * @param code an error code
     * @return its MPI name, or {@code MPI_ERR_<code>} when unnamed here
     */
    public static String name(int code) {
        switch (code) {
            case SUCCESS: return "MPI_SUCCESS";
            case ERR_BUFFER: return "MPI_ERR_BUFFER";
            case ERR_COUNT: return "MPI_ERR_COUNT";
            case ERR_TYPE: return "MPI_ERR_TYPE";
            case ERR_TAG: return "MPI_ERR_TAG";
            case ERR_COMM: return "MPI_ERR_COMM";
            case ERR_RANK: return "MPI_ERR_RANK";
            case ERR_ARG: return "MPI_ERR_ARG";
            case ERR_UNKNOWN: return "MPI_ERR_UNKNOWN";
            case ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
            case ERR_OTHER: return "MPI_ERR_OTHER";
            case ERR_INTERN: return "MPI_ERR_INTERN";
            case ERR_IO: return "MPI_ERR_IO";
            case ERR_NO_MEM: return "MPI_ERR_NO_MEM";
            case ERR_SPAWN: return "MPI_ERR_SPAWN";
            case ERR_MESSAGE_TOO_LARGE: return "MPIPROXY_ERR_MESSAGE_TOO_LARGE";
            case ERR_PERMISSION: return "MPIPROXY_ERR_PERMISSION";
            case ERR_EXPIRED: return "MPIPROXY_ERR_EXPIRED";
            case ERR_NO_ENVIRONMENT: return "MPIPROXY_ERR_NO_ENVIRONMENT";
            default: return "MPI_ERR_" + code;
        }
    }
}
