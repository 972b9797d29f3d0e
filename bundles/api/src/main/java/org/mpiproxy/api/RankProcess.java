package org.mpiproxy.api;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A started rank process. Thread-safe.
 */
@ProviderType
public interface RankProcess {

    /** @return the operating-system process id */
    long pid();

    /** @return the core the rank was started on (0 = the proxy's own core) */
    int coreId();

    /** @return {@code true} while the process runs */
    boolean isAlive();

    /**
     * @return completes with the exit status when the process ends: the exit code, or
     *         128 + signal number when a signal ended it
     */
    CompletableFuture<Integer> onExit();

    /**
     * Stops the process: SIGTERM first, SIGKILL when it is still alive after {@code grace}.
     * Returns at once; watch {@link #onExit()} for the end.
     *
     * @param grace how long to wait between SIGTERM and SIGKILL
     */
    void stop(Duration grace);
}
