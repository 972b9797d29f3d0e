package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.channel.shm.MappedRankChannel;
import org.mpiproxy.mpi.internal.ProxyLifeline;
import org.mpiproxy.mpi.internal.ProxyLifelineAccess;

/** Done item 5 of rank supervision: a rank whose proxy is killed exits by itself. */
class ProxyLifelineTest {

    @TempDir
    Path temp;

    private Process proxy;
    private Process rank;

    @AfterEach
    void tearDown() {
        for (Process p : new Process[] {proxy, rank}) {
            if (p != null) {
                p.destroyForcibly();
            }
        }
    }

    private static long startTime(long pid) throws Exception {
        String line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return Long.parseLong(line.substring(line.lastIndexOf(')') + 2).split(" ")[19]);
    }

    @Test
    void shouldEndARankBlockedOnItsRingWithinBoundedTimeWhenTheProxyIsKilled() throws Exception {
        // a stand-in proxy: any process; the rank only watches its pid and start time
        proxy = new ProcessBuilder("sleep", "1000").start();
        Path channel = temp.resolve("rank-1.chan");
        MappedRankChannel.create(channel, 4096, 0x77L, 1).close();
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), BlockedRank.class.getName(),
                "--slave", channel.toString(), "1", "2")
                .redirectError(temp.resolve("rank.err").toFile());
        builder.environment().put(ProxyLifeline.PID_ENV, Long.toString(proxy.pid()));
        builder.environment().put(ProxyLifeline.START_ENV, Long.toString(startTime(proxy.pid())));
        rank = builder.start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(rank.getInputStream(),
                StandardCharsets.UTF_8))) {
            assertEquals("ready", out.readLine(), "rank joined: " + Files.readString(temp.resolve("rank.err")));
        }
        // while the proxy lives the rank keeps waiting (several check intervals)
        assertFalse(rank.waitFor(3 * ProxyLifeline.CHECK_INTERVAL_NANOS, TimeUnit.NANOSECONDS),
                "the rank waits while its proxy runs");

        proxy.destroyForcibly();
        assertTrue(proxy.waitFor(1, TimeUnit.MINUTES));
        long killed = System.nanoTime();

        // a rank without the lifeline waits forever: the minute only stops that
        assertTrue(rank.waitFor(1, TimeUnit.MINUTES), "the rank ends on its own");
        Duration took = Duration.ofNanos(System.nanoTime() - killed);
        assertEquals(ProxyLifeline.EXIT_PROXY_GONE, rank.exitValue());
        // its lifeline looks every 0.5 s: twenty looks leave room for a busy machine
        assertTrue(took.toNanos() < 20 * ProxyLifeline.CHECK_INTERVAL_NANOS, "within a bounded time, took " + took);
        String stderr = Files.readString(temp.resolve("rank.err"));
        assertTrue(stderr.contains("rank 1: the proxy (pid " + proxy.pid() + ") is gone"), stderr);
    }

    @Test
    void shouldNotWatchWithoutAProxyInTheEnvironment() {
        assertEquals(null, ProxyLifeline.fromEnvironment(name -> null, 1));
        assertEquals(null, ProxyLifeline.fromEnvironment(name -> "not a number", 1));
    }

    @Test
    void shouldTellAReusedPidFromTheProxy() throws Exception {
        long self = ProcessHandle.current().pid();
        long start = startTime(self);
        assertTrue(check(List.of(Long.toString(self), Long.toString(start))), "this very process runs");
        assertFalse(check(List.of(Long.toString(self), Long.toString(start + 1))), "same pid, other process");
    }

    @Test
    void shouldWaitTheKeepersWindowForAProxyThatTakesTheJobOverAndFollowIt() throws Exception {
        Path keeper = temp.resolve("keeper-1");
        Files.createDirectories(keeper);
        Files.writeString(keeper.resolve("policy"), "survive.seconds=3\nstop.grace.seconds=1\n");
        Process ended = new ProcessBuilder("true").start();
        assertTrue(ended.waitFor(1, TimeUnit.MINUTES));
        int[] exit = {-1};
        // every check is 0.5 s after the last: 6 checks make the window
        ProxyLifeline lifeline = ProxyLifelineAccess.create(ended.pid(), 1, keeper, status -> exit[0] = status);
        for (int i = 0; i < 5; i++) {
            lifeline.check();
        }
        assertEquals(-1, exit[0], "the rank waits within the window");

        proxy = new ProcessBuilder("sleep", "1000").start();
        Files.writeString(keeper.resolve("owner"), proxy.pid() + " " + startTime(proxy.pid()) + "\n");
        for (int i = 0; i < 20; i++) {
            lifeline.check();
        }
        assertEquals(-1, exit[0], "a proxy that took the job over is watched from then on");

        proxy.destroyForcibly();
        assertTrue(proxy.waitFor(1, TimeUnit.MINUTES));
        for (int i = 0; i < 6; i++) {
            lifeline.check();
        }
        assertEquals(-1, exit[0], "the window starts again when the new proxy is gone");
        lifeline.check();
        assertEquals(ProxyLifeline.EXIT_PROXY_GONE, exit[0], "no proxy within the window: the rank ends");
    }

    @Test
    void shouldEndAtOnceWhenTheKeepersWindowIsZero() throws Exception {
        Path keeper = temp.resolve("keeper-2");
        Files.createDirectories(keeper);
        Files.writeString(keeper.resolve("policy"), "survive.seconds=0\n");
        Process ended = new ProcessBuilder("true").start();
        assertTrue(ended.waitFor(1, TimeUnit.MINUTES));
        int[] exit = {-1};
        ProxyLifelineAccess.create(ended.pid(), 1, keeper, status -> exit[0] = status).check();
        assertEquals(ProxyLifeline.EXIT_PROXY_GONE, exit[0]);
    }

    /** @return whether a lifeline for (pid, start) lets the rank live */
    private static boolean check(List<String> pidAndStart) {
        int[] exit = {-1};
        ProxyLifeline lifeline = ProxyLifelineAccess.create(Long.parseLong(pidAndStart.get(0)),
                Long.parseLong(pidAndStart.get(1)), status -> exit[0] = status);
        lifeline.check();
        return exit[0] < 0;
    }
}
