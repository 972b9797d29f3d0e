package org.mpiproxy.launcher;

import java.nio.file.Path;
import java.util.function.UnaryOperator;

/**
 * Default directories of the launchers, resolved from the Karaf system properties
 * {@code karaf.home} and {@code karaf.data}, falling back to {@code user.dir}.
 * Pure functions of a property lookup; thread-safe.
 */
public final class LauncherDirectories {

    private LauncherDirectories() {
    }

    /**
     * @param configured the configured directory; {@code null} or blank selects the default
     * @param properties system property lookup, usually {@code System::getProperty}
     * @return {@code configured}, or {@code ${karaf.home}/programs}
     */
    public static Path programDirectory(String configured, UnaryOperator<String> properties) {
        if (!isBlank(configured)) {
            return Path.of(configured.trim());
        }
        return home(properties).resolve("programs");
    }

    /**
     * @param configured the configured directory; {@code null} or blank selects the default
     * @param properties system property lookup, usually {@code System::getProperty}
     * @param relative   the default's path below the data directory, such as
     *                   {@code mpiproxy/images}
     * @return {@code configured}, or {@code ${karaf.data}/<relative>}
     */
    public static Path dataDirectory(String configured, UnaryOperator<String> properties, String relative) {
        if (!isBlank(configured)) {
            return Path.of(configured.trim());
        }
        return data(properties).resolve(relative);
    }

    /**
     * @param properties system property lookup
     * @return {@code karaf.home}, else {@code user.dir}
     */
    public static Path home(UnaryOperator<String> properties) {
        String home = properties.apply("karaf.home");
        return isBlank(home) ? userDir(properties) : Path.of(home);
    }

    /**
     * @param properties system property lookup
     * @return {@code karaf.data}, else {@code ${karaf.home}/data}, else {@code ${user.dir}/data}
     */
    public static Path data(UnaryOperator<String> properties) {
        String data = properties.apply("karaf.data");
        return isBlank(data) ? home(properties).resolve("data") : Path.of(data);
    }

    private static Path userDir(UnaryOperator<String> properties) {
        String dir = properties.apply("user.dir");
        return Path.of(isBlank(dir) ? "." : dir);
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
