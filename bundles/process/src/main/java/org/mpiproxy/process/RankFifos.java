package org.mpiproxy.process;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankOutputListener;

/**
 * A rank's standard output and error as named pipes (FIFOs) beside its channel, for a
 * node whose ranks outlive the JVM (run under the node keeper, {@link KeeperFiles}).
 * <p>
 * An anonymous pipe ends with the JVM that reads it: the rank's next write gets {@code EPIPE} or
 * {@code SIGPIPE}. A FIFO that the rank itself holds open for reading and writing
 * ({@code O_RDWR}, set up by the spawn) never has no reader: while no proxy reads, the rank's
 * writes fill the pipe's buffer and then wait, and the next proxy opens the FIFO by its path and
 * reads on from the first byte nobody read. The proxy's end is opened non-blocking before the
 * spawn (so a rank that ends at once still has a reader, and its output is kept), then read
 * through {@code poll(2)} and {@code read(2)} ({@link FifoInputStream}), which a
 * {@linkplain FifoInputStream#detach() detach} ends at once without losing a byte. The reader sees
 * the end of the stream when the rank and everything that inherited its output have closed it,
 * as with a pipe. Linux with glibc; any thread.
 */
public final class RankFifos {

    /** The C library's functions for FIFOs. */
    interface LibC extends Library {
        int mkfifo(String path, int mode);

        int open(String path, int flags);

        int fcntl(int fd, int command, int argument);

        int fchown(int fd, int uid, int gid);

        int poll(Pointer fds, long count, int timeoutMillis);

        long read(int fd, byte[] buffer, long count);

        int close(int fd);

        String strerror(int error);
    }

    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_NONBLOCK = 0x800;
    static final int O_CLOEXEC = 0x80000;
    /** {@code O_NOFOLLOW}: 0100000 on ARM and POWER, 0400000 on x86 and the generic Linux ABI. */
    static final int O_NOFOLLOW = noFollowFlag(System.getProperty("os.arch", ""));
    private static final int ELOOP = 40;
    /** The file type bits of {@code st_mode}, and a FIFO's. */
    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final short POLLIN = 1;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    /** How long one {@code poll} waits before looking at the detach flag again. */
    private static final int POLL_MILLIS = 200;

    private static final LibC LIBC = load();

    private RankFifos() {
    }

    private static LibC load() {
        try {
            return Native.load("c", LibC.class);
        } catch (LinkageError | RuntimeException e) {
            return null;
        }
    }

    static int noFollowFlag(String arch) {
        return arch.startsWith("aarch64") || arch.startsWith("arm") || arch.startsWith("ppc") ? 0100000 : 0400000;
    }

    /** @return whether FIFOs can be made and read here */
    static boolean available() {
        return LIBC != null;
    }

    /**
     * Where a rank's FIFOs go: beside its channel, in the job's directory in shared memory, when it
     * has one (made and removed with the job; {@code mkfifo} on a disk file system can cost half a
     * millisecond, on tmpfs a few microseconds), else in its log directory.
     *
     * @param logDirectory the job's log directory
     * @param channel      the rank's channel file ({@code MPIPROXY_CHANNEL}), or {@code null}
     * @return the directory of the rank's FIFOs
     */
    public static Path directory(Path logDirectory, String channel) {
        if (channel != null && !channel.isBlank()) {
            Path parent = Path.of(channel).getParent();
            if (parent != null && Files.isDirectory(parent)) {
                return parent;
            }
        }
        return logDirectory;
    }

    /**
     * @param directory the directory of the rank's FIFOs ({@link #directory})
     * @param rankId    the rank
     * @param stream    which stream
     * @return the FIFO of that stream: {@code <directory>/rank-<rankId>.out.fifo} or {@code .err.fifo}
     */
    public static Path path(Path directory, int rankId, RankOutputListener.Stream stream) {
        return directory.resolve("rank-" + rankId + (stream == RankOutputListener.Stream.STDOUT ? ".out" : ".err")
                + ".fifo");
    }

    /**
     * Makes a FIFO (replacing whatever has its name: a link is removed, not followed) and opens its
     * reading end, checked to be a FIFO of this process's user.
     *
     * @param fifo the path
     * @return its reading end
     * @throws IOException when it cannot be made or opened
     */
    static FifoInputStream create(Path fifo) throws IOException {
        return create(fifo, null);
    }

