/**
 * The MPI library for programs started through the proxy: the Java counterpart of FreeNOS's
 * libmpi. One program is both the host (rank 0, run by the user with a hostfile) and the ranks
 * (started by the proxies with {@code --slave}); {@link org.mpiproxy.mpi.Mpi#init} tells which.
 */
@Export
@Version("0.4.0")
package org.mpiproxy.mpi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
