package org.mpiproxy.cli;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Maps node names (as hostfiles and Slurm name them) to their proxies' addresses. A map file
 * has one {@code NAME ADDRESS[:PORT]} per line ({@code #} comments, blank lines ignored), e.g.
 * {@code n1 10.1.0.11} or {@code n2 127.0.0.1:16662}; names not in the map are IPv4 literals or
 * resolved by DNS (first IPv4 address). The port is the map's, else the default (6660).
 */
public final class NodeMap {

    /** The proxies' UDP port when neither the map nor an option names one. */
    public static final int DEFAULT_PORT = 6660;

    /**
     * One proxy address.
     *
     * @param address IPv4, dotted
     * @param port    UDP port, or 0 for the default
     */
    public record Address(String address, int port) {
    }

    /** Name lookup, replaceable in tests. */
    public interface Dns {
        /**
         * @param name a host name
         * @return its first IPv4 address, dotted
         * @throws UnknownHostException when it has none
         */
        String ipv4(String name) throws UnknownHostException;
    }

    /** The system resolver. */
    public static final Dns SYSTEM_DNS = name -> {
        for (InetAddress a : InetAddress.getAllByName(name)) {
            if (a instanceof Inet4Address) {
                return a.getHostAddress();
            }
        }
        throw new UnknownHostException(name + " has no IPv4 address");
    };

    private final Map<String, Address> entries;
    private final int defaultPort;
    private final Dns dns;

    /**
     * @param entries     names to addresses
     * @param defaultPort port for entries without one and names resolved by DNS
     * @param dns         resolver of names not in the map
     */
    public NodeMap(Map<String, Address> entries, int defaultPort, Dns dns) {
        this.entries = Map.copyOf(entries);
        this.defaultPort = defaultPort;
        this.dns = dns;
    }

    /**
     * @param file a map file
     * @return its entries
     * @throws IOException              when it cannot be read
     * @throws IllegalArgumentException when a line is malformed
     */
    public static Map<String, Address> read(Path file) throws IOException {
        return parse(file.toString(), Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    /**
     * @param name  the file's name, for messages
     * @param lines its lines
     * @return names to addresses, in file order
     * @throws IllegalArgumentException naming the line when one is malformed or repeats a name
     */
    public static Map<String, Address> parse(String name, List<String> lines) {
        Map<String, Address> map = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int hash = line.indexOf('#');
            line = (hash < 0 ? line : line.substring(0, hash)).strip();
            if (line.isEmpty()) {
                continue;
            }
            String where = name + " line " + (i + 1);
            String[] f = line.split("\\s+");
            String problem = null;
            Address address = null;
            if (f.length != 2) {
                problem = "expected NAME ADDRESS[:PORT]";
            } else if ((problem = Hostfiles.hostProblem(f[0])) == null) {
                int colon = f[1].indexOf(':');
                String ip = Numbers.ipv4(colon < 0 ? f[1] : f[1].substring(0, colon));
                int port = colon < 0 ? 0 : Numbers.parse(f[1].substring(colon + 1), 1, 65535);
                if (ip == null) {
                    problem = "'" + f[1] + "' is not an IPv4 address";
                } else if (port < 0) {
                    problem = "port '" + f[1].substring(colon + 1) + "' is not a number in 1-65535";
                } else if (map.containsKey(f[0])) {
                    problem = "node " + f[0] + " is mapped twice";
                } else {
                    address = new Address(ip, port);
                }
            }
            if (problem != null) {
                throw new IllegalArgumentException(where + ": " + problem + ", got '" + Numbers.printable(line) + "'");
            }
            map.put(f[0], address);
        }
        return map;
    }

    /**
     * @param node a node name or IPv4 address
     * @return its proxy's address and port
     * @throws IllegalArgumentException when the name is unknown to the map and to DNS
     */
    public Address resolve(String node) {
        Address mapped = entries.get(node);
        if (mapped != null) {
            return new Address(mapped.address(), mapped.port() == 0 ? defaultPort : mapped.port());
        }
        String literal = Numbers.ipv4(node);
        if (literal != null) {
            return new Address(literal, defaultPort);
        }
        try {
            return new Address(dns.ipv4(node), defaultPort);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("node " + node + " is not in the node map and has no IPv4 address in DNS"
                    + " (" + e.getMessage() + ")", e);
        }
    }
}
