package org.mpiproxy.cli;

import java.util.LinkedHashMap;
import java.util.Map;

import org.mpiproxy.protocol.pmi.PmiLine;

/**
 * The launcher's part of a job's PMI (docs/protocol-v2.md 5.7): it hears every rank's job-wide
 * PMI requests (rank 0's from the launcher's own PMI server, the others' on their PMI streams),
 * collects the pairs they put, and once every rank has entered a barrier, ends that fence: the
 * pairs put since the last one go to every place that serves ranks ({@link Sink}), which then
 * let their ranks out of the barrier. A node attribute a rank puts (PMI-2) goes on at once to
 * the job's other servers on that rank's node ({@link NodeAttributes}). Thread-safe.
 */
final class PmiFence {

    /** Where a finished fence goes. */
    interface Sink {
        /**
         * @param epoch the fence, from 1
         * @param pairs the pairs put since the previous fence, by every rank
         */
        void fence(int epoch, Map<String, String> pairs);
    }

    /** Where a rank's node attribute (PMI-2) goes: the job's other servers on the rank's node. */
    interface NodeAttributes {
        void put(int rank, String key, String value);
    }

    /** A rank called {@code MPI_Abort}. */
    record Abort(int rank, int exitCode, String message) {
    }

    private final int size;
    private final Sink sink;
    private final Runnable onAbort;
    private final NodeAttributes nodeAttributes;
    private final int[] entered;
    private final Map<String, String> pending = new LinkedHashMap<>();
    private int fenced;
    private Abort abort;

    /**
     * @param size    ranks in the job
     * @param sink    where finished fences go
     * @param onAbort run when a rank aborts (after {@link #abort} tells which)
     */
    PmiFence(int size, Sink sink, Runnable onAbort) {
        this(size, sink, (rank, key, value) -> { }, onAbort);
    }

    /**
     * @param nodeAttributes where the node attributes ranks put go
     */
    PmiFence(int size, Sink sink, NodeAttributes nodeAttributes, Runnable onAbort) {
        this.size = size;
        this.sink = sink;
        this.nodeAttributes = nodeAttributes;
        this.onAbort = onAbort;
        this.entered = new int[size];
    }

    /**
     * @param rank the rank
     * @param text one of its job-wide PMI lines, as its server passed it on
     * @return {@code null}, or why the line is not understood (for the log)
     */
    String onLine(int rank, String text) {
        if (rank < 0 || rank >= size) {
            return "PMI line of rank " + rank + ", which the job does not have";
        }
        PmiLine line;
        try {
            line = PmiLine.parse(text);
        } catch (IllegalArgumentException e) {
            return "PMI line of rank " + rank + ": " + e.getMessage();
        }
        if (line.command().equals("putnodeattr")) {
            try {
                Map.Entry<String, String> pair = PmiLine.putOf(line);
                nodeAttributes.put(rank, pair.getKey(), pair.getValue());
                return null;
            } catch (IllegalArgumentException e) {
                return "PMI " + e.getMessage() + " of rank " + rank;
            }
        }
        Map<String, String> done = null;
        int epoch = 0;
        boolean aborted = false;
        synchronized (this) {
            switch (line.command()) {
                case "put":
                    Map.Entry<String, String> pair;
                    try {
                        pair = PmiLine.putOf(line);
                    } catch (IllegalArgumentException e) {
                        return "PMI " + e.getMessage() + " of rank " + rank;
                    }
                    pending.putIfAbsent(pair.getKey(), pair.getValue());
                    break;
                case "barrier_in":
                    entered[rank]++;
                    int lowest = Integer.MAX_VALUE;
                    for (int e : entered) {
                        lowest = Math.min(lowest, e);
                    }
                    if (lowest > fenced) {
                        fenced = lowest;
                        epoch = lowest;
                        done = new LinkedHashMap<>(pending);
                        pending.clear();
                    }
                    break;
                case "abort":
                    if (abort == null) {
                        int code = 1;
                        try {
                            code = Integer.parseInt(line.get("exitcode"));
                        } catch (NumberFormatException e) {
                            code = 1;
                        }
                        abort = new Abort(rank, code, line.get("message"));
                        aborted = true;
                    }
                    break;
                default:
                    return "PMI line of rank " + rank + " with cmd=" + PmiLine.shorten(line.command());
            }
        }
        if (done != null) {
            sink.fence(epoch, done);
        }
        if (aborted) {
            onAbort.run();
        }
        return null;
    }

    /** @return the first rank's abort, or {@code null} */
    synchronized Abort abort() {
        return abort;
    }

    /** @return the fences ended so far */
    synchronized int fenced() {
        return fenced;
    }
}
