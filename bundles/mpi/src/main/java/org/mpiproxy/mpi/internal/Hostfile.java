package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Parser of FreeNOS hostfiles: one {@code <ipv4>:<udp-port>:<coreId>} per line, the n-th node
 * line runs rank n; lines starting with {@code #} and blank lines are ignored.
 */
public final class Hostfile {

    /** Most nodes: rank ids and the world size are 16-bit on the wire. */
    public static final int MAX_NODES = 0xffff - 1;

    private Hostfile() {
    }

    /**
     * Reads and parses a hostfile.
     *
     * @param file the hostfile
     * @return the nodes in rank order (element 0 = rank 1)
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when a line is malformed; the message names the file
     *                                  and the line number
     */
    public static List<HostfileEntry> read(Path file) throws IOException {
        return parse(file.toString(), Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    /**
     * Parses the lines of a hostfile.
     *
     * @param name  the file name, for messages
     * @param lines the lines, without line terminators
     * @return the nodes in rank order (element 0 = rank 1)
     * @throws IllegalArgumentException when a line is malformed; the message names the file
     *                                  and the line number
     */
    public static List<HostfileEntry> parse(String name, List<String> lines) {
        List<HostfileEntry> nodes = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int lineNumber = i + 1;
            String problem = null;
            String[] fields = line.split(":", -1);
            byte[] address = null;
            int port = -1;
            int coreId = -1;
            if (fields.length != 3) {
                problem = "expected <ipv4>:<port>:<coreId>";
            } else if ((address = ipv4(fields[0])) == null) {
                problem = "'" + fields[0] + "' is not an IPv4 address";
            } else if ((port = number(fields[1], 65535)) < 1) {
                problem = "port '" + fields[1] + "' is not a number in 1-65535";
            } else if ((coreId = number(fields[2], 65535)) < 0) {
                problem = "coreId '" + fields[2] + "' is not a number in 0-65535";
            }
            if (problem != null) {
                throw new IllegalArgumentException(name + " line " + lineNumber + ": " + problem + ", got '"
                        + printable(line) + "'");
            }
            if (nodes.size() == MAX_NODES) {
                throw new IllegalArgumentException(name + " line " + lineNumber + ": more than " + MAX_NODES
                        + " nodes");
            }
            nodes.add(new HostfileEntry(lineNumber, address, port, coreId));
        }
        return List.copyOf(nodes);
    }

    /**
     * Parses a comma-separated list of hostfile entries, as in the environment variable
     * {@code MPIPROXY_HOSTS}.
     *
     * @param name the list's name, for messages
     * @param list {@code <ipv4>:<port>:<coreId>} entries separated by commas
     * @return the nodes in rank order (element 0 = rank 1); none for a blank list
     * @throws IllegalArgumentException when an entry is malformed; the message names the list
     *                                  and the entry's position
     */
    public static List<HostfileEntry> parseList(String name, String list) {
        if (list.isBlank()) {
            return List.of();
        }
        String[] entries = list.strip().split(",", -1);
        for (int i = 0; i < entries.length; i++) {
            if (entries[i].isBlank()) {
                throw new IllegalArgumentException(name + " entry " + (i + 1) + " is empty, got '" + printable(list)
                        + "'");
            }
        }
        try {
            return parse(name, List.of(entries));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().replace(name + " line ", name + " entry "), e);
        }
    }

    private static byte[] ipv4(String text) {
        String[] octets = text.split("\\.", -1);
        if (octets.length != 4) {
            return null;
        }
        byte[] address = new byte[4];
        for (int i = 0; i < 4; i++) {
            int octet = number(octets[i], 255);
            if (octet < 0) {
                return null;
            }
            address[i] = (byte) octet;
        }
        return address;
    }

    /** @return the decimal value, or -1 when not 1-5 ASCII digits or above max */
    private static int number(String text, int max) {
        if (text.isEmpty() || text.length() > 5) {
            return -1;
        }
        int value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value <= max ? value : -1;
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 80));
        for (int i = 0; i < s.length() && i < 80; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }
}
