package org.mpiproxy.api;

import java.nio.file.Path;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Starts rank processes. A launcher is registered with the service property
 * {@link #KIND}: {@link #KIND_LOCAL} for coreId 0, {@link #KIND_CORE} for coreId &gt;= 1.
 * <p>
 * Thread-safe; {@link #launch} may block for the time it takes to spawn a process.
 */
@ProviderType
public interface ProcessLauncher {

    /** Service property (String): which cores this launcher serves. */
    String KIND = "mpiproxy.launcher";

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
