package org.mpiproxy.mpi.internal;

import java.util.function.IntConsumer;

/** Builds lifelines with an exit hook and a clock that lets every check run. */
public final class ProxyLifelineAccess {

    private ProxyLifelineAccess() {
    }

    /**
     * @param pid   the proxy's pid
     * @param start its start time
     * @param exit  called instead of {@code System.exit}
     * @return a lifeline whose every {@code check()} looks at the proxy
     */
    public static ProxyLifeline create(long pid, long start, IntConsumer exit) {
        long[] now = {0};
        return new ProxyLifeline(pid, start, "rank 1", System.err, exit,
                () -> now[0] += ProxyLifeline.CHECK_INTERVAL_NANOS);
    }

    /**
     * @param pid    the proxy's pid
     * @param start  its start time
     * @param keeper the node keeper's directory
     * @param exit   called instead of {@code System.exit}
     * @return a lifeline whose every {@code check()} looks at the proxy, 0.5 s after the last one
     */
    public static ProxyLifeline create(long pid, long start, java.nio.file.Path keeper, IntConsumer exit) {
        long[] now = {0};
        return new ProxyLifeline(pid, start, keeper, "rank 1", System.err, exit,
                () -> now[0] += ProxyLifeline.CHECK_INTERVAL_NANOS);
    }
}
