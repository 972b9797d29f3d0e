package org.mpiproxy.api;

import java.nio.file.Path;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Starts rank processes. A launcher is registered with the service property {@link #CORES}, the
 * cores it serves; the proxy starts each rank with the launcher that serves the rank's core
 * (the highest {@code service.ranking} where several do). {@link #KIND} says what it starts from:
 * {@link #KIND_LOCAL} programs, {@link #KIND_CORE} LZ4 images.
 * <p>
 * Thread-safe; {@link #launch} may block for the time it takes to spawn a process.
 */
@ProviderType
public interface ProcessLauncher {

    /** Service property (String): the kind of launcher, {@link #KIND_LOCAL} or {@link #KIND_CORE}. */
    String KIND = "mpiproxy.launcher";

    /**
     * Service property (String): the cores this launcher serves, comma-separated core numbers
     * and ranges ({@code 0}, {@code 1-} for 1 and above, {@code 2-7}). Core 0 is the proxy's own.
     * Without it the {@link #KIND} decides: {@link #KIND_LOCAL} core 0, {@link #KIND_CORE} 1 and above.
     */
    String CORES = "mpiproxy.launcher.cores";

    /** {@link #KIND} value of the launcher for the proxy's own core (coreId 0). */
    String KIND_LOCAL = "local";

    /** {@link #KIND} value of the launcher for other cores (coreId &gt;= 1). */
    String KIND_CORE = "core";

    /**
     * Starts one rank.
     *
     * @param request what to start
     * @return the running process
     * @throws LaunchException when the program is missing, not executable, the core does not
     *                         exist or the process cannot be spawned
     */
    RankProcess launch(LaunchRequest request) throws LaunchException;

    /**
     * The directory programs are looked up in now; it follows the launcher's configuration.
     * Any thread.
     *
     * @return the program directory, or {@code null} when this launcher does not use one
     */
    default Path programDirectory() {
        return null;
    }
}
