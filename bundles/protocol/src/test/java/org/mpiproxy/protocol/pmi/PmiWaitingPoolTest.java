package org.mpiproxy.protocol.pmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.security.auth.module.UnixSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The connections that have not named their rank are shared fairly among uids: while the pool has
 * room anyone gets in; when it is full, a uid that holds fewer takes the place of the oldest of the
 * uid that holds the most, until both hold as many; the uid of a loopback client is the kernel's
 * ({@code /proc/net/tcp}), tried here with real connections of the test's own uid.
 */
class PmiWaitingPoolTest {

    private static final long TIMEOUT_SECONDS = 60;
    private static final long OWN_UID = new UnixSystem().getUid();

    private final List<String> problems = new CopyOnWriteArrayList<>();
    private final BlockingQueue<String> arrivals = new LinkedBlockingQueue<>();
    private final List<Socket> sockets = new ArrayList<>();
    private PmiServer server;

    @AfterEach
    void close() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private Socket connect(int port) throws Exception {
        return connect(port, new HashMap<>(), 0);
    }

    /** Connects from a port that {@code table} says {@code uid} owns before the server can ask. */
    private Socket connect(int port, Map<Integer, Long> table, long uid) throws Exception {
        Socket s = new Socket();
        sockets.add(s);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        table.put(s.getLocalPort(), uid);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        return s;
    }

    private static String line(Socket s) throws Exception {
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }

