package org.mpiproxy.process;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntUnaryOperator;

import com.sun.jna.ptr.IntByReference;

/**
 * Learns the exits of the processes {@link NativeSpawn} spawned on one thread for all of them
 * ({@value #THREAD_NAME}, an {@link EpollLoop}): each process's pidfd ({@code pidfd_open}, Linux
 * 5.3) is in one {@code epoll} set; it turns readable when the process has ended, which is then
 * reaped with {@code waitpid(pid, WNOHANG)}. Only these pids are waited for, as the JDK's own reaper
 * waits only for the processes it started, so neither takes the other's exits. Where no pidfd can
 * be had ({@code ENOSYS} before Linux 5.3), {@link #watch} says so and the caller waits on a
 * thread of its own. Thread-safe.
 */
final class ExitWatch {

    /** The name of the watching thread. */
    static final String THREAD_NAME = "mpiproxy-exit-watch";

    private static final class Shared {
        static final ExitWatch INSTANCE = open(Epoll::load, why -> System.getLogger(ExitWatch.class.getName())
                .log(System.Logger.Level.WARNING, why));
    }

    private final Epoll epoll;
    private final EpollLoop loop;
    private final IntUnaryOperator pidfdOpen;
    private final Consumer<String> warn;
    /** Set once {@code pidfd_open} proved missing: every process is then waited for by its caller. */
    private volatile boolean unsupported;

    /**
     * @param epoll     the functions
     * @param name      the thread's name
     * @param pidfdOpen a pid's pidfd, or minus the error number
     * @param warn      gets the one warning when pidfds are missing
     * @throws IOException when the epoll set cannot be made
     */
    ExitWatch(Epoll epoll, String name, IntUnaryOperator pidfdOpen, Consumer<String> warn) throws IOException {
        this.epoll = epoll;
        this.loop = new EpollLoop(epoll, name);
        this.pidfdOpen = pidfdOpen;
        this.warn = warn;
    }

    /** @return the proxy's watch, or {@code null} when every process is waited for on a thread of its own */
    static ExitWatch shared() {
        try {
            return Shared.INSTANCE;
        } catch (LinkageError e) {
            return null;
        }
    }

    /**
     * @param opener makes the epoll functions
     * @param warn   gets the one warning when there is no watch, or no pidfd
     * @return a watch, or {@code null} when epoll cannot be used here
     */
    static ExitWatch open(OutputPoller.Opener opener, Consumer<String> warn) {
        try {
            Epoll epoll = opener.open();
            return new ExitWatch(epoll, THREAD_NAME, epoll::pidfdOpen, warn);
        } catch (IOException | LinkageError e) {
            warn.accept("rank exits are waited for on a thread per rank: " + e.getMessage());
            return null;
        }
    }

    /**
     * Starts watching a child of this process.
     *
     * @param pid  the child, not yet reaped
     * @param exit completed with its exit value once it has ended and been reaped (the code, or 128 +
     *             the signal: {@link NativeSpawn#exitValue}), or with the reason it cannot be reaped
     * @return {@code false} when it cannot be watched (no pidfd): the caller waits for it itself
     */
    boolean watch(int pid, CompletableFuture<Integer> exit) {
        if (unsupported) {
            return false;
        }
        int pidfd = pidfdOpen.applyAsInt(pid);
        if (pidfd < 0) {
            if (-pidfd == Epoll.ENOSYS) {
                unsupported = true;
                warn.accept("rank exits are waited for on a thread per rank: pidfd_open needs Linux 5.3");
            }
            return false;
        }
        loop.execute(() -> {
            try {
                loop.add(pidfd, events -> reap(pid, pidfd, exit));
            } catch (IOException e) {
                epoll.close(pidfd);
                exit.completeExceptionally(e);
            }
        });
        return true;
    }

    private void reap(int pid, int pidfd, CompletableFuture<Integer> exit) {
        IntByReference status = new IntByReference();
        int r = epoll.reap(pid, status);
        if (r == 0 || r == -Epoll.EINTR) {
            // not ended after all, or interrupted: still readable, called again
            return;
        }
        loop.remove(pidfd);
        epoll.close(pidfd);
        if (r == pid) {
            exit.complete(NativeSpawn.exitValue(status.getValue()));
        } else {
            exit.completeExceptionally(new IOException("waitpid " + pid + ": " + epoll.strerror(-r)));
        }
    }
}
