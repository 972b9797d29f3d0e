package org.mpiproxy.process;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import com.sun.jna.Library;
import com.sun.jna.Native;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankIdentity;

/**
 * The files a rank's user gets (docs/protocol-v2.md 4.1): its log files, its log directory, its
 * channel file and the channel's job directory. Each is opened without following a symbolic link
 * ({@code O_NOFOLLOW}) and checked through its descriptor before it is written or given away
 * ({@code fchown}, {@code fchmod}): a name swapped for a link, a FIFO, or a second name of
 * another file (a hard link) is refused, never written or given to the user. Linux with glibc
 * through JNA; {@link #available()} says whether it can be used. Stateless and thread-safe.
 */
final class UserFiles {

    /** The C library's functions this class calls. */
    interface LibC extends Library {
        int open(String path, int flags, int mode);

        int fchown(int fd, int uid, int gid);

        int fchmod(int fd, int mode);

        int close(int fd);

        String strerror(int error);
    }

    private static final int O_RDONLY = 0;
    private static final int O_WRONLY = 1;
    private static final int O_CREAT = 0100;
    private static final int O_NOCTTY = 0400;
    private static final int O_APPEND = 02000;
    private static final int ELOOP = 40;
    private static final int S_IFMT = 0170000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFDIR = 0040000;

    /** How the channel manager names a job's directory: {@code job-<uid>-<16 hex>}. */
    static final String JOB_PREFIX = "job-";

    private static final LibC LIBC = load();

    private UserFiles() {
    }

    private static LibC load() {
        try {
            return Native.load("c", LibC.class);
        } catch (LinkageError | RuntimeException e) {
            return null;
        }
    }

    /** @return whether files can be opened and given away through their descriptors here */
    static boolean available() {
        return LIBC != null;
    }

    /**
     * Opens a file for appending, made with {@code mode} when missing: not through a symbolic link,
     * without waiting (a FIFO in its place without a reader fails), and only a regular file with
     * one name owned by this process's user or by {@code owner}. Its owner and mode are then set.
     *
     * @param file  the file
     * @param what  how messages name it, such as {@code log file}
     * @param mode  its permission bits
     * @param uid   the owner it gets, -1 to leave it
     * @param gid   the group it gets, -1 to leave it
     * @return the stream, appending
     * @throws IOException with one line naming the file and why it is refused
     */
    static OutputStream append(Path file, String what, int mode, long uid, long gid) throws IOException {
        int fd = open(file, what, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY | RankFifos.O_NONBLOCK
                | RankFifos.O_CLOEXEC, mode);
        try {
            checkRegular(fd, file, what, uid);
            give(fd, file, what, mode, uid, gid);
            // a stream of its own on the very file opened (its /proc/self/fd entry leads to it)
            return new FileOutputStream("/proc/self/fd/" + fd, true);
        } finally {
            LIBC.close(fd);
        }
    }

    /**
     * Gives an existing directory, or regular file of one name, to a user with {@code mode}: opened
     * without following a link, checked and changed through its descriptor.
     *
     * @param path      the directory or file
     * @param what      how messages name it, such as {@code channel file}
     * @param directory whether it must be a directory (else a regular file)
     * @param mode      its permission bits
     * @param user      the user it goes to
     * @throws IOException with one line naming it and why it cannot be given
     */
    static void give(Path path, String what, boolean directory, int mode, RankIdentity user) throws IOException {
        int fd = open(path, what, O_RDONLY | O_NOCTTY | RankFifos.O_NONBLOCK | RankFifos.O_CLOEXEC, 0);
        try {
            if (directory) {
                Map<String, Object> a = attributes(fd, path, what);
                if (((Integer) a.get("mode") & S_IFMT) != S_IFDIR) {
                    throw new IOException(what + " " + path + " is not a directory; refusing to give it to "
                            + user);
                }
            } else {
                checkRegular(fd, path, what, user.uid());
            }
            give(fd, path, what, mode, user.uid(), user.gid());
        } finally {
            LIBC.close(fd);
        }
    }

