package org.mpiproxy.protocol.pmi;

import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ranks a PMI server expects: each under the random id its connection must name once, and
 * under its job and rank, for the process id it runs as. Thread-safe.
 */
final class PmiRanks {

    /** A rank that may connect. */
    static final class Expected {
        final long jobId;
        final int rank;
        final int size;
        volatile long pid = -1;

        Expected(long jobId, int rank, int size) {
            this.jobId = jobId;
            this.rank = rank;
            this.size = size;
        }
    }

    private record JobRank(long jobId, int rank) {
    }

    private final SecureRandom random = new SecureRandom();
    private final Map<Integer, Expected> byId = new ConcurrentHashMap<>();
    private final Map<JobRank, Expected> byRank = new ConcurrentHashMap<>();

    /** @return the id, from 1, that rank {@code rank} of the job names when it connects */
    int expect(long jobId, int rank, int size) {
        Expected e = new Expected(jobId, rank, size);
        int id;
        do {
            id = 1 + random.nextInt(Integer.MAX_VALUE - 1);
        } while (byId.putIfAbsent(id, e) != null);
        byRank.put(new JobRank(jobId, rank), e);
        return id;
    }

    /**
     * @param id what a connection named
     * @return the rank it stands for, which no other connection can name any more, or {@code null}
     *         when the id is not a number given out and not used yet
     */
    Expected take(String id) {
        try {
            return byId.remove(Integer.parseInt(id));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** @return whether the rank is expected (its pid now known) */
    boolean started(long jobId, int rank, long pid) {
        Expected e = byRank.get(new JobRank(jobId, rank));
        if (e != null) {
            e.pid = pid;
        }
        return e != null;
    }

    void forget(long jobId) {
        byId.values().removeIf(e -> e.jobId == jobId);
        byRank.keySet().removeIf(k -> k.jobId() == jobId);
    }
}
