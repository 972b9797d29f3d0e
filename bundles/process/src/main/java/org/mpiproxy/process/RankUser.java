package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The {@code rank.user} setting of the launchers: the unprivileged user ranks run as when the
 * proxy runs as root. Stateless and thread-safe.
 */
public final class RankUser {

    /** The configuration key, as named in messages. */
    public static final String KEY = "rank.user";

    private RankUser() {
    }

    /**
     * @param value {@code <uid>:<gid>} (numeric), or empty
     * @param root  whether the proxy runs as root
     * @return {uid, gid}, or {@code null} for empty
     * @throws IllegalArgumentException naming {@code rank.user} and the value when it is malformed,
     *                                  or set while the proxy does not run as root
     */
    public static long[] parse(String value, boolean root) {
        long[] user = RankCommand.parseUser(value);
        if (user != null && !root) {
            throw new IllegalArgumentException(KEY + "=" + value + " needs the proxy to run as root");
        }
        return user;
    }

    /** @return {@code true} when this process's effective user is root (the owner of {@code /proc/self}) */
    public static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue() == 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
