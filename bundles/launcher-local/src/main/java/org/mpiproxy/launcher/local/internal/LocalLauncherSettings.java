package org.mpiproxy.launcher.local.internal;

import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;

import org.mpiproxy.process.LauncherDirectories;
import org.mpiproxy.process.RankEnvironment;
import org.mpiproxy.process.RankUser;

/**
 * Validated configuration of the local launcher.
 *
 * @param programDirectory where programs are looked up
 * @param allowlist        variables of the proxy's environment ranks get
 * @param rankUser         {uid, gid} ranks run as, or {@code null} for the proxy's own user
 * @param programPath      directories searched after {@code programDirectory} for plain requests
 */
record LocalLauncherSettings(Path programDirectory, List<String> allowlist, long[] rankUser, List<Path> programPath) {

    /**
     * @param config     the configuration
     * @param properties system property lookup, usually {@code System::getProperty}
     * @param root       whether the proxy runs as root (a rank user needs it)
     * @return the settings
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static LocalLauncherSettings of(LocalLauncherComponent.Config config, UnaryOperator<String> properties,
                                    boolean root) {
        Path programs = LauncherDirectories.checkedDirectory("program.directory", config.program_directory(),
                LauncherDirectories.programDirectory("", properties));
        List<String> allowlist = RankEnvironment.parseAllowlist(config.environment_allowlist());
        List<Path> path = new java.util.ArrayList<>();
        for (String entry : config.program_path().split(",")) {
            if (!entry.isBlank()) {
                path.add(LauncherDirectories.checkedDirectory("program.path", entry.strip(), null));
            }
        }
        return new LocalLauncherSettings(programs, allowlist, RankUser.parse(config.rank_user(), root),
                List.copyOf(path));
    }
}
