package org.mpiproxy.proxy.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Output of handed-over jobs that still reaches a revision of the proxy after its hand-over: a
 * launcher calls the output listener it had when it started a rank for as long as the rank
 * writes, and that may be a listener of an earlier revision. Such lines wait in a queue, in order,
 * as JDK values ({@code {Long jobId, Integer rankId, Integer stream, String text or null for a
 * stream's end, Boolean partial}}, stream 0 stdout, 1 stderr, 2 PMI); every later revision is
 * handed the queues of the revisions before it and drains them on each pump, never waiting for
 * room (the relay thread must not). Order holds per stream because a rank's lines take one way at
 * a time: its launcher gives them to the listeners it has, and an old revision's listener is gone
 * before the next revision's is there (lines in between wait in the launcher), so every line that
 * came through an old revision precedes the first one that comes directly. Thread-safe.
 */
final class LateOutput {

    private volatile Set<Long> handedOver;
    private final Queue<Object[]> lines = new ConcurrentLinkedQueue<>();
    private final List<Queue<?>> inherited = new CopyOnWriteArrayList<>();

    /** From now on the lines of {@code jobs} are kept for the next revision. */
    void handOver(Set<Long> jobs) {
        handedOver = Set.copyOf(jobs);
    }

    /** @return whether the line is kept: its job was handed over */
    boolean keep(long jobId, int rankId, int stream, String text, boolean partial) {
        Set<Long> jobs = handedOver;
        if (jobs == null || !jobs.contains(jobId)) {
            return false;
        }
        lines.add(new Object[] {jobId, rankId, stream, text, partial});
        return true;
    }

    /** @return this revision's queue and those it inherited, for the hand-over's state */
    List<Queue<?>> export() {
        List<Queue<?>> all = new ArrayList<>(inherited);
        all.add(lines);
        return all;
    }

    /**
     * Takes the queues of a previous revision's {@link #export()} and gives what they hold to
     * {@code output}; values of another shape are skipped.
     */
    void inherit(Object exported, V2OutputStreams output) {
        if (exported instanceof List<?> queues) {
            for (Object q : queues) {
                if (q instanceof Queue<?> queue) {
                    inherited.add(queue);
                }
            }
        }
        replay(output);
    }

    /**
     * Gives the lines of the inherited queues to {@code output}, in order.
     *
     * @return how many were given
     */
    int replay(V2OutputStreams output) {
        if (inherited.isEmpty()) {
            // every pump comes here: no iterator when nothing was inherited
            return 0;
        }
        int n = 0;
        for (Queue<?> queue : inherited) {
            for (Object o; (o = queue.poll()) != null; ) {
                if (o instanceof Object[] a && a.length == 5 && a[0] instanceof Long jobId
                        && a[1] instanceof Integer rankId && a[2] instanceof Integer stream) {
                    output.replayed(jobId, rankId, stream, a[3] instanceof String s ? s : null,
                            Boolean.TRUE.equals(a[4]));
                    n++;
                }
            }
        }
        return n;
    }
}
