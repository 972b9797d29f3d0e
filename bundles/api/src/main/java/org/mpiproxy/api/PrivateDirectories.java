package org.mpiproxy.api;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Set;

/**
 * The directories the proxy writes on a node that many users share (shared-memory channels, rank
 * logs, state, staged programs): made by the proxy's own user with a restrictive mode, and
 * refused when they exist as a symbolic link, owned by another user, or writable by the group or
 * by others, so that nobody else can add, rename or replace what the proxy reads and writes in
 * them. Linux and other POSIX file systems; where the file system has no POSIX permissions the
 * directories are made and nothing is checked. Stateless and thread-safe.
 */
public final class PrivateDirectories {

    /** {@code rwx------}: the mode of a directory only its owner uses. */
    public static final Set<PosixFilePermission> OWNER_ONLY = Set.copyOf(EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE));

    /** {@code rwx--x--x}: others may pass through to a name they know, but not list or change it. */
    public static final Set<PosixFilePermission> SEARCH_ONLY = Set.copyOf(EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_EXECUTE));

    private PrivateDirectories() {
    }

    /** @return the effective user id of this process (the owner of {@code /proc/self}), or -1 when unknown */
    public static long currentUid() {
        try {
            return ((Number) Files.getAttribute(Paths.get("/proc/self"), "unix:uid")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Says why an existing directory must not be used.
     *
     * @param directory the directory
     * @param what      how the message names it, such as {@code base.directory=/dev/shm/mpiproxy}
     * @return {@code null} when it does not exist or may be used, else one line: {@code <what> is a
     *         symbolic link}, {@code exists and is not a directory}, {@code is owned by uid <n>, not by
     *         uid <m> that runs the proxy}, or {@code can be written by its group or others (<mode>)},
     *         each ending {@code ; refusing to use it}
     */
    public static String problem(Path directory, String what) {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(directory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException e) {
            return Files.isSymbolicLink(directory) ? what + " is a symbolic link; refusing to use it" : null;
        } catch (IOException e) {
            return what + " cannot be inspected (" + e + "); refusing to use it";
        }
        if (attributes.isSymbolicLink()) {
            return what + " is a symbolic link; refusing to use it";
        }
        if (!attributes.isDirectory()) {
            return what + " exists and is not a directory";
        }
        long self = currentUid();
        long owner = uid(directory);
        if (self >= 0 && owner >= 0 && owner != self) {
            return what + " is owned by uid " + owner + ", not by uid " + self + " that runs the proxy; refusing"
                    + " to use it (remove it, or give it to uid " + self + " with mode 700)";
        }
        if (self < 0 || owner < 0) {
            String user = System.getProperty("user.name");
            String name = attributes.owner().getName();
            if (user != null && !user.equals(name)) {
                return what + " is owned by " + name + ", not by " + user + " that runs the proxy; refusing to use it";
            }
        }
        Set<PosixFilePermission> permissions = attributes.permissions();
        if (permissions.contains(PosixFilePermission.GROUP_WRITE) || permissions.contains(PosixFilePermission.OTHERS_WRITE)) {
            return what + " can be written by its group or others (" + PosixFilePermissions.toString(permissions)
                    + "); refusing to use it";
        }
        return null;
    }

    /**
     * As {@link #ensure}, and an existing directory's permissions beyond {@code mode} are taken
     * away: for a directory whose mode the caller decides (one an earlier version made more open).
     *
     * @param directory the directory
     * @param mode      the most it may allow, such as {@link #OWNER_ONLY}
     * @param what      how messages name it, such as {@code log.directory=/var/log/mpiproxy}
     * @return {@code directory}
     * @throws IOException with the one line of {@link #problem} when it exists and must not be used,
     *                     or when it cannot be made or changed
     */
    public static Path restrict(Path directory, Set<PosixFilePermission> mode, String what) throws IOException {
        ensure(directory, mode, what);
        Path absolute = directory.toAbsolutePath();
        if (absolute.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            PosixFileAttributeView view = view(absolute);
            Set<PosixFilePermission> now = view.readAttributes().permissions();
            if (!mode.containsAll(now)) {
                Set<PosixFilePermission> narrowed = EnumSet.noneOf(PosixFilePermission.class);
                narrowed.addAll(now);
                narrowed.retainAll(mode);
                view.setPermissions(narrowed);
            }
        }
        return directory;
    }

    /**
     * Makes a directory the proxy writes, or checks the one that is there. A missing directory is
     * made with {@code mode} (its missing parents with {@link #SEARCH_ONLY}); an existing one must
     * pass {@link #problem}, and is left as it is.
     *
     * @param directory the directory
     * @param mode      the mode of the directory when it is made, such as {@link #OWNER_ONLY}
     * @param what      how messages name it, such as {@code log.directory=/var/log/mpiproxy}
     * @return {@code directory}
     * @throws IOException with the one line of {@link #problem} when it exists and must not be used,
     *                     or when it cannot be made
     */
    public static Path ensure(Path directory, Set<PosixFilePermission> mode, String what) throws IOException {
        Path absolute = directory.toAbsolutePath();
        boolean posix = absolute.getFileSystem().supportedFileAttributeViews().contains("posix");
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = absolute; p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
            missing.push(p);
        }
        while (!missing.isEmpty()) {
            Path p = missing.pop();
            Set<PosixFilePermission> wanted = missing.isEmpty() ? mode : SEARCH_ONLY;
            try {
                if (posix) {
                    Files.createDirectory(p, PosixFilePermissions.asFileAttribute(wanted));
                    // the process's umask may have taken bits the mode gives
                    view(p).setPermissions(wanted);
                } else {
                    Files.createDirectory(p);
                }
            } catch (FileAlreadyExistsException e) {
                // made at the same moment by someone else: checked below like any existing one
                if (!missing.isEmpty()) {
                    String problem = problem(p, p.toString());
                    if (problem != null) {
                        throw new IOException(what + ": " + problem);
                    }
                }
            }
        }
        String problem = problem(absolute, what);
        if (problem != null) {
            throw new IOException(problem);
        }
        return directory;
    }

    private static PosixFileAttributeView view(Path directory) {
        return Files.getFileAttributeView(directory, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    }

    /** @return the numeric owner of a path (not followed), or -1 when the file system does not tell */
    private static long uid(Path path) {
        try {
            return ((Number) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
