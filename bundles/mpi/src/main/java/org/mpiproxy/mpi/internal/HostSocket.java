package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * A host's UDP socket, non-blocking, with its selector: what both host transports (v1 and v2)
 * open the same way.
 *
 * @param channel  the socket
 * @param selector its selector
 * @param key      the socket's key, interested in reads
 */
record HostSocket(DatagramChannel channel, Selector selector, SelectionKey key) {

    /**
     * @param localPort   the local port, 0 for any
     * @param buffers     bytes asked of the kernel for the receive buffer (it may grant less)
     * @param sendBuffers whether the send buffer gets the same size
     * @return the socket, bound; nothing is left open when it cannot be made
     */
    static HostSocket open(int localPort, int buffers, boolean sendBuffers) throws IOException {
        DatagramChannel ch = DatagramChannel.open();
        Selector sel = null;
        try {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, buffers);
            if (sendBuffers) {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, buffers);
            }
            ch.bind(new InetSocketAddress(localPort));
            ch.configureBlocking(false);
            sel = Selector.open();
            return new HostSocket(ch, sel, ch.register(sel, SelectionKey.OP_READ));
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
    }
}
