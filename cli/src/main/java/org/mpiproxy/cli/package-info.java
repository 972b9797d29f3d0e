/**
 * The {@code mpiproxy} command-line launcher: where a job's ranks go (hostfiles, host lists,
 * Slurm allocations, node maps), starting rank 0 here with its world in the environment, tagging
 * output, stopping the job on every node. A runnable jar (the standalone launcher) that is also an
 * OSGi bundle: in the proxy, {@link org.mpiproxy.cli.LocalRunComponent} runs {@code mpiproxy run}
 * for the thin front (docs/protocol-v2.md 4.4). Nothing is exported.
 */
package org.mpiproxy.cli;
