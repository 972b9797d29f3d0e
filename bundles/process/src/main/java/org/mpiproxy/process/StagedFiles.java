package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;

import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.RankIdentity;

/**
 * Where programs a host staged to a node live (docs/protocol-v2.md 5.8), and what they are
 * called there: {@code sha256-<64 hex digits>} of their content, in
 * {@code ${karaf.data}/mpiproxy/staged} when a holder of the cluster key staged them (shared by
 * every job), in {@code staged/u<uid>} when a user did with her job key (4.1): that directory is
 * hers ({@code rwx------}) and only her jobs look there, before the shared one. The proxy writes
 * them; the launchers run them for plain EXECs that name them. Stateless and thread-safe.
 */
public final class StagedFiles {

    /** The start of every staged program's name; the rest is its SHA-256 in hexadecimal. */
    public static final String PREFIX = "sha256-";
    /** The start of the name of a user's own directory of staged programs; the rest is her uid. */
    public static final String USER_PREFIX = "u";

    private StagedFiles() {
    }

    /**
     * @param properties system property lookup, usually {@code System::getProperty}
     * @return the directory of staged programs
     */
    public static Path directory(UnaryOperator<String> properties) {
        return LauncherDirectories.dataDirectory("", properties, "mpiproxy/staged");
    }

    /**
     * @param staged the directory of staged programs ({@link #directory})
     * @param uid    a user
     * @return the directory of the programs that user staged, {@code <staged>/u<uid>}
     */
    public static Path userDirectory(Path staged, long uid) {
        return staged.resolve(USER_PREFIX + uid);
    }

    /**
     * Says why a user's directory of staged programs must not be used: only a directory of hers that
     * nobody else may write holds her programs.
     *
     * @param directory the user's directory ({@link #userDirectory})
     * @param uid       the user
     * @return {@code null} when it does not exist or may be used, else one line: {@code staged
     *         directory <d> is a symbolic link}, {@code exists and is not a directory}, {@code is owned
     *         by uid <n>, not by uid <uid> whose programs it holds}, or {@code can be written by its
     *         group or others (<mode>)}, each ending {@code ; refusing to use it}
     */
    public static String problem(Path directory, long uid) {
        String what = "staged directory " + directory;
        PosixFileAttributes a;
        long owner;
        try {
            a = Files.readAttributes(directory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            owner = ((Number) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException | RuntimeException e) {
            return what + " cannot be inspected (" + e + "); refusing to use it";
        }
        if (a.isSymbolicLink()) {
            return what + " is a symbolic link; refusing to use it";
        }
        if (!a.isDirectory()) {
            return what + " exists and is not a directory; refusing to use it";
        }
        if (owner != uid) {
            return what + " is owned by uid " + owner + ", not by uid " + uid + " whose programs it holds;"
                    + " refusing to use it";
        }
        if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
            return what + " can be written by its group or others ("
                    + PosixFilePermissions.toString(a.permissions()) + "); refusing to use it";
        }
        return null;
    }

    /**
     * Where a job's staged program is looked up, in order: a user's job in her own directory, then
     * in the shared one (programs the node's operators staged); a job started under a cluster key in
     * the shared one only. Never in another user's.
     *
     * @param staged the directory of staged programs ({@link #directory})
     * @param user   the job's user ({@link org.mpiproxy.api.LaunchRequest#user()}), {@code null} under
     *               a cluster key
     * @return the directories, the user's first (whether it exists or not)
     * @throws LaunchException with the one line of {@link #problem} when the user's directory exists
     *                         and must not be used
     */
    public static List<Path> directories(Path staged, RankIdentity user) throws LaunchException {
        if (user == null) {
            return List.of(staged);
        }
        Path own = userDirectory(staged, user.uid());
        String problem = problem(own, user.uid());
        if (problem != null) {
            throw new LaunchException(problem);
        }
        return List.of(own, staged);
    }

    /**
     * @param sha256 a content's digest, 32 bytes
     * @return the name of a program with that content
     */
    public static String name(byte[] sha256) {
        return PREFIX + HexFormat.of().formatHex(sha256);
    }
}
