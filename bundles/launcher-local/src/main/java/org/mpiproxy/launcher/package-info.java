/**
 * Process spawning shared by the rank launchers: the rank command line and environment
 * ({@link org.mpiproxy.launcher.RankCommand}), program lookup
 * ({@link org.mpiproxy.launcher.ProgramFiles}), default directories
 * ({@link org.mpiproxy.launcher.LauncherDirectories}), starting a process with its output
 * redirected ({@link org.mpiproxy.launcher.RankProcessStarter}) and the
 * {@link org.mpiproxy.api.RankProcess} over a {@link java.lang.Process}
 * ({@link org.mpiproxy.launcher.SpawnedRankProcess}).
 */
@Export
@Version("0.2.0")
package org.mpiproxy.launcher;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
