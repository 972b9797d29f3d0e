package org.mpiproxy.process;

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
     * Validates a configured directory and resolves the default; a directory that does not
     * exist yet is accepted (the health check reports it), so that it can be created later.
     *
     * @param key        the configuration key, for the message
     * @param configured the configured directory; {@code null} or blank selects {@code fallback}
     * @param fallback   the default
     * @return the directory
     * @throws IllegalArgumentException naming {@code key} and the value when it is not a valid
     *                                  path, not absolute, or names something other than a directory
     */
    public static Path checkedDirectory(String key, String configured, Path fallback) {
        if (isBlank(configured)) {
            return fallback;
        }
        Path path;
        try {
            path = Path.of(configured.trim());
        } catch (java.nio.file.InvalidPathException e) {
            throw new IllegalArgumentException(key + "=" + configured + " is not a valid path: " + e.getReason(), e);
        }
        if (!path.isAbsolute()) {
            throw new IllegalArgumentException(key + "=" + configured + " must be an absolute path");
        }
        if (java.nio.file.Files.exists(path) && !java.nio.file.Files.isDirectory(path)) {
            throw new IllegalArgumentException(key + "=" + configured + " exists and is not a directory");
        }
        return path.normalize();
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
