package org.mpiproxy.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Parsers of where ranks go: FreeNOS hostfiles ({@code <ipv4>:<port>:<coreId>}, one rank per
 * line), Hydra-style hostfiles ({@code host[:n]}, n ranks on host) and {@code --hosts a:2,b:2}
 * lists. {@code #} starts a comment, blank lines are ignored. A file is FreeNOS when its lines
 * have two colons, Hydra when they have at most one; one file does not mix the two.
 * Malformed input fails with an {@link IllegalArgumentException} naming the file and line (or
 * the list entry) and echoing it.
 */
public final class Hostfiles {

    /** Most ranks per node entry, and most lines. */
    public static final int MAX_SLOTS = 65534;

    /**
     * A parsed hostfile: either FreeNOS rank placements or Hydra node slots.
     *
     * @param placements FreeNOS form: rank n+1 runs at element n; empty for Hydra files
     * @param nodes      Hydra form: nodes with their slots in order; empty for FreeNOS files
     */
    public record Content(List<Placement> placements, List<NodeSlots> nodes) {

        public Content {
            placements = List.copyOf(placements);
            nodes = List.copyOf(nodes);
        }

        /** @return whether the file is in FreeNOS form (lines with two colons) */
        public boolean isFreeNos() {
            return !placements.isEmpty();
        }
    }

    private Hostfiles() {
    }

    /**
     * @param file the hostfile
     * @return its content
     * @throws IOException              when it cannot be read
     * @throws IllegalArgumentException when a line is malformed
     */
    public static Content read(Path file) throws IOException {
        return parse(file.toString(), Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    /**
     * @param name  the file's name, for messages
     * @param lines its lines
     * @return the content; both lists empty when the file has no node lines
     * @throws IllegalArgumentException when a line is malformed or the forms are mixed
     */
    public static Content parse(String name, List<String> lines) {
        List<Placement> placements = new ArrayList<>();
        List<NodeSlots> nodes = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = stripComment(lines.get(i));
            if (line.isEmpty()) {
                continue;
            }
            String where = name + " line " + (i + 1);
            long colons = line.chars().filter(c -> c == ':').count();
            if (colons == 2) {
                if (!nodes.isEmpty()) {
                    throw mixed(where, line);
                }
                placements.add(freeNos(where, line));
            } else {
                if (!placements.isEmpty()) {
                    throw mixed(where, line);
                }
                nodes.add(hostSlots(where, line));
            }
            if (placements.size() + nodes.size() > MAX_SLOTS) {
                throw new IllegalArgumentException(where + ": more than " + MAX_SLOTS + " entries");
            }
        }
        return new Content(placements, nodes);
    }

    /**
     * Parses {@code --hosts}: comma-separated {@code host[:n]} entries.
     *
     * @param list the option's value
     * @return the nodes in order
     * @throws IllegalArgumentException naming the entry when one is malformed
     */
    public static List<NodeSlots> parseHostList(String list) {
        String[] entries = list.split(",", -1);
        List<NodeSlots> nodes = new ArrayList<>(entries.length);
        for (int i = 0; i < entries.length; i++) {
            String where = "--hosts entry " + (i + 1);
            String entry = entries[i].strip();
            if (entry.isEmpty()) {
                throw new IllegalArgumentException(where + " is empty, got '" + Numbers.printable(list) + "'");
            }
            nodes.add(hostSlots(where, entry));
        }
        return List.copyOf(nodes);
    }

    private static String stripComment(String line) {
        int hash = line.indexOf('#');
        return (hash < 0 ? line : line.substring(0, hash)).strip();
    }

    private static IllegalArgumentException mixed(String where, String line) {
        return new IllegalArgumentException(where + ": mixes FreeNOS lines (<ipv4>:<port>:<coreId>) with host[:n]"
                + " lines, got '" + Numbers.printable(line) + "'");
    }

    private static Placement freeNos(String where, String line) {
        String[] f = line.split(":", -1);
        String problem = null;
        String address = Numbers.ipv4(f[0]);
        int port = Numbers.parse(f[1], 1, 65535);
        int core = Numbers.parse(f[2], 0, 65535);
        if (address == null) {
            problem = "'" + f[0] + "' is not an IPv4 address";
        } else if (port < 0) {
            problem = "port '" + f[1] + "' is not a number in 1-65535";
        } else if (core < 0) {
            problem = "coreId '" + f[2] + "' is not a number in 0-65535";
        }
        if (problem != null) {
            throw new IllegalArgumentException(where + ": " + problem + " (expected <ipv4>:<port>:<coreId>), got '"
                    + Numbers.printable(line) + "'");
        }
        return new Placement(address, port, core, address);
    }

    private static NodeSlots hostSlots(String where, String entry) {
        int colon = entry.indexOf(':');
        String host = colon < 0 ? entry : entry.substring(0, colon);
        String problem = hostProblem(host);
        int slots = 1;
        if (problem == null && colon >= 0) {
            slots = Numbers.parse(entry.substring(colon + 1), 1, MAX_SLOTS);
            if (slots < 0) {
                problem = "rank count '" + entry.substring(colon + 1) + "' is not a number in 1-" + MAX_SLOTS;
            }
        }
        if (problem != null) {
            throw new IllegalArgumentException(where + ": " + problem + " (expected host[:n]), got '"
                    + Numbers.printable(entry) + "'");
        }
        return new NodeSlots(host, slots);
    }

    /** @return why {@code host} is not a host name or IPv4 address, or {@code null} */
    static String hostProblem(String host) {
        if (host.isEmpty()) {
            return "the host name is empty";
        }
        if (host.length() > 253) {
            return "the host name is longer than 253 characters";
        }
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                    || c == '_')) {
                return "'" + Numbers.printable(host) + "' is not a host name (letters, digits, '-', '.', '_')";
            }
        }
        return null;
    }
}
