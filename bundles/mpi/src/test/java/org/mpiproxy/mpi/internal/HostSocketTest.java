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
        // the selector's own wait runs after the polling: 30 ms, not the 20 µs of polling alone
        long waited = waitWithNothingComing(30, HostSocket.POLL_BEFORE_SLEEP_NANOS);
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(25), "waited " + waited / 1000 + " µs");
    }

    @Test
    void shouldPollForTheGivenTimeBeforeItSleeps() throws Exception {
        // 5 ms of polling before a sleep of 1 ms
        long waited = waitWithNothingComing(1, TimeUnit.MILLISECONDS.toNanos(5));
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(5), "waited " + waited / 1000 + " µs");
    }

    /** @return how long {@link HostSocket#select} took on a socket nothing is sent to (it found nothing) */
    private static long waitWithNothingComing(long millis, long pollNanos) throws Exception {
        HostSocket socket = HostSocket.open(0, 1 << 16, false);
        try {
            long t0 = System.nanoTime();
            assertEquals(0, HostSocket.select(socket.selector(), millis, pollNanos), "nothing came");
            return System.nanoTime() - t0;
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
