/**
 * Service interfaces and value types shared by the MPI proxy's bundles: shared-memory
 * channels, process launchers, the datagram transport and the read-only view of jobs.
 */
@Export
@Version("0.9.0")
package org.mpiproxy.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
