package org.mpiproxy.mpi.internal;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * One line of a hostfile: the proxy of the node that runs a rank, and the core to run it on.
 *
 * @param lineNumber line in the hostfile, from 1
 * @param address    the IPv4 address, four octets
 * @param port       the proxy's UDP port
 * @param coreId     0 = the proxy's own core, &gt;= 1 = another core of that node
 */
public record HostfileEntry(int lineNumber, byte[] address, int port, int coreId) {

    public HostfileEntry {
        if (address.length != 4) {
            throw new IllegalArgumentException("address has " + address.length + " bytes, expected 4");
        }
        address = address.clone();
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    /** @return the proxy's socket address (no name lookup) */
    public InetSocketAddress socketAddress() {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(address), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4-byte address rejected", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostfileEntry e && e.lineNumber == lineNumber && e.port == port && e.coreId == coreId
                && java.util.Arrays.equals(e.address, address);
    }

    @Override
    public int hashCode() {
        return (java.util.Arrays.hashCode(address) * 31 + port) * 31 + coreId;
    }

    @Override
    public String toString() {
        return (address[0] & 0xff) + "." + (address[1] & 0xff) + "." + (address[2] & 0xff) + "." + (address[3] & 0xff)
                + ":" + port + ":" + coreId;
    }
}
