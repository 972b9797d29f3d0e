package org.mpiproxy.transport.udp.internal;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * Validated socket settings of the UDP transport.
 *
 * @param bindAddress       where the socket listens
 * @param receiveBufferSize SO_RCVBUF in bytes
 * @param sendBufferSize    SO_SNDBUF in bytes
 * @param maxDatagramSize   largest datagram accepted, in bytes
 */
public record UdpTransportSettings(InetSocketAddress bindAddress, int receiveBufferSize, int sendBufferSize,
                                   int maxDatagramSize) {

    /** Largest UDP payload over IPv4. */
    public static final int MAX_UDP_PAYLOAD = 65507;
    /** Smallest accepted {@code max.datagram.size}: the IPv4 minimum reassembly size less headers. */
    public static final int MIN_DATAGRAM_SIZE = 548;

    /**
     * Validates configuration values.
     *
     * @throws IllegalArgumentException naming the key and value that are out of range
     */
    public static UdpTransportSettings of(String address, int port, int receiveBufferSize, int sendBufferSize,
                                          int maxDatagramSize) {
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("address='" + address + "' must name a local address");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port=" + port + " out of range 0..65535");
        }
        if (receiveBufferSize < 1024) {
            throw new IllegalArgumentException("receive.buffer.size=" + receiveBufferSize + " must be >= 1024");
        }
        if (sendBufferSize < 1024) {
            throw new IllegalArgumentException("send.buffer.size=" + sendBufferSize + " must be >= 1024");
        }
        if (maxDatagramSize < MIN_DATAGRAM_SIZE || maxDatagramSize > MAX_UDP_PAYLOAD) {
            throw new IllegalArgumentException("max.datagram.size=" + maxDatagramSize + " out of range "
                    + MIN_DATAGRAM_SIZE + ".." + MAX_UDP_PAYLOAD);
        }
        InetAddress inet;
        try {
            inet = InetAddress.getByName(address.trim());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("address=" + address + " is not a known host or address", e);
        }
        return new UdpTransportSettings(new InetSocketAddress(inet, port), receiveBufferSize, sendBufferSize,
                maxDatagramSize);
    }
}
