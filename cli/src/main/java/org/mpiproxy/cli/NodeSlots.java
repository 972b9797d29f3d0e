package org.mpiproxy.cli;

/**
 * A node named by a hostfile, host list or allocation, and how many ranks it takes.
 *
 * @param name  host name or IPv4 address, as written
 * @param slots ranks it takes, &gt;= 1
 */
public record NodeSlots(String name, int slots) {

    public NodeSlots {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("node name is empty");
        }
        if (slots < 1) {
            throw new IllegalArgumentException("node " + name + ": slots=" + slots + " is less than 1");
        }
    }
}
