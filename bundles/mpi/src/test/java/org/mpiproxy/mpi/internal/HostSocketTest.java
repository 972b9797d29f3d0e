package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class HostSocketTest {

    @Test
    void shouldReturnAtOnceWhenADatagramWaits() throws Exception {
        HostSocket socket = HostSocket.open(0, 1 << 16, false);
        try (DatagramChannel peer = DatagramChannel.open()) {
            peer.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), loopback(socket));
            long t0 = System.nanoTime();
            int ready = 0;
            // the datagram may take a moment to reach the socket; each call polls, then sleeps 1 s
            while (ready == 0 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5)) {
                ready = HostSocket.select(socket.selector(), 1000, HostSocket.POLL_BEFORE_SLEEP_NANOS);
            }
            assertEquals(1, ready, "the socket's key is ready");
            socket.selector().selectedKeys().clear();
            ByteBuffer in = ByteBuffer.allocate(16);
            assertTrue(socket.channel().receive(in) != null, "the datagram is there");
        } finally {
            close(socket);
        }
    }

    @Test
    void shouldSleepInTheSelectorAfterPollingWhenNothingComes() throws Exception {
        HostSocket socket = HostSocket.open(0, 1 << 16, false);
        try {
            long t0 = System.nanoTime();
            int ready = HostSocket.select(socket.selector(), 30, HostSocket.POLL_BEFORE_SLEEP_NANOS);
            long waited = System.nanoTime() - t0;
            assertEquals(0, ready, "nothing came");
            // the selector's own wait ran after the polling: 30 ms, not the 20 µs of polling alone
            assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(25), "waited " + waited / 1000 + " µs");
        } finally {
            close(socket);
        }
    }

    @Test
    void shouldPollForTheGivenTimeBeforeItSleeps() throws Exception {
        HostSocket socket = HostSocket.open(0, 1 << 16, false);
        try {
            long t0 = System.nanoTime();
            int ready = HostSocket.select(socket.selector(), 1, TimeUnit.MILLISECONDS.toNanos(5));
            long waited = System.nanoTime() - t0;
            assertEquals(0, ready);
            // 5 ms of polling before a sleep of 1 ms
            assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(5), "waited " + waited / 1000 + " µs");
        } finally {
            close(socket);
        }
    }

    private static InetSocketAddress loopback(HostSocket socket) throws Exception {
        return new InetSocketAddress("127.0.0.1", ((InetSocketAddress) socket.channel().getLocalAddress()).getPort());
    }

    private static void close(HostSocket socket) throws Exception {
        socket.selector().close();
        socket.channel().close();
    }
}
