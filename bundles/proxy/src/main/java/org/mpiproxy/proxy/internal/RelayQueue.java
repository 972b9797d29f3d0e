package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.mpiproxy.api.DatagramTransport;

/**
 * The work other threads hand to a protocol handler's relay thread: launch outcomes, exits,
 * timeouts, replies that could not leave from a launch thread. Launch outcomes are applied at
 * once on the launch thread when it can take the handler's lock ({@link LaunchReplies#completeNow}),
 * so an EXEC is answered as soon as its process runs. The same for every protocol.
 */
final class RelayQueue implements RankLifecycle.Relay {

    /** Work finished on another thread, applied on the relay thread. */
    @FunctionalInterface
    interface Completion {
        /** @param replies the relay thread's transport; {@code null} when the handler closes */
        void complete(DatagramTransport replies);
    }

    private final Object lock;
    private final Runnable wakeup;
    private final BooleanSupplier hasActiveRanks;
    private final Consumer<RuntimeException> failed;
    private final ConcurrentLinkedQueue<Completion> completions = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    /** Where acknowledgements of launches go when sent from the launch thread. */
    private volatile DatagramTransport execReplies;

    /**
     * @param lock           the handler's lock, held while completions run
     * @param wakeup         makes the relay thread run its work soon; any thread
     * @param hasActiveRanks whether ranks have work the relay thread may not know of (read under the lock)
     * @param failed         told of a completion that threw (after counting, the handler logs it)
     */
    RelayQueue(Object lock, Runnable wakeup, BooleanSupplier hasActiveRanks, Consumer<RuntimeException> failed) {
        this.lock = lock;
        this.wakeup = wakeup;
        this.hasActiveRanks = hasActiveRanks;
        this.failed = failed;
    }

    /** One datagram's handling by a protocol, on the relay thread. */
    @FunctionalInterface
    interface DatagramStep {
        void handle(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies);
    }

    /** What a protocol does with a datagram whose handling threw: count, log, answer the request. */
    @FunctionalInterface
    interface DatagramFailure {
        void failed(InetSocketAddress source, DatagramTransport replies, Throwable failure);
    }

    /**
     * Handles a datagram under the handler's lock, unless the handler is closed; a
     * {@link RuntimeException} it throws, or the {@link InternalError} of a ring's shared memory
     * that failed, is handed to {@code failed} (to count and log it, and answer the request) and
     * the relay thread carries on with the next datagram.
     */
    void onDatagram(ByteBuffer datagram, InetSocketAddress source, DatagramTransport replies, DatagramStep step,
                    DatagramFailure failed) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            try {
                step.handle(datagram, source, replies);
            } catch (RuntimeException | InternalError e) {
                failed.failed(source, replies, e);
            }
        }
    }

    /** @param replies the transport the latest EXEC came through: launch threads answer through it */
    void execRepliesVia(DatagramTransport replies) {
        execReplies = replies;
    }

    @Override
    public boolean completeNow(Completion done) {
        return LaunchReplies.completeNow(lock, execReplies, () -> closed, this::post, () -> {
            if (hasActiveRanks.getAsBoolean()) {
                // the relay thread may be waiting in select() without knowing of that work
                wakeup.run();
            }
        }, failed, done);
    }

    @Override
    public void post(Completion done) {
        completions.add(done);
        wakeup.run();
    }

    @Override
    public boolean closed() {
        return closed;
    }

    @Override
    public boolean withdraw(Completion done) {
        return completions.remove(done);
    }

    /** @return whether completions wait for the relay thread */
    boolean hasWork() {
        return !completions.isEmpty();
    }

    /**
     * Runs every queued completion; under the handler's lock, on the relay thread (or at close,
     * with {@code null} replies: ranks are removed, late launches are stopped, exits ignored).
     *
     * @return how many ran
     */
    int drain(DatagramTransport replies) {
        int n = 0;
        Completion completion;
        while ((completion = completions.poll()) != null) {
            n++;
            try {
                completion.complete(replies);
            } catch (RuntimeException e) {
                failed.accept(e);
            }
        }
        return n;
    }

    /** From now on nothing is applied on launch threads, and the handler does no more work. */
    void close() {
        closed = true;
    }
}
