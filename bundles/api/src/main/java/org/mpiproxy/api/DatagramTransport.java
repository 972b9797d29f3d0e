package org.mpiproxy.api;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Sends datagrams from the proxy's socket. Received datagrams go to the registered
 * {@link DatagramHandler} service.
 * <p>
 * Thread-safe: any thread may send.
 */
@ProviderType
public interface DatagramTransport {

    /**
     * Sends the bytes between {@code datagram}'s position and limit. Does not block; the
     * buffer's position is left unspecified.
     *
     * @param datagram the datagram
     * @param target   where to send it
     * @return {@code true} when the datagram was handed to the kernel
     */
    boolean send(ByteBuffer datagram, InetSocketAddress target);

    /** @return the address the socket is bound to */
    InetSocketAddress localAddress();

    /** @return the largest datagram this transport receives and sends, in bytes */
    int maxDatagramSize();

    /**
     * Makes the receive thread run {@link DatagramHandler#doWork} soon, even when no datagram
     * arrives. Any thread; cheap when the receive thread is already awake.
     */
    void wakeup();
}
