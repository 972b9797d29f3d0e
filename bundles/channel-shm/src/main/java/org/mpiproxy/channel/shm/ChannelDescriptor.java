package org.mpiproxy.channel.shm;

/**
 * Layout of a channel file: a file header followed by two rings, {@code toRank} (the proxy
 * produces, the rank consumes) and {@code fromRank} (the rank produces, the proxy consumes).
 * Each ring is laid out as {@link RingDescriptor} describes.
 *
 * <pre>
 *  File layout (all offsets in bytes, C = ring capacity, a power of two)
 *  +------------------------------+ 0
 *  | file header (128)            |
 *  +------------------------------+ 128                      = toRankOffset
 *  | toRank ring header (256)     |
 *  | toRank data area (C)         |
 *  +------------------------------+ 128 + 256 + C            = fromRankOffset
 *  | fromRank ring header (256)   |
 *  | fromRank data area (C)       |
 *  +------------------------------+ 128 + 2 * (256 + C)      = file length
 *
 *  File header; every field is in the NATIVE byte order of the machine
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                         Magic (int64)                         |  0
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |     Major     |     Minor     |   (Version, int32, release)   |  8
 *  +-------------------------------+-------------------------------+
 *  |                   File Header Length (int32)                  | 12
 *  +---------------------------------------------------------------+
 *  |                         Job Id (int64)                        | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                        Rank Id (int32)                        | 24
 *  +---------------------------------------------------------------+
 *  |                     Ring Capacity (int32)                     | 28
 *  +---------------------------------------------------------------+
 *  |                     toRank Offset (int64)                     | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                    fromRank Offset (int64)                    | 40
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Ring Header Length (int32)                   | 48
 *  +---------------------------------------------------------------+
 *  |                     Reserved (int32, 0)                       | 52
 *  +---------------------------------------------------------------+
 *  |                      File Length (int64)                      | 56
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 Reserved (zero) up to byte 128               ...| 64
 *  +---------------------------------------------------------------+
 * </pre>
 * The version word is {@code major << 16 | minor}. The creator writes every other field first
 * and the version last with a release store; a reader loads the version with acquire semantics,
 * treats 0 as "not initialised", and rejects any major version but {@link #MAJOR_VERSION}.
 * The magic's bytes on a little-endian machine spell {@code "MPX_CHAN"}; a file written on a
 * machine of the other byte order fails the magic check.
 * <p>
 * This class only holds constants and pure functions.
 */
public final class ChannelDescriptor {

    /** Magic number, compared as a native-order int64; its little-endian bytes are "MPX_CHAN". */
    public static final long MAGIC = 0x4E41_4843_5F58_504DL;

    /** Layout major version: readers refuse any other. */
    public static final int MAJOR_VERSION = 2;

    /** Layout minor version: additions that readers of the same major version may ignore. */
    public static final int MINOR_VERSION = 1;

    /** {@code MAJOR_VERSION << 16 | MINOR_VERSION}. */
    public static final int VERSION = MAJOR_VERSION << 16 | MINOR_VERSION;

    /** Offset of the magic (int64). */
    public static final int MAGIC_OFFSET = 0;

    /** Offset of the version (int32, {@code major << 16 | minor}, written last with release). */
    public static final int VERSION_OFFSET = 8;

    /** Offset of the file header length (int32). */
    public static final int FILE_HEADER_LENGTH_OFFSET = 12;

    /** Offset of the job id (int64). */
    public static final int JOB_ID_OFFSET = 16;

    /** Offset of the rank id (int32). */
    public static final int RANK_ID_OFFSET = 24;

    /** Offset of the capacity of each ring's data area (int32, power of two). */
    public static final int RING_CAPACITY_OFFSET = 28;

    /** Offset of the toRank ring's file offset (int64). */
    public static final int TO_RANK_OFFSET_OFFSET = 32;

    /** Offset of the fromRank ring's file offset (int64). */
    public static final int FROM_RANK_OFFSET_OFFSET = 40;

    /** Offset of the ring header length (int32). */
    public static final int RING_HEADER_LENGTH_OFFSET = 48;

    /** Offset of the total file length (int64). */
    public static final int FILE_LENGTH_OFFSET = 56;

    /** Length of the file header in bytes; the toRank ring starts here. */
    public static final int FILE_HEADER_LENGTH = 128;

    /** Suffix of channel files: {@code rank-<rankId>.chan}. */
    public static final String FILE_SUFFIX = ".chan";

    private ChannelDescriptor() {
    }

    /**
     * @param major major version
     * @param minor minor version
     * @return the version word
     */
    public static int version(int major, int minor) {
        return (major & 0xFFFF) << 16 | (minor & 0xFFFF);
    }

    /**
     * @param version a version word
     * @return its major version
     */
    public static int majorVersion(int version) {
        return version >>> 16;
    }

    /**
     * @param version a version word
     * @return its minor version
     */
    public static int minorVersion(int version) {
        return version & 0xFFFF;
    }

    /**
     * @param ringCapacity capacity of each ring's data area
     * @return file offset of the toRank ring (its header)
     */
    public static long toRankOffset(int ringCapacity) {
        return FILE_HEADER_LENGTH;
    }

    /**
     * @param ringCapacity capacity of each ring's data area
     * @return file offset of the fromRank ring (its header)
     */
    public static long fromRankOffset(int ringCapacity) {
        return FILE_HEADER_LENGTH + RingDescriptor.ringLength(ringCapacity);
    }

    /**
     * @param ringCapacity capacity of each ring's data area
     * @return the length of the whole channel file
     */
    public static long fileLength(int ringCapacity) {
        return FILE_HEADER_LENGTH + 2 * RingDescriptor.ringLength(ringCapacity);
    }

    /**
     * @param rankId the rank
     * @return the channel file's name inside its job directory, {@code rank-<rankId>.chan}
     */
    public static String fileName(int rankId) {
        return "rank-" + rankId + FILE_SUFFIX;
    }

    /**
     * @param jobId the job
     * @return the job directory's name, {@code job-} followed by 16 lower-case hex digits
     */
    public static String jobDirectoryName(long jobId) {
        String hex = Long.toHexString(jobId);
        return "job-" + "0000000000000000".substring(hex.length()) + hex;
    }

    /**
     * @param uid   the numeric user id owning the job's files
     * @param jobId the job
     * @return the job directory's name, {@code job-<uid>-<16 lower-case hex digits>}, so that
     *         jobs of different users (or proxies running as different users) never share one
     */
    public static String jobDirectoryName(long uid, long jobId) {
        return "job-" + uid + jobDirectoryName(jobId).substring(3);
    }
}