    private void await(int lines) throws Exception {
        while (problems.size() < lines) {
            assertTrue(arrivals.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS) != null, "problems: " + problems);
        }
    }

    private void problem(String line) {
        problems.add(line);
        arrivals.add(line);
    }

    @Test
    void shouldFindTheOwnerOfEachRealLoopbackClientInOneReading() throws Exception {
        try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Socket a = connect(listening.getLocalPort());
            Socket b = connect(listening.getLocalPort());
            Socket elsewhere = connect(server().port());

            Map<Integer, Long> owners = PeerCredentials.uidsOfClients(listening.getLocalPort());

            assertEquals(OWN_UID, owners.get(a.getLocalPort()));
            assertEquals(OWN_UID, owners.get(b.getLocalPort()));
            assertFalse(owners.containsKey(elsewhere.getLocalPort()), "a client of another server is not listed");
            assertFalse(owners.containsKey(listening.getLocalPort()), "nor the server's own sockets");
        }
    }

    /** A server with the kernel's identities: its connections are owned by the test's uid. */
    private PmiServer server() throws Exception {
        server = new PmiServer((job, rank, text) -> true, this::problem);
        return server;
    }

    @Test
    void shouldNameTheRealOwnerOfAFullPoolAndRefuseItsNextConnection() throws Exception {
        int port = server().port();
        for (int i = 0; i < PmiServer.MAX_UNIDENTIFIED; i++) {
            connect(port);
        }
        Socket extra = connect(port);

        assertEquals(null, line(extra), "a uid alone in the pool fills it; its next connection is closed");
        await(1);
        assertEquals("PMI: " + PmiServer.MAX_UNIDENTIFIED + " connections have not named their rank yet; refused 1"
                + " more, the last of uid " + OWN_UID + ", which has " + PmiServer.MAX_UNIDENTIFIED
                + " of them waiting", problems.get(0), "the uid the kernel lists for the real sockets");
    }

    @Test
    void shouldLetAnotherUidTakeThePlaceOfTheOldestOfAUidThatFilledThePool() throws Exception {
        Map<Integer, Long> table = new ConcurrentHashMap<>();
        AtomicInteger readings = new AtomicInteger();
        server = new PmiServer((job, rank, text) -> true, this::problem, new PmiServer.Identity() {
            @Override
            public long uidOfClient(int clientPort, int serverPort) {
                return table.getOrDefault(clientPort, -1L);
            }

            @Override
            public long uidOfProcess(long pid) {
                return pid / 100;
            }

            @Override
            public Map<Integer, Long> uidsOfClients(int serverPort) {
                readings.incrementAndGet();
                return new HashMap<>(table);
            }
        }, System::nanoTime);
        int port = server.port();
        for (int i = 0; i < PmiServer.MAX_UNIDENTIFIED; i++) {
            connect(port, table, 1000);
        }
        Map<String, String> env = server.register(7, 0, 1);
        server.started(7, 0, 2000 * 100);
        Socket rank = connect(port, table, 2000);

        rank.getOutputStream().write(("cmd=initack pmiid=" + env.get("PMI_ID") + "\n")
                .getBytes(StandardCharsets.UTF_8));
        assertEquals("cmd=initack rc=0", line(rank), "uid 2000 gets in although uid 1000 filled the pool");
        assertEquals(List.of("PMI: " + PmiServer.MAX_UNIDENTIFIED + " connections have not named their rank yet, "
                + PmiServer.MAX_UNIDENTIFIED + " of them of uid 1000: closed its oldest for one of uid 2000"
                + " (0 waiting); 1 so far"), problems);
        assertEquals(1, readings.get(), "the kernel's table read once, when the pool was full");
    }

    /** A connection of no socket for the pool's arithmetic: accepted at {@code at}, owned by {@code uid}. */
    private static PmiConnection waiting(long at, long uid) {
        PmiConnection c = new PmiConnection(null, null, at, 0);
        c.peerUid = uid;
        return c;
    }

    @Test
    void shouldShareAFullPoolEquallyAndLetOneUidFillItAlone() {
        PmiWaitingPool pool = new PmiWaitingPool(8, this::problem, () -> 0, 1);
        PmiWaitingPool.Owners noTable = new PmiWaitingPool.Owners(() -> null, port -> -1);
        List<PmiConnection> in = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            PmiConnection c = waiting(i, 1000);
            assertTrue(pool.admit(in, c, noTable, in::remove), "room: anyone");
            in.add(c);
        }
        assertFalse(pool.admit(in, waiting(8, 1000), noTable, in::remove), "full of its own");

        int admitted = 0;
        for (int i = 0; i < 8; i++) {
            PmiConnection c = waiting(10 + i, 2000);
            if (pool.admit(in, c, noTable, in::remove)) {
                in.add(c);
                admitted++;
            }
        }
        assertEquals(4, admitted, "uid 2000 gets in until both hold as many");
        assertEquals(4, in.stream().filter(c -> c.peerUid == 1000).count());
        assertEquals(List.of(4L, 5L, 6L, 7L), in.stream().filter(c -> c.peerUid == 1000).map(c -> c.accepted).toList(),
                "the oldest made room");
        assertFalse(pool.admit(in, waiting(20, 1000), noTable, in::remove), "and uid 1000 cannot take them back");
    }

    @Test
    void shouldShareAsOnePoolWhenNoOwnerIsKnown() {
        PmiWaitingPool pool = new PmiWaitingPool(4, this::problem, () -> 0, 1);
        PmiWaitingPool.Owners unknown = new PmiWaitingPool.Owners(Map::of, port -> -1);
        List<PmiConnection> in = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            PmiConnection c = new PmiConnection(null, null, i, 40000 + i);
            assertTrue(pool.admit(in, c, unknown, in::remove));
            in.add(c);
        }
        assertFalse(pool.admit(in, new PmiConnection(null, null, 9, 40009), unknown, in::remove),
                "first come, first served, as before");
        assertEquals(4, in.size());
    }

    @Test
    void shouldNotMakeRoomWithAConnectionThatNamedItsRank() {
        PmiWaitingPool pool = new PmiWaitingPool(2, this::problem, () -> 0, 1);
        PmiWaitingPool.Owners noTable = new PmiWaitingPool.Owners(() -> null, port -> -1);
        List<PmiConnection> in = new ArrayList<>(List.of(waiting(0, 1000), waiting(1, 1000)));
        in.forEach(c -> c.who = new PmiRanks.Expected(1, 0, 2));

        assertFalse(pool.admit(in, waiting(2, 2000), noTable, in::remove), "ranks waiting for their pid stay");
        assertEquals(2, in.size());
    }
}
