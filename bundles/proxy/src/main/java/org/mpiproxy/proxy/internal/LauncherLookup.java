package org.mpiproxy.proxy.internal;

import org.mpiproxy.api.ProcessLauncher;

/** Finds the launcher currently serving a core; thread-safe. */
@FunctionalInterface
interface LauncherLookup {

    /**
     * @param coreId 0 for the proxy's own core, &gt;= 1 for another core
     * @return the launcher, or {@code null} when none is registered for that kind of core
     */
    ProcessLauncher launcher(int coreId);
}
