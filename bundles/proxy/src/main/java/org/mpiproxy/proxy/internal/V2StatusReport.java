package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V2StatusDescriptor.ENTRY_LENGTH;
import static org.mpiproxy.protocol.V2StatusDescriptor.NO_EXIT_STATUS;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.TreeMap;

import org.mpiproxy.api.RankInfo;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2StatusDescriptor;

/** Writes the entries of a STATUS reply (docs/protocol-v2.md 5.6) for one job. Relay thread only. */
final class V2StatusReport {

    /** Entries written by the last {@link #write}. */
    int entries;
    /** The rank to ask from next after the last {@link #write}; 0 when the list is complete. */
    long next;

    /**
     * @param job        the job
     * @param rank       0 for every rank, else only this rank
     * @param from       the first rank to list (paging), when {@code rank} is 0
     * @param buffer     the reply buffer, little-endian
     * @param offset     where the payload starts
     * @param maxPayload the largest payload
     * @return the payload length, or -1 when {@code rank} is not a rank of the job
     */
    int write(V2Job job, long rank, long from, ByteBuffer buffer, int offset, int maxPayload) {
        entries = 0;
        next = 0;
        TreeMap<Integer, Object> all = new TreeMap<>();
        job.finished.forEach(all::put);
        for (V2Rank r : job.ranks()) {
            all.put(r.rankId, r);
        }
        if (rank != 0) {
            Object one = rank <= Integer.MAX_VALUE ? all.get((int) rank) : null;
            if (one == null) {
                return -1;
            }
            put(buffer, offset, (int) rank, one);
            entries = 1;
            return ENTRY_LENGTH;
        }
        int capacity = maxPayload / ENTRY_LENGTH;
        int first = (int) Math.max(1, Math.min(from, Integer.MAX_VALUE));
        for (Map.Entry<Integer, Object> e : all.tailMap(first).entrySet()) {
            if (entries == capacity) {
                next = e.getKey();
                break;
            }
            put(buffer, offset + entries * ENTRY_LENGTH, e.getKey(), e.getValue());
            entries++;
        }
        return entries * ENTRY_LENGTH;
    }

    private static void put(ByteBuffer buffer, int offset, int rankId, Object rank) {
        if (rank instanceof V2Rank) {
            V2Rank r = (V2Rank) rank;
            long pid = r.process != null ? r.process.pid() : 0;
            boolean ended = r.phase == Rank.Phase.EXITED;
            V2StatusDescriptor.put(buffer, offset, rankId, state(r), r.coreId, Math.max(0, pid),
                    ended ? r.exitStatus : NO_EXIT_STATUS);
            return;
        }
        V2Job.Finished f = (V2Job.Finished) rank;
        RankInfo info = f.info();
        boolean failed = f.result() != MpiErrors.SUCCESS;
        V2StatusDescriptor.put(buffer, offset, rankId,
                failed ? V2StatusDescriptor.STATE_FAILED : V2StatusDescriptor.STATE_FINISHED, f.core(),
                Math.max(0, info.pid()), failed ? NO_EXIT_STATUS : (int) f.exitStatus());
    }

    private static int state(V2Rank r) {
        switch (r.phase) {
            case STARTING:
                return r.terminateRequested ? V2StatusDescriptor.STATE_TERMINATING : V2StatusDescriptor.STATE_STARTING;
            case TERMINATING:
                return V2StatusDescriptor.STATE_TERMINATING;
            case EXITED:
                // a rank stopped because its ring faulted failed, whatever its exit status
                return r.fault != null ? V2StatusDescriptor.STATE_FAILED : V2StatusDescriptor.STATE_EXITED;
            case FAILED:
                return V2StatusDescriptor.STATE_FAILED;
            default:
                return r.terminateRequested ? V2StatusDescriptor.STATE_TERMINATING : V2StatusDescriptor.STATE_RUNNING;
        }
    }
}
