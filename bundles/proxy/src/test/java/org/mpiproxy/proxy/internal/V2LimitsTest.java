package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.ProcessLauncher;
import org.mpiproxy.channel.shm.internal.MappedFileChannelManager;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.internal.ChannelRankTransport;
import org.mpiproxy.mpi.internal.HostfileEntry;
import org.mpiproxy.mpi.internal.V2HostTransport;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/**
 * The v2 maximum message size ({@code v2.max.message.bytes}) and the host's dead-node silence
 * ({@link V2HostTransport#deadAfter}), host library against dispatcher over real UDP and rings.
 */
class V2LimitsTest {

    private static final int MAX = 4096;

    @TempDir
    Path dir;

    private final ExecutorService launches = Executors.newFixedThreadPool(2);
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
    private final AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
    private V2Dispatcher dispatcher;
    private UdpTransport transport;

    private int start(long maxMessageBytes, Consumer<ChannelRankTransport> body) throws IOException {
        MappedFileChannelManager channels = new MappedFileChannelManager(
                Map.of("base.directory", dir.resolve("shm").toString()));
        ProcessLauncher launcher = ThreadRanks.launcher((rank, request) -> body.accept(rank));
        ProxySettings settings = new ProxySettings(dir.resolve("logs"), 1 << 20, Duration.ofSeconds(30),
                Duration.ofSeconds(1));
        dispatcher = new V2Dispatcher(channels, settings, new V2Settings(V2Datagrams.KEYS, "127.0.0.1",
                Duration.ofSeconds(30), 1024, 1448, Duration.ofSeconds(300), maxMessageBytes),
                core -> launcher, () -> transportRef.get().wakeup(), launches, timer, System::currentTimeMillis);
        ProtocolFront front = new ProtocolFront(new V1Dispatcher(channels, settings, core -> launcher, () -> { },
                launches, timer), false, dispatcher);
        transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 20, 1 << 20, 65507), () -> front);
        transportRef.set(transport);
        return transport.localAddress().getPort();
    }

    @AfterEach
    void tearDown() {
        if (transport != null) {
            transport.close();
        }
        if (dispatcher != null) {
            dispatcher.close();
        }
        launches.shutdownNow();
        timer.shutdownNow();
    }

    private static List<HostfileEntry> oneRank(int port) {
        return List.of(new HostfileEntry(1, new byte[] {127, 0, 0, 1}, port, 0));
    }

    private static ByteBuffer ints(int count, int first) {
        ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < count; i++) {
            b.putInt(4 * i, first + i);
        }
        return b;
    }

    @Test
    void shouldRefuseAMessageLargerThanTheMaximumAndStoreNothingOfIt() throws IOException {
        // the rank echoes the 2000 elements it receives: the two accepted messages, nothing of the refused one
        int port = start(MAX, rank -> {
            ByteBuffer b = ByteBuffer.allocate(2000 * 4).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, 2000, 0);
            rank.send(MpiDatatype.INT.code(), b, 0, 2000, 0);
        });
        V2HostTransport host = V2HostTransport.start(oneRank(port), "echo", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(30), System.err);
        host.send(MpiDatatype.INT.code(), ints(1000, 0), 0, 1000, 1);
        MpiException e = assertThrows(MpiException.class, () -> {
            // sent eagerly: the refusal comes with this call or, at the latest, with the flush
            host.send(MpiDatatype.INT.code(), ints(2000, 100_000), 0, 2000, 1);
            host.flush(1);
        });
        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, e.errorCode());
        assertTrue(e.getMessage().contains("message of 8000 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("v2.max.message.bytes) is 4096 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("MPIPROXY_ERR_MESSAGE_TOO_LARGE"), e.getMessage());
        // exactly the maximum is accepted
        host.send(MpiDatatype.INT.code(), ints(1000, 1000), 0, 1000, 1);
        ByteBuffer back = ByteBuffer.allocate(2000 * 4).order(ByteOrder.LITTLE_ENDIAN);
        host.recv(MpiDatatype.INT.code(), back, 0, 2000, 1);
        assertEquals(-1, ints(2000, 0).mismatch(back), "first differing byte");
        assertArrayEquals(new int[] {0, 0}, host.finish());
        assertTrue(dispatcher.counter(V2Counter.SEND_TOO_LARGE) >= 1);
    }

    @Test
    void shouldCountAMessageWhoseSizeIsNotStatedAndRefuseTheFragmentBeyondTheMaximum() {
        assertFalse(MessageSizeLimit.exceeds(MAX, 0, 0, 1344));
        assertFalse(MessageSizeLimit.exceeds(MAX, 2688, 0, 1344));
        assertTrue(MessageSizeLimit.exceeds(MAX, 4032, 0, 1344));
        assertTrue(MessageSizeLimit.exceeds(MAX, 0, MAX + 1, 1344));
        assertFalse(MessageSizeLimit.exceeds(MAX, 0, MAX, 1344));
        // a stated size counts only on a message's first fragment
        assertFalse(MessageSizeLimit.exceeds(MAX, 1344, MAX + 1, 1344));
        assertTrue(MessageSizeLimit.exceeds(MAX, 0, -1L, 8), "a stated size read as unsigned");
        assertFalse(MessageSizeLimit.exceeds(0, Long.MAX_VALUE / 2, -1L, 1344), "0 = no limit");
        assertEquals(0xFFFF_FFFFL, MessageSizeLimit.argument(1L << 40));
        assertEquals(MAX, MessageSizeLimit.argument(MAX));
    }

    @Test
    void shouldAcceptLargeMessagesWhenTheMaximumIsZero() throws IOException {
        int count = 100_000;
        int port = start(0, rank -> {
            ByteBuffer b = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
            rank.recv(MpiDatatype.INT.code(), b, 0, count, 0);
            rank.send(MpiDatatype.INT.code(), b, 0, count, 0);
        });
        V2HostTransport host = V2HostTransport.start(oneRank(port), "echo", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ofSeconds(30), System.err);
        host.send(MpiDatatype.INT.code(), ints(count, 7), 0, count, 1);
        ByteBuffer back = ByteBuffer.allocate(count * 4).order(ByteOrder.LITTLE_ENDIAN);
        host.recv(MpiDatatype.INT.code(), back, 0, count, 1);
        assertEquals(-1, ints(count, 7).mismatch(back), "first differing byte");
        assertArrayEquals(new int[] {0, 0}, host.finish());
    }

    @Test
    void shouldDeclareASilentNodeDeadAfterTheDeadNodeSilenceWhileRepliesWaitForever() throws IOException {
        CompletableFuture<Void> release = new CompletableFuture<>();
        int port = start(MAX, rank -> release.join());
        // timeout zero: reply waits never end by themselves; only the dead-node silence can end the RECV
        V2HostTransport host = V2HostTransport.start(oneRank(port), "wait", List.of(), V2Datagrams.KEYS, 1448,
                Duration.ZERO, Duration.ofMillis(300), System.err);
        assertEquals(Duration.ofMillis(300), host.deadAfter());
        transport.close();
        MpiException e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(MpiException.class,
                () -> host.recv(MpiDatatype.INT.code(), ByteBuffer.allocate(4), 0, 1, 1)));
        release.complete(null);
        assertEquals(MpiErrors.ERR_OTHER, e.errorCode());
        assertTrue(e.getMessage().contains("nothing heard for 300 ms"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> host.deadAfter(Duration.ofMillis(-1)));
        assertEquals(Duration.ZERO, host.deadAfter(Duration.ZERO).deadAfter());
    }
}
