package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.Doorbell;
import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.protocol.MpiDatatype;

/** The rank's side of ring doorbells, against the proxy's side played by the test. */
class RankDoorbellTest {

    private static final int INT = MpiDatatype.INT.code();

    @TempDir
    Path dir;

    @Test
    void shouldSleepOnItsDoorbellUntilTheProxyRingsIt() throws Exception {
        Path file = dir.resolve("rank-1.chan");
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 65536, 7L, 1)) {
            // a minute of sleep between checks: only the doorbell ends the wait within the test
            ChannelRankTransport rank = new ChannelRankTransport(MappedRankChannel.map(file), 60_000);
            CompletableFuture<Integer> received = CompletableFuture.supplyAsync(() -> {
                ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
                rank.recv(INT, b, 0, 1, 0);
                return b.getInt(0);
            });
            MessageRing toRank = proxySide.toRank();
            long bell = awaitDoorbell(toRank);
            ByteBuffer one = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 42);
            assertTrue(toRank.offer(INT, 1, one, 0, 4));
            assertEquals(bell, Doorbell.take(toRank));
            try (DatagramChannel proxy = DatagramChannel.open()) {
                proxy.send(Doorbell.datagram(), Doorbell.decode(bell));
            }
            assertEquals(42, received.get(20, TimeUnit.SECONDS));
            assertEquals(0, toRank.doorbell());
            rank.finish();
        }
    }

    @Test
    void shouldRingTheProxysDoorbellAfterItWrote() throws Exception {
        Path file = dir.resolve("rank-2.chan");
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 65536, 7L, 2);
                DatagramChannel proxy = DatagramChannel.open()) {
            proxy.bind(new InetSocketAddress("127.0.0.1", 0));
            ChannelRankTransport rank = ChannelRankTransport.map(file);
            MessageRing fromRank = proxySide.fromRank();
            assertTrue(fromRank.producerRingsDoorbell(), "the rank's library promises to ring");
            long bell = Doorbell.encode((InetSocketAddress) proxy.getLocalAddress());
            fromRank.doorbell(bell);

            ByteBuffer one = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 7);
            rank.send(INT, one, 0, 1, 0);
            ByteBuffer got = ByteBuffer.allocate(64);
            assertNotEquals(null, proxy.receive(got), "a datagram came");
            assertTrue(Doorbell.isDoorbell(got.flip()));
            assertEquals(0, fromRank.doorbell(), "taken");
            assertEquals(1, fromRank.poll(INT, ByteBuffer.allocate(4), 0, 1));
            rank.finish();
        }
    }

    private static long awaitDoorbell(MessageRing ring) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < end) {
            long bell = ring.doorbell();
            if (bell != 0) {
                return bell;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("the rank never announced a doorbell");
    }
}
