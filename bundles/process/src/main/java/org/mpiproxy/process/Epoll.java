package org.mpiproxy.process;

import java.io.IOException;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;

/**
 * Linux's {@code epoll}, {@code eventfd} and {@code pidfd_open} through JNA, for the threads that
 * wait on many descriptors at once ({@link EpollLoop}): the ranks' output ({@link OutputPoller})
 * and their exits ({@link ExitWatch}). {@link #load()} fails where they are missing (not Linux, no
 * JNA). Thread-safe.
 */
final class Epoll {

    /** The C library's functions this class calls. */
    interface LibC extends Library {
        int epoll_create1(int flags);

        int epoll_ctl(int epfd, int op, int fd, Pointer event);

        int epoll_wait(int epfd, Pointer events, int maxEvents, int timeoutMillis);

        int eventfd(int initval, int flags);

        long read(int fd, Pointer buffer, long count);

        long write(int fd, Pointer buffer, long count);

        int fcntl(int fd, int command, int argument);

        int close(int fd);

        long syscall(long number, Object... arguments);

        int waitpid(int pid, IntByReference status, int options);

        String strerror(int error);
    }

    static final int EPOLLIN = 0x001;
    static final int EPOLLERR = 0x008;
    static final int EPOLLHUP = 0x010;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ECHILD = 10;
    static final int ENOSYS = 38;
    static final int WNOHANG = 1;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int CLOEXEC = 0x80000;
    private static final int O_NONBLOCK = 0x800;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    /** {@code pidfd_open}: the same number on every architecture (added in Linux 5.3). */
    private static final long SYS_PIDFD_OPEN = 434;
    /**
     * {@code struct epoll_event}: a 32-bit mask and 64 bits of data, packed (12 bytes) on x86_64,
     * aligned (16 bytes) elsewhere.
     */
    static final int EVENT_BYTES;
    private static final int DATA_OFFSET;

    static {
        String arch = System.getProperty("os.arch", "");
        boolean packed = arch.equals("amd64") || arch.equals("x86_64");
        EVENT_BYTES = packed ? 12 : 16;
        DATA_OFFSET = packed ? 4 : 8;
    }

    private final LibC libc;

    private Epoll(LibC libc) {
        this.libc = libc;
    }

    /**
     * @return the functions
     * @throws IOException where they are missing (not Linux, or JNA cannot be loaded)
     */
    static Epoll load() throws IOException {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            throw new IOException("epoll needs Linux");
        }
        try {
            return new Epoll(Native.load("c", LibC.class));
        } catch (LinkageError | RuntimeException e) {
            throw new IOException("epoll through JNA is not available: " + e, e);
        }
    }

    /** @return a new epoll instance, closed on exec */
    int create() throws IOException {
        return check(libc.epoll_create1(CLOEXEC), "epoll_create1");
    }

    /** @return a new non-blocking eventfd, closed on exec: what wakes a waiting loop */
    int eventFd() throws IOException {
        return check(libc.eventfd(0, CLOEXEC | O_NONBLOCK), "eventfd");
    }

    /** Adds {@code fd} to the set, waiting for input (and its end), with {@code fd} as the event's data. */
    void add(int epfd, int fd) throws IOException {
        Memory event = new Memory(EVENT_BYTES);
        event.clear();
        event.setInt(0, EPOLLIN);
        event.setInt(DATA_OFFSET, fd);
        check(libc.epoll_ctl(epfd, EPOLL_CTL_ADD, fd, event), "epoll_ctl add " + fd);
    }

    /** Takes {@code fd} out of the set; a descriptor not in it is ignored. */
    void remove(int epfd, int fd) {
        libc.epoll_ctl(epfd, EPOLL_CTL_DEL, fd, null);
    }

    /**
     * @param events room for {@code max} events
     * @return the number of events, 0 at the timeout or an interruption
     */
    int await(int epfd, Memory events, int max, int timeoutMillis) throws IOException {
        int n = libc.epoll_wait(epfd, events, max, timeoutMillis);
        if (n < 0) {
            int errno = Native.getLastError();
            if (errno == EINTR) {
                return 0;
            }
            throw new IOException("epoll_wait: " + libc.strerror(errno));
        }
        return n;
    }

    /** @return the mask of event {@code i} in an {@link #await} result */
    static int events(Memory events, int i) {
        return events.getInt((long) i * EVENT_BYTES);
    }

    /** @return the descriptor of event {@code i} in an {@link #await} result */
    static int fd(Memory events, int i) {
        return events.getInt((long) i * EVENT_BYTES + DATA_OFFSET);
    }

    /** Makes reads of {@code fd} return at once when there is nothing to read. */
    void nonBlocking(int fd) throws IOException {
        int flags = check(libc.fcntl(fd, F_GETFL, 0), "fcntl");
        if ((flags & O_NONBLOCK) == 0) {
            check(libc.fcntl(fd, F_SETFL, flags | O_NONBLOCK), "fcntl");
        }
    }

    /** @return the bytes read, 0 at the end, or minus the error number */
    long read(int fd, Pointer buffer, long count) {
        long n = libc.read(fd, buffer, count);
        return n >= 0 ? n : -Native.getLastError();
    }

    /** Adds one to an eventfd's counter (an 8-byte write). */
    void signal(int eventFd, Memory one) {
        libc.write(eventFd, one, 8);
    }

    void close(int fd) {
        libc.close(fd);
    }

    /** @return a pidfd of the process, or minus the error number ({@link #ENOSYS} before Linux 5.3) */
    int pidfdOpen(int pid) {
        int fd = (int) libc.syscall(SYS_PIDFD_OPEN, (long) pid, 0L);
        return fd >= 0 ? fd : -Native.getLastError();
    }

    /**
     * {@code waitpid(pid, WNOHANG)}.
     *
     * @return the pid with its status in {@code status}, 0 while it runs, or minus the error number
     */
    int reap(int pid, IntByReference status) {
        int r = libc.waitpid(pid, status, WNOHANG);
        return r >= 0 ? r : -Native.getLastError();
    }

    String strerror(int errno) {
        return libc.strerror(errno);
    }

    private int check(int result, String what) throws IOException {
        if (result < 0) {
            throw new IOException(what + ": " + libc.strerror(Native.getLastError()));
        }
        return result;
    }
}
