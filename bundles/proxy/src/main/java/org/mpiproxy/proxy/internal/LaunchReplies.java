package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

import org.mpiproxy.api.DatagramTransport;

/**
 * The transport a launch thread acknowledges through: the one that received the EXEC. When a
 * send through it fails (it may have been closed by a hot update of the transport meanwhile),
 * the datagram is handed to the receive thread, which sends it through the transport it runs on.
 */
final class LaunchReplies implements DatagramTransport {

    private final DatagramTransport direct;
    private final Consumer<V1Dispatcher.Completion> post;

    /**
     * @param direct the transport that received the request
     * @param post   hands work to the receive thread
     */
    LaunchReplies(DatagramTransport direct, Consumer<V1Dispatcher.Completion> post) {
        this.direct = direct;
        this.post = post;
    }

    @Override
    public boolean send(ByteBuffer datagram, InetSocketAddress target) {
        ByteBuffer copy = ByteBuffer.allocate(datagram.remaining());
        copy.put(datagram.duplicate()).flip();
        if (direct.send(datagram, target)) {
            return true;
        }
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
