package org.mpiproxy.launcher.core.internal;

import java.nio.file.Path;
import java.util.List;
import java.util.function.UnaryOperator;

import org.mpiproxy.process.LauncherDirectories;
import org.mpiproxy.process.RankEnvironment;
import org.mpiproxy.process.RankUser;

/**
 * Validated configuration of the remote-core launcher.
 *
 * @param programDirectory where the images are looked up
 * @param cacheDirectory   where decompressed images are kept
 * @param maxImageSize     largest decompressed image, in bytes
 * @param digests          the images accepted
 * @param allowlist        variables of the proxy's environment ranks get
 * @param rankUser         {uid, gid} ranks run as, or {@code null} for the proxy's own user
 */
record CoreLauncherSettings(Path programDirectory, Path cacheDirectory, long maxImageSize, ImageDigests digests,
                            List<String> allowlist, long[] rankUser) {

    /**
     * @param config     the configuration
     * @param properties system property lookup, usually {@code System::getProperty}
     * @param root       whether the proxy runs as root (a rank user needs it)
     * @return the settings
     * @throws IllegalArgumentException naming the first bad key and its value
     */
    static CoreLauncherSettings of(CoreLauncherComponent.Config config, UnaryOperator<String> properties,
                                   boolean root) {
        Path programs = LauncherDirectories.checkedDirectory("program.directory", config.program_directory(),
                LauncherDirectories.programDirectory("", properties));
        Path cache = LauncherDirectories.checkedDirectory("cache.directory", config.cache_directory(),
                LauncherDirectories.dataDirectory("", properties, "mpiproxy/images"));
        long maxImageSize = config.max_image_size();
        if (maxImageSize <= 0) {
            throw new IllegalArgumentException("max.image.size=" + maxImageSize + " must be > 0");
        }
        ImageDigests digests = CoreLauncherComponent.digests(config.image_digests());
        List<String> allowlist = RankEnvironment.parseAllowlist(config.environment_allowlist());
        return new CoreLauncherSettings(programs, cache, maxImageSize, digests, allowlist,
                RankUser.parse(config.rank_user(), root));
    }
}
