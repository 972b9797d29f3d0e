package org.mpiproxy.protocol;

import java.nio.ByteBuffer;

/**
 * The payload of a v2 STATUS reply (docs/protocol-v2.md 5.6): one 20-byte entry per rank, in
 * rank order, little-endian, densely packed; the reply's argument is the number of entries.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                          rank (u32)                           |
 * +---------------+---------------+-------------------------------+
 * |  state (u8)   | reserved (0)  |          core (u16)           |
 * +---------------+---------------+-------------------------------+
 * |                           pid (u64)                           |
 * |                       (0: no process)                         |
 * +---------------------------------------------------------------+
 * |                     exit status (i32, -1: none yet)           |
 * +---------------------------------------------------------------+
 * </pre>
 * Static methods over absolute indices; the buffer must be little-endian. Thread-safe.
 */
public final class V2StatusDescriptor {

    public static final int RANK_OFFSET = 0;
    public static final int STATE_OFFSET = 4;
    public static final int CORE_OFFSET = 6;
    public static final int PID_OFFSET = 8;
    public static final int EXIT_STATUS_OFFSET = 16;
    /** Bytes per entry. */
    public static final int ENTRY_LENGTH = 20;

    /** EXEC accepted, the process not started yet. */
    public static final int STATE_STARTING = 1;
    /** The process runs. */
    public static final int STATE_RUNNING = 2;
    /** TERMINATE arrived; the process is being stopped. */
    public static final int STATE_TERMINATING = 3;
    /** The process ended; the exit status is known; not terminated yet. */
    public static final int STATE_EXITED = 4;
    /** The program could not be started. */
    public static final int STATE_FAILED = 5;
    /** Terminated: channel removed, the exit status remembered for the job's linger time. */
    public static final int STATE_FINISHED = 6;

    /** Exit status of an entry whose process has not ended (or never started). */
    public static final int NO_EXIT_STATUS = -1;

    private V2StatusDescriptor() {
    }

    /**
     * Writes one entry.
     *
     * @param buffer     a little-endian buffer
     * @param offset     where the entry starts
     * @param rank       the rank
     * @param state      one of the {@code STATE_*} codes
     * @param core       the rank's core (0: the proxy's own)
     * @param pid        the process id, 0 when there is none
     * @param exitStatus exit code, or 128 + signal, or {@link #NO_EXIT_STATUS}
     */
    public static void put(ByteBuffer buffer, int offset, long rank, int state, int core, long pid, int exitStatus) {
        buffer.putInt(offset + RANK_OFFSET, (int) rank);
        buffer.put(offset + STATE_OFFSET, (byte) state);
        buffer.put(offset + STATE_OFFSET + 1, (byte) 0);
        buffer.putShort(offset + CORE_OFFSET, (short) core);
        buffer.putLong(offset + PID_OFFSET, pid);
        buffer.putInt(offset + EXIT_STATUS_OFFSET, exitStatus);
    }

    /** @return the entry's rank (u32) */
    public static long rank(ByteBuffer buffer, int offset) {
        return buffer.getInt(offset + RANK_OFFSET) & 0xffffffffL;
    }

    /** @return the entry's state code */
    public static int state(ByteBuffer buffer, int offset) {
        return buffer.get(offset + STATE_OFFSET) & 0xff;
    }

    /** @return the entry's core (u16) */
    public static int core(ByteBuffer buffer, int offset) {
        return buffer.getShort(offset + CORE_OFFSET) & 0xffff;
    }

    /** @return the entry's process id, 0 when none */
    public static long pid(ByteBuffer buffer, int offset) {
        return buffer.getLong(offset + PID_OFFSET);
    }

    /** @return the entry's exit status, or {@link #NO_EXIT_STATUS} */
    public static int exitStatus(ByteBuffer buffer, int offset) {
        return buffer.getInt(offset + EXIT_STATUS_OFFSET);
    }

    /**
     * @param state a state code
     * @return its lower-case name ({@code running}, {@code exited}, ...), or {@code state(<code>)}
     */
    public static String stateName(int state) {
        switch (state) {
            case STATE_STARTING: return "starting";
            case STATE_RUNNING: return "running";
            case STATE_TERMINATING: return "terminating";
            case STATE_EXITED: return "exited";
            case STATE_FAILED: return "failed";
            case STATE_FINISHED: return "finished";
            default: return "state(" + state + ")";
        }
    }
}
