/**
 * The PMI-1 wire protocol of MPICH's "simple" PMI, server side: parsing a client's lines
 * ({@link org.mpiproxy.protocol.pmi.PmiLine}) and answering one rank's connection
 * ({@link org.mpiproxy.protocol.pmi.PmiSession}) over a job's key-value space and barrier,
 * which the caller provides. Used by the node proxies and the launcher.
 */
@Export
@Version("0.1.0")
package org.mpiproxy.protocol.pmi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
