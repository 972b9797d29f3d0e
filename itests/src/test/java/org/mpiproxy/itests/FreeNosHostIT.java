package org.mpiproxy.itests;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.Test;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/**
 * Drives the booted distribution as a FreeNOS v1 host would ({@link FreeNosHost}, written from the
 * protocol facts only): EXEC on core 0 and core 1, ping/pong, mpiprime with every flag checked,
 * TERMINATE, then checks that nothing of the job remains. Also feeds every kind of bad input.
 */
public class FreeNosHostIT extends MpiProxyTestSupport {

    private static final int PING = 0xaabbccdd;
    private static final int PONG = 0x12345678;
    private static final int TIMEOUT_MILLIS = (int) TIMEOUT.toMillis();

    @Test
    public void shouldRunMpipingOnCoreZeroAndCoreOneThenLeaveNothing() throws Exception {
        awaitService(ProxyStatus.class, null);
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertExecOk(host.exec(1, 0, 3, "mpiping"), 1, 0);
            assertExecOk(host.exec(2, 1, 3, "mpiping"), 2, 1);

            JobInfo job = jobOf(host);
            long pid1 = rank(job, 1).pid();
            long pid2 = rank(job, 2).pid();
            assertTrue("rank 1 pid " + pid1, pid1 > 0);
            assertTrue("rank 2 pid " + pid2, pid2 > 0);
            awaitCondition(() -> "1".equals(cpusAllowed(pid2)), TIMEOUT,
                    () -> "rank 2 (coreId 1) has Cpus_allowed_list " + cpusAllowed(pid2));

            for (int rank = 1; rank <= 2; rank++) {
                host.sendInts(rank, PING);
                assertEquals("pong of rank " + rank, PONG, host.recvInt(rank));
            }

            Path jobDirectory = jobDirectory(job.jobId());
            assertTrue(jobDirectory + " while running", Files.isDirectory(jobDirectory));

            assertTerminated(host.terminate(1, 0), 1, 0);
            assertTerminated(host.terminate(2, 1), 2, 1);

            assertFalse("rank 1 process " + pid1 + " still alive", ProcessHandle.of(pid1).isPresent());
            assertFalse("rank 2 process " + pid2 + " still alive", ProcessHandle.of(pid2).isPresent());
            assertFalse("/proc/" + pid2 + " still there", Files.exists(Paths.get("/proc/" + pid2)));
            assertFalse(jobDirectory + " left behind", Files.exists(jobDirectory));
            for (RankInfo rank : jobOf(host).ranks()) {
                assertEquals("rank " + rank.rankId() + " state", RankInfo.State.EXITED, rank.state());
                assertEquals("rank " + rank.rankId() + " exit status", 0, rank.exitStatus());
            }
        }
    }

    @Test
    public void shouldComputeEveryPrimeFlagOfMpiprime10000() throws Exception {
        int n = 10000;
        int world = 3;
        // the facts' slicing: round n up to a multiple of W, root = floor(sqrt(n)), per = (n - root) / W
        int rounded = n % world != 0 ? n + world - n % world : n;
        int root = (int) Math.sqrt(rounded);
        int per = (rounded - root) / world;
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertExecOk(host.exec(1, 0, world, "mpiprime " + n), 1, 0);
            assertExecOk(host.exec(2, 1, world, "mpiprime " + n), 2, 1);
            for (int rank = 1; rank < world; rank++) {
                byte[] flags = host.recv(rank, FreeNosHost.MPI_UNSIGNED_CHAR, 1, per);
                assertArrayEquals("flags of rank " + rank, expectedFlags(root + rank * per, per), flags);
            }
            JobInfo job = jobOf(host);
            assertTerminated(host.terminate(1, 0), 1, 0);
            assertTerminated(host.terminate(2, 1), 2, 1);
            assertFalse(Files.exists(jobDirectory(job.jobId())));
        }
    }

    /** Element sizes of the v1 datatypes 0..7 (CHAR, SHORT, LONG, INT, UNSIGNED_CHAR, UNSIGNED_SHORT, UNSIGNED, UNSIGNED_LONG). */
    private static final int[] V1_SIZES = {1, 2, 8, 4, 1, 2, 4, 8};

    @Test
    public void shouldGetBackFromMpiechoEveryElementOfEveryDatatypeAndOf64KiBThenStopIt() throws Exception {
        java.util.Random random = new java.util.Random(11);
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertExecOk(host.exec(1, 0, 2, "mpiecho"), 1, 0);
            // v1 keeps no message boundaries and has no tags: each SEND is one message to the rank,
            // at most 1436 bytes of elements (one 1448-byte datagram), and comes back as its elements
            for (int type = 0; type < V1_SIZES.length; type++) {
                int count = (FreeNosHost.MAX_DATAGRAM - FreeNosHost.HEADER) / V1_SIZES[type];
                byte[] elements = new byte[count * V1_SIZES[type]];
                random.nextBytes(elements);
                host.send(1, type, count, elements);
                assertArrayEquals("echo of datatype " + type + " x " + count, elements,
                        host.recv(1, type, V1_SIZES[type], count));
            }
            // 64 KiB of MPI_SHORT as 46 full datagrams and a short one, all sent before the first RECV
            byte[] shorts = new byte[64 * 1024];
            random.nextBytes(shorts);
            int perDatagram = (FreeNosHost.MAX_DATAGRAM - FreeNosHost.HEADER) / 2;
            for (int from = 0; from < shorts.length / 2; from += perDatagram) {
                int n = Math.min(perDatagram, shorts.length / 2 - from);
                host.send(1, 1, n, java.util.Arrays.copyOfRange(shorts, 2 * from, 2 * (from + n)));
            }
            assertArrayEquals("echo of 32768 MPI_SHORT", shorts, host.recv(1, 1, 2, shorts.length / 2));

            // the stop message: exactly 4 MPI_CHAR "STOP"; the rank exits 0 by itself
            host.send(1, FreeNosHost.MPI_CHAR, 4, "STOP".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            JobInfo job = jobOf(host);
            awaitCondition(() -> rank(jobOf(host), 1).state() == RankInfo.State.EXITED, TIMEOUT,
                    () -> "mpiecho did not exit after the stop message: " + jobOf(host));
            assertTerminated(host.terminate(1, 0), 1, 0);
            assertFalse(Files.exists(jobDirectory(job.jobId())));
        }
    }

    @Test
    public void shouldDropOrRefuseEveryKindOfBadInputAndKeepServing() throws Exception {
        ProxyStatus status = awaitService(ProxyStatus.class, null);
        Map<String, Long> before = status.counters();
        try (FreeNosHost host = new FreeNosHost(udpPort(), 2000)) {
            host.sendRaw(new byte[] {0, 0, 1, 0, 0});                                    // short
            host.sendRaw(FreeNosHost.header(9, 0, 1, 0, 3, 1, 4));                       // unknown op
            host.sendRaw(FreeNosHost.header(FreeNosHost.SEND, 0, 1, 0, 99, 1, 4));       // unknown datatype
            host.sendRaw(FreeNosHost.header(FreeNosHost.RECV, 0, 1, 0, 99, 1, 0));       // unknown datatype
            host.sendRaw(FreeNosHost.header(FreeNosHost.SEND, 0, 1, 0, 3, 100, 8));      // count > payload
            host.sendRaw(FreeNosHost.header(FreeNosHost.SEND, 0, 7, 0, 3, 1, 4));        // unknown rank
            host.sendRaw(FreeNosHost.header(FreeNosHost.RECV, 0, 7, 0, 3, 1, 0));        // unknown rank
            host.sendRaw(new byte[2000]);                                                // oversize
            awaitCounters(status, before, Map.of("invalid.short", 1L, "invalid.op", 1L,
                    "invalid.datatype", 2L, "invalid.count", 1L, "invalid.rank", 2L, "invalid.oversize", 1L));
            assertNull("bad datagrams must get no reply", host.receiveOrNull());

            // EXEC has a reply: every refusal is answered with an error and a reason
            assertExecError(host.exec(1, 0, 0, "mpiping"), 13);                          // world size 0
            assertExecError(host.exec(0, 0, 3, "mpiping"), 6);                           // rank 0 is the host
            assertExecError(host.exec(5, 0, 3, "mpiping"), 6);                           // rank >= world
            assertExecError(host.exec(1, 0, 3, "../../bin/sh -c id"), 13);               // path
            assertExecError(host.exec(1, 0, 3, "/bin/sh"), 13);                          // path
            assertExecError(host.exec(1, 0, 3, "mpiping\u0001x"), 13);                   // control character
            assertExecError(host.exec(1, 0, 3, ""), 13);                                 // empty
            assertExecError(host.exec(1, 0, 3, "mpiping" + " x".repeat(300)), 13);       // hostile: too many args
            assertExecError(host.exec(1, 0, 3, "no-such-program"), 35);                  // missing
            assertExecError(host.exec(1, 999, 3, "mpiping"), 35);                        // core out of range
        }
        // and the same proxy still runs a real job
        try (FreeNosHost host = new FreeNosHost(udpPort(), TIMEOUT_MILLIS)) {
            assertExecOk(host.exec(1, 0, 2, "mpiping"), 1, 0);
            host.sendInts(1, PING);
            assertEquals(PONG, host.recvInt(1));
            assertTerminated(host.terminate(1, 0), 1, 0);
        }
    }

    private static void assertExecOk(FreeNosHost.Reply reply, int rank, int core) {
        assertEquals("EXEC reply op " + reply + " " + reply.text(), FreeNosHost.EXEC, reply.op);
        assertEquals("EXEC result " + reply.text(), 0, reply.result);
        assertEquals(rank, reply.rankId);
        assertEquals(core, reply.coreId);
    }

    private static void assertExecError(FreeNosHost.Reply reply, int expected) {
        assertEquals("EXEC reply op " + reply, FreeNosHost.EXEC, reply.op);
        assertEquals("EXEC result (" + reply.text() + ")", expected, reply.result);
        assertFalse("EXEC error without a reason", reply.text().isBlank());
    }

    private static void assertTerminated(FreeNosHost.Reply reply, int rank, int core) {
        assertEquals("TERMINATE reply op " + reply, FreeNosHost.TERMINATE, reply.op);
        assertEquals("TERMINATE result", 0, reply.result);
        assertEquals(rank, reply.rankId);
        assertEquals("exit status of rank " + rank, 0, reply.datacount);
    }

    private JobInfo jobOf(FreeNosHost host) {
        String owner = "127.0.0.1:" + host.localPort();
        for (JobInfo job : jobs()) {
            if (owner.equals(job.owner())) {
                return job;
            }
        }
        throw new AssertionError("no job owned by " + owner + " in " + jobs());
    }

    private static RankInfo rank(JobInfo job, int rankId) {
        for (RankInfo rank : job.ranks()) {
            if (rank.rankId() == rankId) {
                return rank;
            }
        }
        throw new AssertionError("no rank " + rankId + " in " + job);
    }

    private static String cpusAllowed(long pid) {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/" + pid + "/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring("Cpus_allowed_list:".length()).trim();
                }
            }
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void awaitCounters(ProxyStatus status, Map<String, Long> before, Map<String, Long> expected) {
        awaitCondition(() -> deltas(status, before, expected).isEmpty(), TIMEOUT,
                () -> "counter deltas differ: " + deltas(status, before, expected));
    }

    private static List<String> deltas(ProxyStatus status, Map<String, Long> before, Map<String, Long> expected) {
        Map<String, Long> now = status.counters();
        List<String> wrong = new ArrayList<>();
        expected.forEach((name, delta) -> {
            long actual = now.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
            if (actual != delta) {
                wrong.add(name + " moved by " + actual + ", expected " + delta);
            }
        });
        return wrong;
    }

    /** Reference: flag j = 1 when first + j is prime, by trial division. */
    private static byte[] expectedFlags(int first, int count) {
        byte[] flags = new byte[count];
        for (int j = 0; j < count; j++) {
            flags[j] = (byte) (isPrime(first + j) ? 1 : 0);
        }
        return flags;
    }

    private static boolean isPrime(int k) {
        if (k < 2) {
            return false;
        }
        for (int d = 2; (long) d * d <= k; d++) {
            if (k % d == 0) {
                return false;
            }
        }
        return true;
    }
}
