package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;

import org.junit.jupiter.api.Test;

class HostPortsTest {

    @Test
    void shouldGiveAPortBelowTheEphemeralRangeThatBinds() throws Exception {
        int low = HostPorts.ephemeralLow();
        for (int i = 0; i < 20; i++) {
            int port = HostPorts.free();
            assertTrue(port >= HostPorts.LOWEST && port < low, port + " not in " + HostPorts.LOWEST + ".." + (low - 1));
            try (DatagramChannel rankZero = DatagramChannel.open()) {
                rankZero.bind(new InetSocketAddress(port));
            }
        }
    }

    @Test
    void shouldNeverGiveAPortThatIsBound() throws Exception {
        int port = HostPorts.free();
        try (DatagramChannel holder = DatagramChannel.open()) {
            holder.bind(new InetSocketAddress(port));
            for (int i = 0; i < 200; i++) {
                assertTrue(HostPorts.free() != port);
            }
        }
    }
}