    /**
     * As {@link #create(Path)}, and then given to the rank's user ({@code rw-------}, through the
     * descriptor opened, so a path replaced meanwhile gives nothing away).
     *
     * @param fifo the path
     * @param user the user it goes to, {@code null} to keep it this process's user's
     * @return its reading end, which accepts that user as the FIFO's owner
     * @throws IOException when it cannot be made, opened or given
     */
    static FifoInputStream create(Path fifo, RankIdentity user) throws IOException {
        Files.deleteIfExists(fifo);
        if (LIBC.mkfifo(fifo.toString(), 0600) != 0) {
            throw new IOException("mkfifo " + fifo + ": " + LIBC.strerror(Native.getLastError()));
        }
        FifoInputStream in = open(fifo, -1);
        if (user == null) {
            return in;
        }
        if (LIBC.fchown(in.fd, (int) user.uid(), (int) user.gid()) != 0) {
            String why = LIBC.strerror(Native.getLastError());
            in.close();
            throw new IOException("cannot give FIFO " + fifo + " to " + user + ": " + why);
        }
        return new FifoInputStream(in.fd, fifo, in.fileKey, user.uid());
    }

    /**
     * Opens the reading end of an existing FIFO without waiting for a writer (a rank's, after a
     * restart of the node): not through a symbolic link, and only a FIFO of this process's user, or
     * of the user its directory was given to (the job directory of a job's user, docs/protocol-v2.md
     * 4.1).
     *
     * @param fifo the path
     * @return its reading end
     * @throws IOException when it cannot be opened, is a link, is not a FIFO or is another user's
     */
    public static InputStream openExisting(Path fifo) throws IOException {
        if (LIBC == null) {
            throw new IOException("FIFOs cannot be read here: JNA is not available");
        }
        long user = -1;
        Path directory = fifo.toAbsolutePath().getParent();
        try {
            user = directory == null ? -1
                    : ((Number) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        } catch (IOException | RuntimeException e) {
            // its own user's only
        }
        return open(fifo, user);
    }

    private static FifoInputStream open(Path fifo, long user) throws IOException {
        int fd = openNoFollow(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        return new FifoInputStream(fd, fifo, checkOpened(fd, fifo, user), user);
    }

    /**
     * Opens the end the rank writes to (for reading and writing, so that it never has no reader),
     * checked to be the very FIFO {@code reader} reads: a path replaced in between is refused.
     *
     * @param reader the proxy's reading end, from {@link #create}
     * @return the descriptor, closed on exec (the spawn duplicates it onto the rank's output); the
     *         caller closes it
     * @throws IOException when it cannot be opened, or is not that FIFO
     */
    static int openRankEnd(FifoInputStream reader) throws IOException {
        int fd = openNoFollow(reader.path, O_RDWR | O_CLOEXEC);
        Object key = checkOpened(fd, reader.path, reader.user);
        if (reader.fileKey == null || !reader.fileKey.equals(key)) {
            LIBC.close(fd);
            throw new IOException("FIFO " + reader.path + " was replaced after it was made; refusing to use it");
        }
        return fd;
    }

    /** Closes a descriptor of {@link #openRankEnd}. */
    static void close(int fd) {
        LIBC.close(fd);
    }

    /** Opens a path with {@code O_NOFOLLOW}: a symbolic link in a FIFO's place fails the open. */
    private static int openNoFollow(Path fifo, int flags) throws IOException {
        int fd = LIBC.open(fifo.toString(), flags | O_NOFOLLOW);
        if (fd < 0) {
            int errno = Native.getLastError();
            throw new IOException(errno == ELOOP ? "FIFO " + fifo + " is a symbolic link; refusing to follow it"
                    : "open " + fifo + ": " + LIBC.strerror(errno));
        }
        return fd;
    }

    /**
     * Checks what a descriptor opened by path is (its {@code /proc/self/fd} entry leads to the file
     * itself, whatever the path names now): a FIFO of this process's user, or of {@code user}.
     * Closes it when not.
     *
     * @param user the uid also accepted as its owner, -1 for none
     * @return its identity (device and inode), as {@link BasicFileAttributes#fileKey()}
     */
    private static Object checkOpened(int fd, Path fifo, long user) throws IOException {
        try {
            Path opened = Path.of("/proc/self/fd/" + fd);
            Map<String, Object> a = Files.readAttributes(opened, "unix:mode,uid");
            if (((Integer) a.get("mode") & S_IFMT) != S_IFIFO) {
                throw new IOException(fifo + " is not a FIFO; refusing to use it");
            }
            long uid = ((Number) a.get("uid")).longValue();
            long self = PrivateDirectories.currentUid();
            if (self >= 0 && uid != self && uid != user) {
                throw new IOException("FIFO " + fifo + " is owned by uid " + uid + ", not by uid " + self
                        + "; refusing to use it");
            }
            return Files.readAttributes(opened, BasicFileAttributes.class).fileKey();
        } catch (IOException | RuntimeException e) {
            LIBC.close(fd);
            throw e instanceof IOException ? (IOException) e : new IOException("cannot inspect " + fifo + ": " + e, e);
        }
    }

    /**
     * Starts a process that holds the FIFOs open for reading for {@code seconds}: the output a rank
     * writes before it ends stays in its FIFO while no JVM reads it (a FIFO's data goes with its last
     * open descriptor). The next proxy stops it once it has opened the FIFOs itself.
     *
     * @param fifos   the FIFOs
     * @param seconds how long it holds them, then it ends
     * @return its pid
     * @throws IOException when it cannot be started
     */
    public static long hold(java.util.List<Path> fifos, long seconds) throws IOException {
        NativeSpawn spawn = RankProcessStarter.nativeSpawn();
        if (spawn == null) {
            throw new IOException("processes cannot be spawned natively here");
        }
        return spawn.hold(fifos, seconds);
    }

    /**
     * The reading end of a FIFO. {@link #read} waits in {@code poll} in slices of
     * {@value #POLL_MILLIS} ms and returns -1 at the end of the stream, or at once after
     * {@link #detach()}; the {@link OutputPoller} reads its descriptor instead, and is told of a
     * detach. One reading thread; {@link #detach()} from any thread.
     */
    public static final class FifoInputStream extends InputStream implements OutputPoller.Source {
        private final int fd;
        private final Path path;
        /** The FIFO's identity (device and inode) when opened: its path may name another FIFO later. */
        private final Object fileKey;
        /** The rank's user it was given to, -1 when it is this process's user's. */
        private final long user;
        private final Memory pollFd = new Memory(8);
        private byte[] chunk = new byte[0];
        private volatile boolean detached;
        private volatile boolean endWhenEmpty;
        private volatile Runnable changed;
        private boolean closed;

        FifoInputStream(int fd, Path path, Object fileKey, long user) {
            this.fd = fd;
            this.path = path;
            this.fileKey = fileKey;
            this.user = user;
            pollFd.setInt(0, fd);
        }

        /** @return the FIFO's path */
        public Path path() {
            return path;
        }

        /**
         * Removes the FIFO's path when it still names this FIFO (a later rank of the same job and
         * rank id may have made a new one there).
         */
        public void removePath() {
            try {
                Object now = Files.readAttributes(path, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
                if (fileKey != null && fileKey.equals(now)) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException e) {
                // gone already
            }
        }

        /** Makes the next (or the current) {@link #read} return -1 without reading more. */
        public void detach() {
            detached = true;
            tell();
        }

        /**
         * Makes {@link #read} return -1 once nothing is left to read, even while a writer may still
         * hold the FIFO: for a FIFO opened again after its rank ended (a FIFO whose writers all left
         * before it was opened never reports their end).
         */
        public void endWhenEmpty() {
            endWhenEmpty = true;
            tell();
        }

        @Override
        public int fd() {
            return fd;
        }

        @Override
        public boolean detached() {
            return detached;
        }

        @Override
        public boolean endsWhenEmpty() {
            return endWhenEmpty;
        }

        @Override
        public void whenChanged(Runnable change) {
            changed = change;
        }

        private void tell() {
            Runnable change = changed;
            if (change != null) {
                change.run();
            }
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (true) {
                if (detached || closed) {
                    return -1;
                }
                pollFd.setShort(4, POLLIN);
                pollFd.setShort(6, (short) 0);
                int ready = LIBC.poll(pollFd, 1, POLL_MILLIS);
                if (ready < 0) {
                    int errno = Native.getLastError();
                    if (errno == EINTR) {
                        continue;
                    }
                    throw new IOException("poll: " + LIBC.strerror(errno));
                }
                if (ready == 0) {
                    if (endWhenEmpty) {
                        return -1;
                    }
                    continue;
                }
                if (detached) {
                    continue;
                }
                if (chunk.length < len) {
                    chunk = new byte[len];
                }
                long n = LIBC.read(fd, chunk, len);
                if (n > 0) {
                    System.arraycopy(chunk, 0, b, off, (int) n);
                    return (int) n;
                }
                if (n == 0) {
                    // no writer left: the rank and whatever inherited its output are gone
                    return -1;
                }
                int errno = Native.getLastError();
                if (errno != EINTR && errno != EAGAIN) {
                    throw new IOException("read: " + LIBC.strerror(errno));
                }
            }
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                LIBC.close(fd);
            }
        }
    }
}
