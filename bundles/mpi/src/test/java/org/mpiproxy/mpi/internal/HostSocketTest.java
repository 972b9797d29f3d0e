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
            int ready = 0;
            // the datagram may take a moment to reach the socket; each call polls, then sleeps up
            // to 1 s: a minute of calls only stops a test whose datagram never comes
            for (int call = 0; ready == 0 && call < 60; call++) {
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
        // 5 ms of polling before a sleep of 1 ms, on a clock that moves 1 ms each time it is read:
        // one read sets the end, then each poll reads it once, until the fifth finds the time up
        long[] clock = {0};
        int[] reads = {0};
        HostSocket socket = HostSocket.open(0, 1 << 16, false);
        try {
            assertEquals(0, HostSocket.select(socket.selector(), 1, TimeUnit.MILLISECONDS.toNanos(5), () -> {
                reads[0]++;
                return clock[0]++ * TimeUnit.MILLISECONDS.toNanos(1);
            }), "nothing came");
        } finally {
            close(socket);
        }
        assertEquals(6, reads[0], "polled until 5 ms had passed on its clock");
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
