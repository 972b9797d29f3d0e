package org.mpiproxy.process;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.sun.jna.Memory;

/**
 * One daemon thread that waits in {@code epoll_wait} on many descriptors and runs, on itself, the
 * handler of each one that is ready, the tasks other threads hand it ({@link #execute}, which wakes
 * it through an eventfd), and a {@link Tick} before each wait. The thread starts with the first
 * task and ends after {@value #IDLE_MILLIS} ms with no descriptor, no task and no tick pending, so a
 * bundle that is gone leaves none behind; the next task starts a new one. Level-triggered: a
 * handler that leaves input unread is called again after the others had their turn.
 */
final class EpollLoop {

    /** What a descriptor's readiness runs, on the loop's thread. */
    interface Handler {
        /** @param events the {@code epoll} events ({@link Epoll#EPOLLIN}, {@link Epoll#EPOLLHUP}, ...) */
        void ready(int events);
    }

    /** What runs on the loop's thread before each wait. */
    interface Tick {
        /** @return the longest wait in milliseconds, or -1 for no limit */
        int run();
    }

    private static final int MAX_EVENTS = 256;
    private static final int IDLE_MILLIS = 30_000;

    private final Epoll epoll;
    private final String name;
    private final int epfd;
    private final int wakeFd;
    private final Memory one = new Memory(8);
    private final Memory drained = new Memory(8);
    private final Memory events = new Memory((long) MAX_EVENTS * Epoll.EVENT_BYTES);
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** Read and written on the loop's thread only. */
    private final Map<Integer, Handler> handlers = new HashMap<>();
    private volatile Tick tick = () -> -1;
    /** The running thread, {@code null} while there is none; guarded by {@code this}. */
    private Thread thread;

    /**
     * @param epoll the functions
     * @param name  the thread's name
     * @throws IOException when the epoll instance or its eventfd cannot be made
     */
    EpollLoop(Epoll epoll, String name) throws IOException {
        this.epoll = epoll;
        this.name = name;
        this.epfd = epoll.create();
        try {
            this.wakeFd = epoll.eventFd();
            epoll.add(epfd, wakeFd);
        } catch (IOException e) {
            epoll.close(epfd);
            throw e;
        }
        one.setLong(0, 1);
    }

    /** @param tick runs before each wait, on the loop's thread */
    void tick(Tick tick) {
        this.tick = tick;
    }

    /** Runs a task on the loop's thread soon, starting the thread when there is none. Any thread. */
    void execute(Runnable task) {
        tasks.add(task);
        synchronized (this) {
            if (thread == null) {
                thread = new Thread(this::run, name);
                thread.setDaemon(true);
                thread.start();
                return;
            }
        }
        wake();
    }

    /** Ends the current wait at once. Any thread. */
    void wake() {
        epoll.signal(wakeFd, one);
    }

    /** Starts calling {@code handler} when {@code fd} is ready. The loop's thread only. */
    void add(int fd, Handler handler) throws IOException {
        epoll.add(epfd, fd);
        handlers.put(fd, handler);
    }

    /** Stops watching {@code fd} (before it is closed). The loop's thread only. */
    void remove(int fd) {
        if (handlers.remove(fd) != null) {
            epoll.remove(epfd, fd);
        }
    }

    /** @return the descriptors watched. The loop's thread only. */
    int size() {
        return handlers.size();
    }

    private void run() {
        while (true) {
            Runnable task;
            while ((task = tasks.poll()) != null) {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    report(e);
                }
            }
            int timeout = tick.run();
            boolean idle = handlers.isEmpty() && timeout < 0;
            int n;
            try {
                n = epoll.await(epfd, events, MAX_EVENTS, idle ? IDLE_MILLIS : timeout);
            } catch (IOException e) {
                report(new IllegalStateException(name + ": " + e.getMessage(), e));
                n = 0;
            }
            if (n == 0 && idle && handlers.isEmpty()) {
                synchronized (this) {
                    if (tasks.isEmpty()) {
                        thread = null;
                        return;
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                int fd = Epoll.fd(events, i);
                if (fd == wakeFd) {
                    epoll.read(wakeFd, drained, 8);
                    continue;
                }
                Handler handler = handlers.get(fd);
                if (handler != null) {
                    try {
                        handler.ready(Epoll.events(events, i));
                    } catch (RuntimeException e) {
                        report(e);
                    }
                }
            }
        }
    }

    private static void report(RuntimeException e) {
        Thread current = Thread.currentThread();
        current.getUncaughtExceptionHandler().uncaughtException(current, e);
    }
}
