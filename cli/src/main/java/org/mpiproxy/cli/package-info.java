/**
 * The {@code mpiproxy} command-line launcher: where a job's ranks go (hostfiles, host lists,
 * Slurm allocations, node maps), starting rank 0 here with its world in the environment, tagging
 * output, stopping the job on every node. A plain Java program, not an OSGi bundle.
 */
package org.mpiproxy.cli;
