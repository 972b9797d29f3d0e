/**
 * Wire formats of the proxy: MPI datatype and error codes, the v1 (FreeNOS) header descriptor
 * and flyweight, the v2 header descriptor and flyweight with its authentication (cluster keys,
 * node ids, the replay cache), and the EXEC command parser. Shared by the proxy and the MPI library.
 */
@Export
@Version("0.12.0")
package org.mpiproxy.protocol;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
