package org.mpiproxy.proxy.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RankInfo;

/**
 * One rank of a v2 job: besides what every rank has, its stream positions and the rank-to-host fragments
 * sent but not yet acknowledged. Relay thread only.
 * <p>
 * The retained fragments are copies: their data stays in the rank's ring until the host
 * acknowledges them (peeked, not released), and the ring's consumer mark holds the sequence
 * number of the fragment that starts at the ring's released head, so a new instance over the
 * same channel (a refreshed bundle) cuts the same fragments again.
 */
final class V2Rank extends LiveRank {

    /** Most fragments retained per rank (the largest RECV window). */
    static final int MAX_RETAINED = 256;
    /** Bytes of retained fragments per rank at most; fewer slots with large datagrams. */
    static final int RETAIN_BYTES = 1 << 20;

    final V2Job job;

    /** Rank-to-host stream: fragments below {@code acked} are acknowledged, below {@code next} were read. */
    long acked;
    long next;
    /** End (exclusive) of the latest RECV window; fragments below it are sent as they appear. */
    long pullEnd;
    /** Whether the TRUNCATE answer for the current window was sent. */
    boolean truncateSent;
    /** A SEND acknowledgement said window 0 (a full ring): the host waits for a window update. */
    boolean sendStalled;
    final int slots;
    final int slotSize;
    /** Allocated with the first RECV: many ranks only ever receive. */
    ByteBuffer retained;
    /** Per slot: the ring's peek position where the slot's fragment starts (for the commit of its acknowledgement). */
    long[] starts;
    /** Per slot: when its fragment was last sent, in the dispatcher's clock's milliseconds. */
    long[] sentAt;

    /** Bytes stored of the host-to-rank message not yet complete (0 between messages). */
    long messageBytesIn;
    /** SEND fragments that arrived past a hole; made with the first one. */
    HeldFragments held;
    /**
     * Set by the first refused SEND: the host then sends other messages under the refused
     * sequences, so a fragment held from before the refusal could be taken for one of them.
     */
    boolean holdingOff;

    V2Rank(V2Job job, int rankId, int coreId, int worldSize, String program, RankChannel channel, int datagramSize) {
        super(rankId, coreId, worldSize, program, channel);
        this.job = job;
        this.slotSize = datagramSize;
        this.slots = Math.max(1, Math.min(MAX_RETAINED, RETAIN_BYTES / datagramSize));
        // after a bundle refresh the stream continues where the rings say
        this.next = fromRank != null ? fromRank.consumerMark() : 0;
        this.acked = next;
        this.pullEnd = next;
    }

    @Override
    long jobId() {
        return job.jobId;
    }

    ByteBuffer retained() {
        if (retained == null) {
            retained = ByteBuffer.allocateDirect(slots * slotSize).order(ByteOrder.LITTLE_ENDIAN);
            starts = new long[slots];
            sentAt = new long[slots];
        }
        return retained;
    }

    int slotOffset(long sequence) {
        return slot(sequence) * slotSize;
    }

    int slot(long sequence) {
        return (int) Long.remainderUnsigned(sequence, slots);
    }


    boolean wantsData() {
        return next < pullEnd && fromRank != null;
    }

    RankInfo info() {
        RankInfo.State state = Rank.state(phase, terminateRequested);
        long pid = process != null ? process.pid() : -1;
        return new RankInfo(rankId, coreId, program, pid, state, exitStatus, bytesIn, bytesOut, 0, 0);
    }
}
