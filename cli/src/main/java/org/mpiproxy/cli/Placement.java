package org.mpiproxy.cli;

/**
 * Where one rank runs: the proxy of its node and the core.
 *
 * @param address the proxy's IPv4 address, dotted
 * @param port    the proxy's UDP port
 * @param coreId  0 = the proxy's own core, &gt;= 1 = that core of the node (from the LZ4 image)
 * @param node    the node's name as the user wrote it, for messages
 */
public record Placement(String address, int port, int coreId, String node) {

    /** @return the FreeNOS hostfile form {@code <ipv4>:<port>:<coreId>} */
    public String hostEntry() {
        return address + ":" + port + ":" + coreId;
    }

    @Override
    public String toString() {
        return node.equals(address) ? hostEntry() : node + " (" + hostEntry() + ")";
    }
}
