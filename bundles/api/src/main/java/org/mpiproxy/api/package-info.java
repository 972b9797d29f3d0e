/**
 * Service interfaces and value types shared by the MPI proxy's bundles: shared-memory
 * channels, process launchers, the datagram transport, the read-only view of jobs, and the
 * checks of the directories the proxy writes.
 */
@Export
@Version("0.12.0")
package org.mpiproxy.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
