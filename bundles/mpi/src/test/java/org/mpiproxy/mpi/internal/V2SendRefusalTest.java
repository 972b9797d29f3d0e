package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mpiproxy.mpi.MpiException;
import org.mpiproxy.mpi.internal.engine.Engine;
import org.mpiproxy.mpi.internal.engine.Kind;
import org.mpiproxy.mpi.internal.engine.Operation;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.MpiDatatype;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * A SEND the proxy refuses (docs/protocol-v2.md 5.2) while the host waits for data from that rank
 * fails the wait as soon as the refusal arrives, not after the host's timeout (10 minutes here):
 * a receive from that rank, and a wait of the message engine for it or for any rank. A refusal
 * for another rank leaves a receive alone and is thrown, once, by the next send to its rank. The
 * proxy ({@link RefusingProxy}) refuses only once the host asks for data; every wait is capped at
 * a minute only to stop a hang.
 */
class V2SendRefusalTest {

    private static final int INT = MpiDatatype.INT.code();
    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    private RefusingProxy proxy;
    private V2HostTransport host;
    private final ExecutorService waiter = Executors.newSingleThreadExecutor();
    private final ByteArrayOutputStream text = new ByteArrayOutputStream();
    private final PrintStream diagnostics = new PrintStream(text, true, StandardCharsets.UTF_8);

    @BeforeEach
    void start() throws Exception {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        ClusterKeys cluster = ClusterKeys.of(Map.of(1, key), 1);
        proxy = new RefusingProxy(cluster);
        byte[] localhost = {127, 0, 0, 1};
        host = V2HostTransport.start(List.of(new HostfileEntry(1, localhost, proxy.port(), 1),
                        new HostfileEntry(2, localhost, proxy.port(), 2)), "echo", List.of(), cluster,
                V2HeaderDescriptor.DEFAULT_DATAGRAM_LENGTH, TIMEOUT, diagnostics);
    }

    @AfterEach
    void stop() throws Exception {
        waiter.shutdownNow();
        host.finish();
        proxy.close();
    }

    private static ByteBuffer ints(int... values) {
        ByteBuffer b = ByteBuffer.allocate(values.length * Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(values);
        return b;
    }

    private static MpiException failure(Future<?> wait) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> wait.get(1, TimeUnit.MINUTES));
        return assertInstanceOf(MpiException.class, e.getCause());
    }

    @Test
    void shouldFailAReceiveFromARankThatRefusedAMessageOnceTheRefusalArrives() throws Exception {
        proxy.silent(1);
        host.send(INT, ints(1, 2, 3, 4), 0, 4, 1);
        proxy.await("SEND 1 0");
        proxy.refuseAtRecv(1, 1, MpiErrors.ERR_COMM);

        Future<?> recv = waiter.submit(() -> host.recv(INT, ByteBuffer.allocate(16), 0, 4, 1));

        MpiException e = failure(recv);
        assertEquals(MpiErrors.ERR_COMM, e.errorCode());
        assertEquals("MPI_ERR_COMM: rank 1 on 127.0.0.1:" + proxy.port() + ":1 refused a message of 16 bytes to it (MPI_ERR_COMM:"
                + " unknown job); the messages sent to it after that one were dropped", e.getMessage());
        List<String> log = proxy.log();
        assertTrue(log.indexOf("RECV 1") < log.indexOf("refused SEND 1 0"), "refused while the host waited: " + log);
        // thrown once: the next send to the rank goes out, and is stored
        proxy.accept(1);
        host.send(INT, ints(5, 6, 7, 8), 0, 4, 1);
        host.flush(1);
    }

    @Test
    void shouldNotFailAReceiveForARefusalOfAnotherRankButThrowThatAtTheNextSendToIt() throws Exception {
        proxy.silent(2);
        host.send(INT, ints(1, 2, 3, 4), 0, 4, 2);
        proxy.await("SEND 2 0");
        proxy.refuseAtRecv(2, 1, MpiErrors.ERR_COMM);
        // rank 1's message comes two RECVs after the refusal: the receive waited on without it
        proxy.deliverAt(1, 3, new int[] {9, 8, 7});
        ByteBuffer got = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);

        Future<?> recv = waiter.submit(() -> host.recv(INT, got, 0, 3, 1));

        recv.get(1, TimeUnit.MINUTES);
        int[] values = new int[3];
        got.asIntBuffer().get(values);
        assertArrayEquals(new int[] {9, 8, 7}, values);
        List<String> log = proxy.log();
        assertTrue(log.indexOf("refused SEND 2 0") < log.indexOf("data RECV 1"), log.toString());
        MpiException e = assertThrows(MpiException.class, () -> host.send(INT, ints(5), 0, 1, 2));
        assertEquals(MpiErrors.ERR_COMM, e.errorCode());
        assertEquals("MPI_ERR_COMM: rank 2 refused data: MPI_ERR_COMM; the messages sent after it were dropped", e.getMessage());
    }

    @Test
    void shouldFailAnEngineWaitForAnyRankWhenOneRefusedAMessage() throws Exception {
        proxy.silent(2);
        Engine engine = new Engine(0, 3, new HostFabric(host), TIMEOUT.toNanos());
        ByteBuffer message = Engine.newMessage(Integer.BYTES);
        message.putInt(message.position(), 42);
        engine.isend(2, 2, 0, Kind.INT, message);
        proxy.await("SEND 2 0");
        proxy.refuseAtRecv(2, 1, MpiErrors.ERR_TRUNCATE);

        Future<?> wait = waiter.submit(() -> {
            Operation.Recv r = engine.irecv(2, Engine.ANY_SOURCE, 0, Kind.INT, Integer.BYTES, (src, at, n) -> { });
            engine.await(r);
        });

        MpiException e = failure(wait);
        assertEquals(MpiErrors.ERR_TRUNCATE, e.errorCode());
        assertTrue(e.getMessage().startsWith("MPI_ERR_TRUNCATE: rank 2 on 127.0.0.1:" + proxy.port() + ":2 refused a message of "),
                e.getMessage());
        assertTrue(e.getMessage().contains(" to it (MPI_ERR_TRUNCATE: the rank has ended)"), e.getMessage());
    }
}
