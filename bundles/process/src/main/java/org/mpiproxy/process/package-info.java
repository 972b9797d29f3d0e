/**
 * The process library of the rank launchers and the proxy, a bundle of its own: the rank command
 * line and environment
 * ({@link org.mpiproxy.process.RankCommand}), program lookup
 * ({@link org.mpiproxy.process.ProgramFiles}), default directories
 * ({@link org.mpiproxy.process.LauncherDirectories}), starting a process with its output
 * redirected ({@link org.mpiproxy.process.RankProcessStarter}) to log files readable by their owner
 * ({@link org.mpiproxy.process.RankLogFiles}) and the
 * {@link org.mpiproxy.api.RankProcess} over a {@link java.lang.Process}
 * ({@link org.mpiproxy.process.SpawnedRankProcess}), ranks a previous JVM of the node started
 * ({@link org.mpiproxy.process.AdoptedRankProcess}, {@link org.mpiproxy.process.RankFifos},
 * {@link org.mpiproxy.process.KeeperFiles}), process groups and their signals
 * ({@link org.mpiproxy.process.ProcessGroup}), {@code /proc} ({@link org.mpiproxy.process.ProcStat}) and the
 * unprivileged user ranks run as ({@link org.mpiproxy.process.RankUser}), the ids of user and group
 * names ({@link org.mpiproxy.process.UnixIds}), where staged programs are, shared or a user's
 * own ({@link org.mpiproxy.process.StagedFiles}), and MUNGE credentials ({@link org.mpiproxy.process.Munge}).
 */
@Export
@Version("0.9.0")
package org.mpiproxy.process;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