    /**
     * Hands a rank's channel to its user as the channel manager does for its {@code owner.user}:
     * the job's directory ({@code rwx------}) and the channel file ({@code rw-------}) become the
     * user's, and the directory above them (the channels' base directory, the proxy's) is made
     * searchable by others ({@code --x--x}, no listing) when it is not, so that the rank reaches its
     * own channel. A channel file that does not exist (a launcher used without channels) is left;
     * one that is not in a job's directory ({@value #JOB_PREFIX}...) is refused.
     *
     * @param channel the rank's channel file
     * @param user    the rank's user
     * @throws IOException with one line naming what cannot be given and why
     */
    static void giveChannel(Path channel, RankIdentity user) throws IOException {
        Path file = channel.toAbsolutePath();
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Path job = file.getParent();
        Path base = job == null ? null : job.getParent();
        if (base == null || job.getFileName() == null || !job.getFileName().toString().startsWith(JOB_PREFIX)) {
            throw new IOException("channel file " + file + " is not in a job's directory (" + JOB_PREFIX
                    + "...); refusing to give it away");
        }
        searchable(base);
        give(job, "channel directory", true, 0700, user);
        give(file, "channel file", false, 0600, user);
    }

    /** Adds search by group and others to a directory of this process's user that lacks it. */
    private static void searchable(Path directory) throws IOException {
        PosixFileAttributes a = Files.readAttributes(directory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        long self = PrivateDirectories.currentUid();
        long owner = ((Number) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        Set<PosixFilePermission> search = EnumSet.of(PosixFilePermission.GROUP_EXECUTE,
                PosixFilePermission.OTHERS_EXECUTE);
        if (!a.isDirectory() || owner != self || a.permissions().containsAll(search)) {
            return;
        }
        Set<PosixFilePermission> wider = EnumSet.copyOf(a.permissions());
        wider.addAll(search);
        Files.getFileAttributeView(directory, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setPermissions(wider);
    }

    private static int open(Path path, String what, int flags, int mode) throws IOException {
        if (LIBC == null) {
            throw new IOException(what + " " + path + " cannot be opened safely here: JNA is not available");
        }
        int fd = LIBC.open(path.toString(), flags | RankFifos.O_NOFOLLOW, mode);
        if (fd < 0) {
            int errno = Native.getLastError();
            if (errno == ELOOP) {
                throw new IOException(what + " " + path + " is a symbolic link; refusing to use it");
            }
            throw new IOException(what + " " + path + ": " + LIBC.strerror(errno));
        }
        return fd;
    }

    /** A regular file of one name, owned by this process's user or {@code uid}. */
    private static void checkRegular(int fd, Path path, String what, long uid) throws IOException {
        Map<String, Object> a = attributes(fd, path, what);
        if (((Integer) a.get("mode") & S_IFMT) != S_IFREG) {
            throw new IOException(what + " " + path + " is not a regular file; refusing to use it");
        }
        int links = ((Number) a.get("nlink")).intValue();
        if (links != 1) {
            throw new IOException(what + " " + path + " has " + links + " names (a hard link); refusing to use it");
        }
        long owner = ((Number) a.get("uid")).longValue();
        long self = PrivateDirectories.currentUid();
        if (self >= 0 && owner != self && owner != uid) {
            throw new IOException(what + " " + path + " is owned by uid " + owner + ", not by uid " + self
                    + (uid >= 0 && uid != self ? " or uid " + uid : "") + "; refusing to use it");
        }
    }

    private static Map<String, Object> attributes(int fd, Path path, String what) throws IOException {
        try {
            return Files.readAttributes(Path.of("/proc/self/fd/" + fd), "unix:mode,uid,nlink");
        } catch (IOException | RuntimeException e) {
            throw new IOException("cannot inspect " + what + " " + path + ": " + e, e);
        }
    }

    private static void give(int fd, Path path, String what, int mode, long uid, long gid) throws IOException {
        if ((uid >= 0 || gid >= 0) && LIBC.fchown(fd, (int) uid, (int) gid) != 0) {
            throw new IOException("cannot give " + what + " " + path + " to " + uid + ":" + gid + ": "
                    + LIBC.strerror(Native.getLastError()));
        }
        if (LIBC.fchmod(fd, mode) != 0) {
            throw new IOException("cannot set the mode of " + what + " " + path + ": "
                    + LIBC.strerror(Native.getLastError()));
        }
    }
}
