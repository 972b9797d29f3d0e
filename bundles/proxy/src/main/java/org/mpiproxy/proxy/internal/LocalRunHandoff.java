package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.mpiproxy.api.LocalRuns;

/**
 * Takes the local socket's {@code RUN 1} connections (docs/protocol-v2.md 4.4) and serves each
 * on threads of a small pool of its own ({@link LocalRunSession}), never on the socket's thread.
 * It serves the proxy's own user only, since a run has the proxy's rights; any other user, a
 * proxy without the launcher's service, or more than {@value #MAX_RUNS} runs at once get one
 * FAIL frame, and their front runs the job itself.
 */
final class LocalRunHandoff implements LocalSocketServer.Runs, AutoCloseable {

    /** Runs at once. */
    static final int MAX_RUNS = 16;
    /** The refusal of a peer that is not the proxy's user. */
    static final String OWN_USER_ONLY = "RUN serves the proxy's own user only; running cold";

    private final Supplier<LocalRuns> runs;
    private final long ownUid;
    private final Semaphore slots = new Semaphore(MAX_RUNS);
    private final Set<LocalRunSession> active = ConcurrentHashMap.newKeySet();
    private final ExecutorService pool;

    /**
     * @param runs   the launcher's service now, {@code null} while there is none
     * @param ownUid the proxy's uid
     */
    LocalRunHandoff(Supplier<LocalRuns> runs, long ownUid) {
        this.runs = runs;
        this.ownUid = ownUid;
        AtomicInteger count = new AtomicInteger();
        // two threads a run: the run, and the reader of its front's signals
        this.pool = new ThreadPoolExecutor(0, 2 * MAX_RUNS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "mpiproxy-local-run-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void take(SocketChannel channel, ByteBuffer rest, long uid, long gid) {
        LocalRuns service = runs.get();
        String refusal = uid != ownUid ? OWN_USER_ONLY
                : service == null ? "this proxy has no launcher (the cli bundle); running cold"
                : !slots.tryAcquire() ? "busy: " + MAX_RUNS + " runs at once; running cold" : null;
        if (refusal == null) {
            LocalRunSession session = new LocalRunSession(channel, rest, uid, gid, service, pool);
            active.add(session);
            try {
                pool.execute(() -> {
                    try {
                        session.serve();
                    } finally {
                        active.remove(session);
                        slots.release();
                    }
                });
                return;
            } catch (RejectedExecutionException e) {
                active.remove(session);
                slots.release();
                refusal = "the proxy is stopping; running cold";
            }
        }
        try {
            // a fresh connection's buffer holds the frame
            RunFrames.write(channel, RunFrames.encode(RunFrames.FAIL, refusal));
        } catch (IOException e) {
            // gone already
        }
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing more to do
        }
    }

    /** @return runs going on now */
    int active() {
        return active.size();
    }

    /** Takes no more runs, and stops those going on as a SIGTERM of their fronts would. */
    @Override
    public void close() {
        pool.shutdown();
        active.forEach(LocalRunSession::stop);
    }
}
