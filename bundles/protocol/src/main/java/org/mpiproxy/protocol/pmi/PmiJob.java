package org.mpiproxy.protocol.pmi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one PMI server holds of a job: its key-value space, the attributes its ranks put for this
 * node (PMI-2), the fences that ended here and the fragments of those arriving, and the
 * connections of its ranks. Guarded by its own monitor; the connections are the PMI thread's.
 */
final class PmiJob {

    final long jobId;
    final int size;
    final PmiSpace space = new PmiSpace();
    final Map<String, String> nodeAttributes = new HashMap<>();
    final List<PmiConnection> connections = new ArrayList<>();
    /** The highest fence that ended here. */
    int fenced;
    /** Fences arriving: epoch -> fragment -> pairs. */
    private final Map<Integer, Map<Integer, Map<String, String>>> arriving = new HashMap<>();

    PmiJob(long jobId, int size) {
        this.jobId = jobId;
        this.size = size;
    }

    /**
     * Takes one fragment of a fence (the caller holds the monitor); once fence {@code epoch} has
     * every fragment, its pairs and those of the fences before it join the space.
     *
     * @return whether a fence ended with it
     */
    boolean fragment(int epoch, int index, int count, Map<String, String> pairs) {
        if (epoch <= fenced) {
            return false;
        }
        Map<Integer, Map<String, String>> fragments = arriving.computeIfAbsent(epoch, e -> new HashMap<>());
        fragments.putIfAbsent(index, pairs);
        if (fragments.size() < count) {
            return false;
        }
        for (int e = fenced + 1; e <= epoch; e++) {
            Map<Integer, Map<String, String>> done = arriving.remove(e);
            if (done != null) {
                done.values().forEach(space::merge);
            }
        }
        fenced = epoch;
        return true;
    }

    /**
     * Stores a node attribute (the caller holds the monitor); set once, as a key.
     *
     * @return {@code null}, or why not
     */
    String putNodeAttribute(String key, String value) {
        String old = nodeAttributes.putIfAbsent(key, value);
        return old == null || old.equals(value) ? null : "of key " + PmiLine.shorten(key) + ", which is already set";
    }
}
