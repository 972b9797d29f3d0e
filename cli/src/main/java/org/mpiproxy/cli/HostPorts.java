package org.mpiproxy.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Rank 0's UDP port: free now, and outside the kernel's ephemeral range.
 *
 * <p>The launcher holds rank 0's port only in turns: it probes and EXECs from it, lets it go,
 * rank 0 binds it, and {@code kill} takes it over later. A port from the ephemeral range (what
 * binding port 0 returns) can be handed to any socket bound to port 0 in between — the
 * launcher's own output socket, a rank's, a resolver query — and rank 0 or the next EXEC round
 * then fails with "Address already in use". A port below the range is taken only by a socket
 * that names it.
 */
final class HostPorts {

    private static final Path RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    /** The lowest port handed out: below it are the well-known and registered services. */
    static final int LOWEST = 10_000;
    private static final int ATTEMPTS = 200;

    private HostPorts() {
    }

    /**
     * @return a UDP port free on every address now, below the ephemeral range (a port from the
     *         ephemeral range when no port below it is free)
     * @throws IOException when no socket can be bound at all
     */
    static int free() throws IOException {
        int below = ephemeralLow();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; below > LOWEST && i < ATTEMPTS; i++) {
            int port = random.nextInt(LOWEST, below);
            try (DatagramChannel probe = DatagramChannel.open()) {
                probe.bind(new InetSocketAddress(port));
                return port;
            } catch (IOException taken) {
                // in use: try another
            }
        }
        try (DatagramChannel probe = DatagramChannel.open()) {
            probe.bind(new InetSocketAddress(0));
            return ((InetSocketAddress) probe.getLocalAddress()).getPort();
        }
    }

    /** @return the lowest port of the kernel's ephemeral range (32768 when it cannot be read) */
    static int ephemeralLow() {
        try {
            // line by line: Files.readString trusts the size /proc reports and may read one byte
            return Integer.parseInt(Files.readAllLines(RANGE).get(0).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException unreadable) {
            return 32_768;
        }
    }
}
