package mpi;

import org.mpiproxy.protocol.MpiErrors;

/** The names and meanings of the error classes of {@link MPI}, indexed by class. */
final class ErrorClasses {

    private static final String[][] CLASSES = {
        {"MPI_SUCCESS", "no error"},
        {"MPI_ERR_BUFFER", "invalid buffer"},
        {"MPI_ERR_COUNT", "invalid count"},
        {"MPI_ERR_TYPE", "invalid datatype"},
        {"MPI_ERR_TAG", "invalid tag"},
        {"MPI_ERR_COMM", "invalid communicator"},
        {"MPI_ERR_RANK", "invalid rank"},
        {"MPI_ERR_REQUEST", "invalid request"},
        {"MPI_ERR_ROOT", "invalid root"},
        {"MPI_ERR_GROUP", "invalid group"},
        {"MPI_ERR_OP", "invalid reduction operation"},
        {"MPI_ERR_TOPOLOGY", "invalid topology"},
        {"MPI_ERR_DIMS", "invalid dimensions"},
        {"MPI_ERR_ARG", "invalid argument"},
        {"MPI_ERR_UNKNOWN", "unknown error"},
        {"MPI_ERR_TRUNCATE", "message truncated"},
        {"MPI_ERR_OTHER", "other error"},
        {"MPI_ERR_INTERN", "internal error"},
        {"MPI_ERR_IN_STATUS", "error in a status"},
        {"MPI_ERR_PENDING", "request pending"},
        {"MPI_ERR_ACCESS", "permission denied"},
        {"MPI_ERR_AMODE", "invalid file access mode"},
        {"MPI_ERR_ASSERT", "invalid assertion"},
        {"MPI_ERR_BAD_FILE", "invalid file name"},
        {"MPI_ERR_BASE", "invalid base address"},
        {"MPI_ERR_CONVERSION", "data conversion failed"},
        {"MPI_ERR_DISP", "invalid displacement"},
        {"MPI_ERR_DUP_DATAREP", "data representation already defined"},
        {"MPI_ERR_FILE_EXISTS", "file exists"},
        {"MPI_ERR_FILE_IN_USE", "file in use"},
        {"MPI_ERR_FILE", "invalid file"},
        {"MPI_ERR_INFO_KEY", "invalid info key"},
        {"MPI_ERR_INFO_NOKEY", "no such info key"},
        {"MPI_ERR_INFO_VALUE", "invalid info value"},
        {"MPI_ERR_INFO", "invalid info object"},
        {"MPI_ERR_IO", "input/output error"},
        {"MPI_ERR_KEYVAL", "invalid attribute key"},
        {"MPI_ERR_LOCKTYPE", "invalid lock type"},
        {"MPI_ERR_NAME", "invalid service name"},
        {"MPI_ERR_NO_MEM", "out of memory"},
        {"MPI_ERR_NOT_SAME", "arguments differ between processes"},
        {"MPI_ERR_NO_SPACE", "no space left"},
        {"MPI_ERR_NO_SUCH_FILE", "no such file"},
        {"MPI_ERR_PORT", "invalid port name"},
        {"MPI_ERR_QUOTA", "quota exceeded"},
        {"MPI_ERR_READ_ONLY", "read-only file"},
        {"MPI_ERR_RMA_CONFLICT", "conflicting window accesses"},
        {"MPI_ERR_RMA_SYNC", "wrong window synchronisation"},
        {"MPI_ERR_SERVICE", "invalid service"},
        {"MPI_ERR_SIZE", "invalid size"},
        {"MPI_ERR_SPAWN", "spawning processes failed"},
        {"MPI_ERR_UNSUPPORTED_DATAREP", "unsupported data representation"},
        {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
        {"MPI_ERR_WIN", "invalid window"},
    };

    private ErrorClasses() {
    }

    /** @return {@code "MPI_ERR_RANK: invalid rank"}, or {@code null} for no class */
    static String describe(int errorClass) {
        return errorClass >= 0 && errorClass < CLASSES.length
                ? CLASSES[errorClass][0] + ": " + CLASSES[errorClass][1] : null;
    }

    /** @return {@code "MPI_ERR_RANK"}, or {@code "error 99"} for no class */
    static String name(int errorClass) {
        return errorClass >= 0 && errorClass < CLASSES.length ? CLASSES[errorClass][0] : "error " + errorClass;
    }

    /**
     * @param code an error code of the engine or the proxy ({@link MpiErrors})
     * @return its class here: the same number, but {@link MPI#ERR_SPAWN} for the protocol's,
     *         {@link MPI#ERR_OTHER} for one of the proxy's own
     */
    static int of(int code) {
        if (code == MpiErrors.ERR_SPAWN) {
            return MPI.ERR_SPAWN;
        }
        return code >= 0 && code < CLASSES.length ? code : MPI.ERR_OTHER;
    }
}
