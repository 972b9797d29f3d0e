package org.mpiproxy.protocol;

import java.nio.ByteOrder;

/**
 * Layout of a v2 datagram: a 72-byte fixed header, the payload, then a 32-byte HMAC-SHA256
 * trailer over everything before it. Every field is little-endian. See docs/protocol-v2.md.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  | magic (0xB2)  |   operation   |     flags     |     keyId     |  0
 *  +---------------+---------------+---------------+---------------+
 *  |            result             |           datatype            |  4
 *  +-------------------------------+-------------------------------+
 *  |                        nodeId (u64)                           |  8
 *  +---------------------------------------------------------------+
 *  |                         jobId (u64)                           | 16
 *  +---------------------------------------------------------------+
 *  |                          rank (u32)                           | 24
 *  +---------------------------------------------------------------+
 *  |                          tag (i32)                            | 28
 *  +---------------------------------------------------------------+
 *  |                       sequence (u64)                          | 32
 *  +---------------------------------------------------------------+
 *  |                   acknowledgement (u64)                       | 40
 *  +---------------------------------------------------------------+
 *  |              timestamp (u64, ms since the epoch)              | 48
 *  +---------------------------------------------------------------+
 *  |                         nonce (u64)                           | 56
 *  +---------------------------------------------------------------+
 *  |                        argument (u32)                         | 64
 *  +-------------------------------+-------------------------------+
 *  |            core (u16)         |     payload length (u16)      | 68
 *  +-------------------------------+-------------------------------+
 *  |                       payload ...                             | 72
 *  +---------------------------------------------------------------+
 *  |                HMAC-SHA256 (32 bytes) ...                     | 72 + payload length
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class V2HeaderDescriptor {

    /** Byte order of every field and payload element. */
    public static final ByteOrder BYTE_ORDER = ByteOrder.LITTLE_ENDIAN;

    /**
     * First byte of every v2 datagram. v1's first byte is its operation, 0..3; 0xB2 has the
     * high bit set, so no v1 datagram (valid or not a valid operation) is read as v2 and every
     * v1 dispatcher refuses a v2 datagram as an unknown operation.
     */
    public static final int MAGIC = 0xB2;

    public static final int MAGIC_OFFSET = 0;
    public static final int OPERATION_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int KEY_ID_OFFSET = 3;
    public static final int RESULT_OFFSET = 4;
    public static final int DATATYPE_OFFSET = 6;
    public static final int NODE_ID_OFFSET = 8;
    public static final int JOB_ID_OFFSET = 16;
    public static final int RANK_OFFSET = 24;
    public static final int TAG_OFFSET = 28;
    public static final int SEQUENCE_OFFSET = 32;
    public static final int ACK_OFFSET = 40;
    public static final int TIMESTAMP_OFFSET = 48;
    public static final int NONCE_OFFSET = 56;
    public static final int ARGUMENT_OFFSET = 64;
    public static final int CORE_OFFSET = 68;
    public static final int PAYLOAD_LENGTH_OFFSET = 70;
    public static final int HEADER_LENGTH = 72;

    /** Length of the HMAC-SHA256 trailer. */
    public static final int MAC_LENGTH = 32;
    /** Shortest v2 datagram: header and MAC, no payload. */
    public static final int MIN_DATAGRAM_LENGTH = HEADER_LENGTH + MAC_LENGTH;
    /** Default largest datagram: fits a 1500-byte Ethernet MTU with IPv4/IPv6 and UDP headers. */
    public static final int DEFAULT_DATAGRAM_LENGTH = 1448;
    /** Largest datagram any v2 peer may be configured for (IPv4 UDP payload limit). */
    public static final int MAX_DATAGRAM_LENGTH = 65507;

    /** Start a rank (request) / its result (reply). */
    public static final int OP_EXEC = 1;
    /** Data fragment host to rank (request) / acknowledgement with window (reply). */
    public static final int OP_SEND = 2;
    /** Pull fragments from a sequence number (request) / one fragment of rank data (reply). */
    public static final int OP_RECV = 3;
    /** End a rank (request) / its exit status (reply). */
    public static final int OP_TERMINATE = 4;
    /** One fragment of a rank's output line (from the proxy) / acknowledgement of a stream (from the host). */
    public static final int OP_OUTPUT = 5;
    /** A job's ranks on this node (request) / their states, see {@link V2StatusDescriptor} (reply). */
    public static final int OP_STATUS = 6;
    /**
     * A PMI fence's pairs for a job's ranks on the node (request, from the job's output port) /
     * their acknowledgement (reply); see {@link org.mpiproxy.protocol.pmi.PmiSpace}.
     */
    public static final int OP_PMI = 7;
    /** A program's content, staged to a node for plain EXECs (request) / how far it arrived (reply). */
    public static final int OP_STAGE = 8;
    /**
     * A job credential made known to a node, under key id 0 with the job key it derives (request) /
     * whether the node took it (reply); docs/protocol-v2.md 5.9 and {@link JobCredential}.
     */
    public static final int OP_CREDENTIAL = 9;
    /**
     * A job's common environment, sent once per node and job for the plain EXECs that name it by
     * digest ({@link #FLAG_ENVIRONMENT}; request) / how far it arrived (reply); docs/protocol-v2.md
     * 5.10 and {@link ExecEnvironment}.
     */
    public static final int OP_ENVIRONMENT = 10;

    /** Set on every datagram from the proxy. */
    public static final int FLAG_REPLY = 0x01;
    /** SEND and RECV replies: the fragment is the last of its message. */
    public static final int FLAG_END_OF_MESSAGE = 0x02;
    /**
     * EXEC request: stream the rank's standard output and error to the job's owner (OUTPUT).
     * OUTPUT from the proxy uses {@link #FLAG_END_OF_MESSAGE} on a line's last fragment.
     */
    public static final int FLAG_OUTPUT = 0x04;
    /**
     * EXEC request: run the program as given ({@code PROGRAM ARG...}, no {@code --slave} arguments),
     * the rank's world in its environment; the payload is {@link ExecCommand#encodePlain plain form}:
     * NUL-terminated arguments and environment variables. The tag then names the owner's port that
     * receives the job's OUTPUT (0: the owner's own).
     */
    public static final int FLAG_PLAIN = 0x08;
    /**
     * CREDENTIAL of key id 0 (request and reply): authenticated by a MUNGE credential in the payload
     * instead of a MAC (docs/protocol-v2.md 4.3). Not in {@link #KNOWN_FLAGS}: it is valid on nothing
     * else, and {@link V2Authenticator} tells such a request apart before the MAC ({@link V2Authenticator#MUNGE}).
     */
    public static final int FLAG_MUNGE = 0x10;
    /**
     * Plain EXEC request: the payload starts with the 32-byte SHA-256 of a job environment the node
     * holds ({@link #OP_ENVIRONMENT}), its variables the rank's too; the plain form follows.
     */
    public static final int FLAG_ENVIRONMENT = 0x20;
    /**
     * Flags a receiver must understand on an authenticated datagram; others make it invalid. A
     * MUNGE request ({@link #FLAG_MUNGE}) never gets this far: it is not authenticated by a MAC.
     */
    public static final int KNOWN_FLAGS = FLAG_REPLY | FLAG_END_OF_MESSAGE | FLAG_OUTPUT | FLAG_PLAIN
            | FLAG_ENVIRONMENT;

    /** OUTPUT tag of a rank's standard output stream. */
    public static final int STREAM_STDOUT = 1;
    /** OUTPUT tag of a rank's standard error stream. */
    public static final int STREAM_STDERR = 2;
    /** OUTPUT tag of a rank's PMI stream: its validated PMI requests that concern the whole job. */
    public static final int STREAM_PMI = 3;
    /** OUTPUT argument bit: the line has no line end (raw text, a piece of a cut line, a stream's last bytes). */
    public static final int OUTPUT_PARTIAL = 0x1;

    /**
     * TERMINATE request argument bit: stop the rank now (SIGTERM at once, SIGKILL after the proxy's
     * stop grace) instead of waiting for it to exit. Other bits must be 0.
     */
    public static final int TERMINATE_STOP = 0x1;

    /** RECV tag that matches any tag. */
    public static final int ANY_TAG = -1;

    private V2HeaderDescriptor() {
    }

    /**
     * @param payloadLength payload bytes
     * @return the datagram length with header and MAC
     */
    public static int datagramLength(int payloadLength) {
        return HEADER_LENGTH + payloadLength + MAC_LENGTH;
    }

    /**
     * @param datagramLength the configured datagram size
     * @return the largest payload that fits
     */
    public static int maxPayload(int datagramLength) {
        return datagramLength - MIN_DATAGRAM_LENGTH;
    }

    /**
     * @param operation an operation code
     * @return its name, or {@code OP(<code>)} when unknown
     */
    public static String operationName(int operation) {
        switch (operation) {
            case OP_EXEC: return "EXEC";
            case OP_SEND: return "SEND";
            case OP_RECV: return "RECV";
            case OP_TERMINATE: return "TERMINATE";
            case OP_OUTPUT: return "OUTPUT";
            case OP_STATUS: return "STATUS";
            case OP_PMI: return "PMI";
            case OP_STAGE: return "STAGE";
            case OP_CREDENTIAL: return "CREDENTIAL";
            case OP_ENVIRONMENT: return "ENVIRONMENT";
            default: return "OP(" + operation + ")";
        }
    }
}
