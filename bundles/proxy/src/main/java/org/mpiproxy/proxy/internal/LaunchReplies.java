package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.mpiproxy.api.DatagramTransport;

/**
 * The transport a launch thread acknowledges through: the one that received the EXEC. When a
 * send through it fails (it may have been closed by a hot update of the transport meanwhile),
 * the datagram is handed to the receive thread, which sends it through the transport it runs on.
 */
final class LaunchReplies implements DatagramTransport {

    private final DatagramTransport direct;
    private final Consumer<RelayQueue.Completion> post;

    /**
     * @param direct the transport that received the request
     * @param post   hands work to the receive thread
     */
    LaunchReplies(DatagramTransport direct, Consumer<RelayQueue.Completion> post) {
        this.direct = direct;
        this.post = post;
    }

    /**
     * Applies a launch's completion on the launch thread, so that the acknowledgement leaves as
     * soon as the process runs rather than after the receive thread's next wake-up. Not after
     * close, nor when the launch ran on a thread that holds the lock already (a launcher called
     * from the receive thread): then the receive thread applies it. Shared by both dispatchers.
     *
     * @param lock       the dispatcher's lock
     * @param replies    the transport the EXEC came through; {@code null} before the first one
     * @param closed     whether the dispatcher is closed; read under the lock
     * @param post       hands work to the receive thread
     * @param afterwards runs under the lock after the completion (wakes the receive thread when
     *                   it has work it may not know of)
     * @param failed     told of a completion that threw
     * @param done       the completion
     * @return whether it was applied
     */
    static boolean completeNow(Object lock, DatagramTransport replies, BooleanSupplier closed,
                               Consumer<RelayQueue.Completion> post, Runnable afterwards,
                               Consumer<RuntimeException> failed, RelayQueue.Completion done) {
        if (replies == null || Thread.holdsLock(lock)) {
            return false;
        }
        synchronized (lock) {
            if (closed.getAsBoolean()) {
                return false;
            }
            try {
                done.complete(new LaunchReplies(replies, post));
                afterwards.run();
            } catch (RuntimeException e) {
                failed.accept(e);
            }
            return true;
        }
    }

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        // a view of the bytes as they are now; copied only when they must wait for the receive thread
        ByteBuffer unsent = datagram.duplicate();
        if (direct.send(datagram, target)) {
            return true;
        }
        ByteBuffer copy = ByteBuffer.allocate(unsent.remaining());
        copy.put(unsent).flip();
        post.accept(replies -> {
            if (replies != null) {
                replies.send(copy, target);
            }
        });
        return true;
    }

    @Override
    public InetSocketAddress localAddress() {
        return direct.localAddress();
    }

    @Override
    public int maxDatagramSize() {
        return direct.maxDatagramSize();
    }

    @Override
    public void wakeup() {
        direct.wakeup();
    }
}
