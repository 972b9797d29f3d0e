package org.mpiproxy.process;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankIdentity;

/**
 * The ranks' log files, readable by their owner only: a job's directory below the log directory
 * is made {@code rwx------} and its files {@code rw-------}. Where the proxy gave the log directory
 * to a group ({@code rwxr-x---}, the proxy's {@code log.group}), job directories are made
 * {@code rwxr-x---} and files {@code rw-r-----}, both of that group. The job directory of a job
 * started by a user (docs/protocol-v2.md 4.1) and its files are that user's, owner-only. A directory
 * that exists and is another user's, or writable by others, is refused; files are opened without
 * following a link, and only a regular file of one name is written. Stateless and thread-safe.
 */
public final class RankLogFiles {

    /** {@code rw-------}. */
    static final Set<PosixFilePermission> FILE_OWNER_ONLY = Set.copyOf(EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE));
    /** {@code rw-r-----}. */
    static final Set<PosixFilePermission> FILE_GROUP_READ = Set.copyOf(EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.GROUP_READ));
    /** {@code rwxr-x---}: the log directory of a log group, and its jobs' directories. */
    public static final Set<PosixFilePermission> DIRECTORY_GROUP_READ = Set.copyOf(EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE,
            PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_EXECUTE));

    private RankLogFiles() {
    }

    /**
     * Makes a job's log directory, or checks the one that is there: its parent (the log
     * directory) is made owner-only when missing and must be usable ({@link PrivateDirectories#problem});
     * the job's directory takes the parent's group access (above). What an existing directory
     * gives others is taken away.
     *
     * @param jobDirectory the job's log directory
     * @return {@code jobDirectory}
     * @throws IOException with one line naming the refused directory and why
     */
    public static Path directory(Path jobDirectory) throws IOException {
        return directory(jobDirectory, null);
    }

    /**
     * As {@link #directory(Path)}; with a user (a job started under a job credential,
     * docs/protocol-v2.md 4.1) the job's directory is that user's, {@code rwx------} whatever the
     * parent's group access, and its files go to the user too ({@link #append}). An existing one
     * must be this process's user's or that user's.
     *
     * @param jobDirectory the job's log directory
     * @param user         the user the job's ranks run as, {@code null} for none
     * @return {@code jobDirectory}
     * @throws IOException with one line naming the refused directory and why
     */
    public static Path directory(Path jobDirectory, RankIdentity user) throws IOException {
        Path absolute = jobDirectory.toAbsolutePath();
        Path root = absolute.getParent();
        if (root != null) {
            PrivateDirectories.ensure(root, PrivateDirectories.OWNER_ONLY, "log directory " + root);
        }
        if (user != null) {
            return userDirectory(jobDirectory, user);
        }
        GroupPrincipal group = root == null ? null : readableGroup(root);
        if (group == null || Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
            return PrivateDirectories.restrict(jobDirectory, group == null ? PrivateDirectories.OWNER_ONLY
                    : DIRECTORY_GROUP_READ, "log directory " + jobDirectory);
        }
        PrivateDirectories.ensure(jobDirectory, DIRECTORY_GROUP_READ, "log directory " + jobDirectory);
        PosixFileAttributeView view = view(absolute);
        view.setGroup(group);
        return jobDirectory;
    }

    /** The job's directory of a user: made owner-only, or checked, and given to the user. */
    private static Path userDirectory(Path jobDirectory, RankIdentity user) throws IOException {
        Path absolute = jobDirectory.toAbsolutePath();
        String what = "log directory " + jobDirectory;
        if (!absolute.getFileSystem().supportedFileAttributeViews().contains("posix") || !UserFiles.available()) {
            throw new IOException(what + " cannot be given to " + user + " here (no POSIX file system or no JNA)");
        }
        PosixFileAttributes existing = attributesOrNull(absolute);
        if (existing == null) {
            try {
                PrivateDirectories.ensure(jobDirectory, PrivateDirectories.OWNER_ONLY, what);
            } catch (IOException e) {
                // the job's ranks start at once: another one made it meanwhile and gave it to the user
                existing = attributesOrNull(absolute);
                if (existing == null) {
                    throw e;
                }
            }
        }
        if (existing != null) {
            if (existing.isSymbolicLink() || !existing.isDirectory()) {
                throw new IOException(what + (existing.isSymbolicLink() ? " is a symbolic link"
                        : " exists and is not a directory") + "; refusing to use it");
            }
            long owner = ((Number) Files.getAttribute(absolute, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
            long self = PrivateDirectories.currentUid();
            if (owner != self && owner != user.uid()) {
                throw new IOException(what + " is owned by uid " + owner + ", not by uid " + self
                        + " that runs the proxy or uid " + user.uid() + " the ranks run as; refusing to use it");
            }
        }
        UserFiles.give(absolute, "log directory", true, 0700, user);
        return jobDirectory;
    }

    /** @return the path's own attributes (a link's, not its target's), or {@code null} when there is nothing */
    private static PosixFileAttributes attributesOrNull(Path absolute) throws IOException {
        try {
            return Files.readAttributes(absolute, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Opens a rank's log file for appending, made when missing: {@code rw-------}, or
     * {@code rw-r-----} of the directory's group where the directory is {@code rwxr-x---}; an
     * existing file's other permissions are taken away. In a directory given to a rank's user
     * ({@link #directory(Path, RankIdentity)}) the file is that user's, {@code rw-------}. A symbolic
     * link in the file's place fails the open (it is not followed), as does anything but a regular
     * file of one name, or a file of another user.
     *
     * @param file the log file
     * @return the stream, appending
     * @throws IOException naming the file when it cannot be opened so
     */
    public static OutputStream append(Path file) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path directory = absolute.getParent();
        boolean posix = absolute.getFileSystem().supportedFileAttributeViews().contains("posix");
        long[] user = posix && directory != null ? userOf(directory) : null;
        GroupPrincipal group = user != null || directory == null ? null : readableGroup(directory);
        Set<PosixFilePermission> mode = group == null ? FILE_OWNER_ONLY : FILE_GROUP_READ;
        if (posix && UserFiles.available()) {
            long gid = user != null ? user[1] : group == null ? -1
                    : ((Number) Files.getAttribute(directory, "unix:gid", LinkOption.NOFOLLOW_LINKS)).longValue();
            try {
                return UserFiles.append(absolute, "log file", group == null ? 0600 : 0640,
                        user != null ? user[0] : -1, gid);
            } catch (IOException e) {
                throw e.getMessage() != null && e.getMessage().startsWith("log file ") ? e
                        : new IOException("log file " + file + ": " + e.getMessage(), e);
            }
        }
        if (user != null) {
            throw new IOException("log file " + file + " cannot be given to " + user[0] + ":" + user[1] + " here");
        }
        try {
            PosixFileAttributes existing = posix
                    ? Files.readAttributes(absolute, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS) : null;
            if (existing != null && !existing.isRegularFile()) {
                throw new IOException("log file " + file + " is " + (existing.isSymbolicLink() ? "a symbolic link"
                        : "not a regular file") + "; refusing to write it");
            }
        } catch (NoSuchFileException e) {
            // made below
        }
        Set<StandardOpenOption> options = EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
        java.nio.channels.SeekableByteChannel channel;
        try {
            if (posix) {
                Set<java.nio.file.OpenOption> noFollow = new java.util.HashSet<>(options);
                noFollow.add(LinkOption.NOFOLLOW_LINKS);
                channel = Files.newByteChannel(absolute, noFollow, PosixFilePermissions.asFileAttribute(mode));
            } else {
                channel = Files.newByteChannel(absolute, options);
            }
        } catch (IOException e) {
            if (Files.isSymbolicLink(absolute)) {
                throw new IOException("log file " + file + " is a symbolic link; refusing to write it", e);
            }
            throw e;
        }
        try {
            if (posix) {
                PosixFileAttributeView view = view(absolute);
                PosixFileAttributes now = view.readAttributes();
                if (!now.permissions().equals(mode)) {
                    view.setPermissions(mode);
                }
                if (group != null && !now.group().equals(group)) {
                    view.setGroup(group);
                }
            }
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return Channels.newOutputStream(channel);
    }

    /**
     * @return {uid, gid} of a directory given to a rank's user (one this process's user, root, does
     *         not own), else {@code null}
     */
    private static long[] userOf(Path directory) {
        try {
            Map<String, Object> a = Files.readAttributes(directory, "unix:uid,gid", LinkOption.NOFOLLOW_LINKS);
            long uid = ((Number) a.get("uid")).longValue();
            long self = PrivateDirectories.currentUid();
            return self == 0 && uid != 0 ? new long[] {uid, ((Number) a.get("gid")).longValue()} : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * @return the directory's group when it lets its group read and search it and others nothing
     *         ({@code rwxr-x---}), else {@code null}
     */
    private static GroupPrincipal readableGroup(Path directory) {
        try {
            PosixFileAttributes a = Files.readAttributes(directory, PosixFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            Set<PosixFilePermission> p = a.permissions();
            boolean groupReads = p.contains(PosixFilePermission.GROUP_READ)
                    && p.contains(PosixFilePermission.GROUP_EXECUTE);
            boolean othersNothing = !p.contains(PosixFilePermission.OTHERS_READ)
                    && !p.contains(PosixFilePermission.OTHERS_WRITE) && !p.contains(PosixFilePermission.OTHERS_EXECUTE);
            return a.isDirectory() && groupReads && othersNothing ? a.group() : null;
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static PosixFileAttributeView view(Path path) {
        return Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
    }
}
