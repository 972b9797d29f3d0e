package org.mpiproxy.proxy.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The output of one v2 job in {@link V2OutputStreams}: each rank's streams and what they buffer.
 * Its monitor guards everything in it.
 */
final class V2JobOutput {

    final long jobId;
    final Map<Integer, V2OutputStream[]> ranks = new HashMap<>();
    long buffered;
    boolean closed;
    boolean stalled;
    /** Nanos of the host's last acknowledgement that advanced a stream, or of the first line waiting. */
    long lastProgress;
    /** The host silence after which this job's waiting lines are dropped (shorter once it is stopped). */
    long stallNanos;

    V2JobOutput(long jobId, long stallNanos) {
        this.jobId = jobId;
        this.stallNanos = stallNanos;
    }

    /**
     * The host acknowledges nothing: every waiting line is dropped (whole lines only: the rest of a
     * line whose first fragment went out is kept) and counted in its stream; under the monitor.
     *
     * @return the lines dropped
     */
    long stall() {
        stalled = true;
        long lost = 0;
        for (V2OutputStream[] streams : ranks.values()) {
            for (V2OutputStream stream : streams) {
                boolean keeping = true;
                for (java.util.Iterator<V2OutputStream.Fragment> it = stream.unsent.iterator(); it.hasNext();) {
                    V2OutputStream.Fragment f = it.next();
                    keeping &= !f.lineStart;
                    if (!keeping) {
                        it.remove();
                        buffered -= f.cost();
                        if (f.lineStart) {
                            stream.dropped++;
                            lost++;
                        }
                    }
                }
            }
        }
        return lost;
    }

    /**
     * @return the job's streams as plain values, for the next revision of the proxy ({@link HandOver}):
     *         {@code jobId}, {@code stalled}, {@code stallNanos} and {@code ranks}, rank id to its
     *         streams ({@link V2OutputStream#export()}); under the monitor
     */
    Map<String, Object> export() {
        Map<String, Object> m = new HashMap<>();
        m.put("jobId", jobId);
        m.put("stalled", stalled);
        m.put("stallNanos", stallNanos);
        Map<Integer, List<Map<String, Object>>> exported = new HashMap<>();
        for (Map.Entry<Integer, V2OutputStream[]> e : ranks.entrySet()) {
            List<Map<String, Object>> streams = new ArrayList<>();
            for (V2OutputStream stream : e.getValue()) {
                streams.add(stream.export());
            }
            exported.put(e.getKey(), streams);
        }
        m.put("ranks", exported);
        return m;
    }

    /**
     * @param m   what {@link #export()} gave
     * @param now monotonic nanoseconds: the job's last progress
     * @return the job's output, its buffer counting the fragments taken over
     * @throws ClassCastException   when a value is of another type
     * @throws NullPointerException when a value is missing
     */
    static V2JobOutput restore(Map<String, Object> m, long now) {
        V2JobOutput job = new V2JobOutput((Long) m.get("jobId"), (Long) m.get("stallNanos"));
        job.stalled = (Boolean) m.get("stalled");
        job.lastProgress = now;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) m.get("ranks")).entrySet()) {
            List<?> exported = (List<?>) e.getValue();
            V2OutputStream[] streams = new V2OutputStream[exported.size()];
            for (int i = 0; i < streams.length; i++) {
                streams[i] = V2OutputStream.restore(RankHandOver.asMap(exported.get(i)));
                for (V2OutputStream.Fragment f : streams[i].inFlight) {
                    job.buffered += f.cost();
                }
                for (V2OutputStream.Fragment f : streams[i].unsent) {
                    job.buffered += f.cost();
                }
            }
            job.ranks.put((Integer) e.getKey(), streams);
        }
        return job;
    }
}
