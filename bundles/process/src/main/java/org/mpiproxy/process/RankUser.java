package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.RankIdentity;

/**
 * Whom ranks run as: the user of a job started under a job credential (a request's
 * {@link org.mpiproxy.api.LaunchRequest#user()}, docs/protocol-v2.md 4.1), else the launchers'
 * {@code rank.user} setting, the unprivileged user ranks run as when the proxy runs as root, else
 * the proxy's own user. Stateless and thread-safe.
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

    /**
     * The user a request's rank runs as, and whose its files are.
     *
     * @param user the request's user, {@code null} for a job started under a cluster key
     * @return {@code user}; {@code null} when it is {@code null} or the proxy's own (not root)
     *         user and group, so the rank runs as the proxy's user as it is
     * @throws LaunchException in one line when the proxy does not run as root and {@code user} is
     *                         not its own user and group: the rank is not started
     */
    public static RankIdentity requested(RankIdentity user) throws LaunchException {
        return requested(user, isRoot(), self());
    }

    /**
     * As {@link #requested(RankIdentity)}.
     *
     * @param root whether the proxy runs as root
     * @param self the proxy's {uid, gid}, {@code null} when unknown
     */
    static RankIdentity requested(RankIdentity user, boolean root, long[] self) throws LaunchException {
        if (user == null || root) {
            return user;
        }
        if (self != null && self[0] == user.uid() && self[1] == user.gid()) {
            return null;
        }
        throw new LaunchException("cannot run the rank as " + user + ": the proxy runs as "
                + (self == null ? "another user" : self[0] + ":" + self[1]) + ", not as root");
    }

    /** @return this process's effective {uid, gid} (the owner of {@code /proc/self}), {@code null} when unknown */
    static long[] self() {
        try {
            Map<String, Object> a = Files.readAttributes(Path.of("/proc/self"), "unix:uid,gid");
            return new long[] {((Number) a.get("uid")).longValue(), ((Number) a.get("gid")).longValue()};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The C library's user database (NSS), as {@code setpriv} asks it. */
    interface Passwd extends Library {
        int getpwuid_r(int uid, Pointer entry, Pointer buffer, long size, PointerByReference result);
    }

    private static final int ERANGE = 34;
    private static final Passwd PASSWD = loadPasswd();

    private static Passwd loadPasswd() {
        try {
            return Native.load("c", Passwd.class);
        } catch (LinkageError | RuntimeException e) {
            return null;
        }
    }

    /**
     * @param uid a user id
     * @return whether the node's user database has an entry for it ({@code getpwuid}, so that
     *         {@code setpriv --init-groups} can find its groups); {@code false} when it cannot be asked
     */
    public static boolean known(long uid) {
        if (PASSWD == null) {
            return RankWorkingDirectory.homeOf(uid) != null;
        }
        Memory entry = new Memory(128);
        for (long size = 16 * 1024; size <= 1024 * 1024; size *= 4) {
            Memory buffer = new Memory(size);
            PointerByReference result = new PointerByReference();
            int error = PASSWD.getpwuid_r((int) uid, entry, buffer, size, result);
            if (error == 0) {
                return result.getValue() != null;
            }
            if (error != ERANGE) {
                return false;
            }
        }
        return false;
    }
}
