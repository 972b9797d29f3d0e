package org.mpiproxy.itests;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free ports for the nodes a test configures, taken below the kernel's ephemeral range.
 *
 * <p>A port the kernel hands out for port 0 comes from the ephemeral range, and so can be handed
 * out again to any socket bound to port 0 (a resolver query, a host's socket, a rank) between the
 * moment it is chosen and the moment the node binds it, or while a test has moved the node away
 * from it. A port below the range is taken only by a socket that names it.
 */
final class Ports {

    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int LOWEST = 10_000;
    private static final int ATTEMPTS = 200;
    /** Handed out already: two probes in a row may find the same port free. */
    private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

    private Ports() {
    }

    /** @return a UDP port free on {@code address} now, outside the ephemeral range */
    static int freeUdpPort(String address) {
        InetSocketAddress bindAddress = new InetSocketAddress(address, 0);
        return pick(port -> {
            try (DatagramSocket s = new DatagramSocket(new InetSocketAddress(bindAddress.getAddress(), port))) {
                return true;
            }
        });
    }

    /** @return a TCP port free on the loopback address now, outside the ephemeral range */
    static int freeTcpPort() {
        return pick(port -> {
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return true;
            }
        });
    }

    private interface Probe {
        boolean binds(int port) throws IOException;
    }

    private static int pick(Probe probe) {
        int below = ephemeralLow();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ATTEMPTS; i++) {
            int port = random.nextInt(LOWEST, below);
            try {
                if (!GIVEN.contains(port) && probe.binds(port) && GIVEN.add(port)) {
                    return port;
                }
            } catch (IOException taken) {
                // in use: try another
            }
        }
        throw new UncheckedIOException(new IOException("no free port in " + LOWEST + ".." + (below - 1)
                + " after " + ATTEMPTS + " attempts"));
    }

    private static int ephemeralLow() {
        try {
            // line by line: Files.readString trusts the size /proc reports and may read one byte
            int low = Integer.parseInt(Files.readAllLines(RANGE).get(0).trim().split("\\s+")[0]);
            return low > LOWEST + 1000 ? low : 32_768;
        } catch (IOException | RuntimeException unreadable) {
            return 32_768;
        }
    }
}
