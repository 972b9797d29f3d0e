/**
 * The PMI-1 and PMI-2 wire protocols of the MPICH family's process-manager interface, server
 * side: parsing a client's PMI-1 lines ({@link org.mpiproxy.protocol.pmi.PmiLine}) and PMI-2
 * messages ({@link org.mpiproxy.protocol.pmi.Pmi2Wire}), answering one rank's connection
 * ({@link org.mpiproxy.protocol.pmi.PmiSession}, {@link org.mpiproxy.protocol.pmi.Pmi2Session})
 * over a job's key-value space, node attributes and fences, which the caller provides, and the
 * server that tells the two apart on each connection
 * ({@link org.mpiproxy.protocol.pmi.PmiServer}). Used by the node proxies and the launcher.
 */
@Export
@Version("0.3.0")
package org.mpiproxy.protocol.pmi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
