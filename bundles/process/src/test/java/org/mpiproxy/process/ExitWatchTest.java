package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The exits of processes spawned natively are learnt through their pidfds on one thread, with the
 * codes and signals Java reports; without pidfds, on a thread per process as before.
 */
class ExitWatchTest {

    /** Longest wait for an exit: only catches a hang. */
    private static final long CEILING_SECONDS = 120;
    private static final int PROCESSES = 64;
    private static final List<String> ENV = List.of("PATH=/usr/bin:/bin");

    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void linuxWithNativeSpawn() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        assertNull(NativeSpawn.instance().unavailableReason(), "native spawn is not available");
    }

    @AfterEach
    void killLeftovers() {
        started.forEach(Process::destroyForcibly);
    }

    private static long threadsNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).count();
    }

    /** Codes 0..63 but every fourth process ends by a signal: SIGTERM, SIGKILL, SIGSEGV or SIGUSR1 in turn. */
    private static String command(int i) {
        if (i % 4 != 3) {
            return "exit " + i;
        }
        return "kill -" + List.of("TERM", "KILL", "SEGV", "USR1").get(i / 4 % 4) + " $$";
    }

    private static int expected(int i) {
        return i % 4 != 3 ? i : 128 + List.of(15, 9, 11, 10).get(i / 4 % 4);
    }

    private Process spawn(NativeSpawn spawn, String command) throws IOException {
        Process p = spawn.spawn(List.of("/bin/sh", "-c", command), ENV, -1);
        started.add(p);
        p.getInputStream().close();
        p.getErrorStream().close();
        return p;
    }

    @Test
    void shouldReportTheCodesAndSignalsOfSixtyFourProcessesOnOneThread() throws Exception {
        List<String> warnings = new ArrayList<>();
        Epoll epoll = Epoll.load();
        ExitWatch watch = new ExitWatch(epoll, "test-exit-watch", epoll::pidfdOpen, warnings::add);
        NativeSpawn spawn = NativeSpawn.instance().withExits(watch);
        long reapersBefore = threadsNamed("mpiproxy-rank-reaper");
        int threadsBefore = Thread.activeCount();
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            processes.add(spawn(spawn, command(i)));
        }
        int grown = Thread.activeCount() - threadsBefore;
        for (int i = 0; i < PROCESSES; i++) {
            Process p = processes.get(i);
            assertTrue(p.waitFor(CEILING_SECONDS, TimeUnit.SECONDS), "process " + i + " ends");
            assertEquals(expected(i), p.exitValue(), "process " + i + ": " + command(i));
            assertFalse(p.isAlive());
        }
        assertEquals(List.of(), warnings);
        assertEquals(reapersBefore, threadsNamed("mpiproxy-rank-reaper"), "no waiting thread per process");
        assertTrue(threadsNamed("test-exit-watch") <= 1, "one watching thread");
        assertTrue(grown <= 1, PROCESSES + " processes grew the JVM by " + grown + " threads");
    }

    @Test
    void shouldWaitOnAThreadPerProcessWithOneWarningWherePidfdsAreMissing() throws Exception {
        List<String> warnings = new ArrayList<>();
        ExitWatch watch = new ExitWatch(Epoll.load(), "test-exit-watch-without-pidfd", pid -> -Epoll.ENOSYS,
                warnings::add);
        assertFalse(watch.watch(1, new CompletableFuture<>()), "nothing to watch with");
        NativeSpawn spawn = NativeSpawn.instance().withExits(watch);

        Process code = spawn(spawn, "exit 3");
        Process signal = spawn(spawn, "kill -TERM $$");

        assertTrue(code.waitFor(CEILING_SECONDS, TimeUnit.SECONDS) && signal.waitFor(CEILING_SECONDS, TimeUnit.SECONDS),
                "both exits are learnt without the watch");
        assertEquals(3, code.exitValue());
        assertEquals(128 + 15, signal.exitValue());
        assertEquals(List.of("rank exits are waited for on a thread per rank: pidfd_open needs Linux 5.3"), warnings,
                "one warning");
        assertEquals(0, threadsNamed("test-exit-watch-without-pidfd"), "the watch never ran");
    }

    @Test
    void shouldSayThereIsNoWatchWhereEpollIsMissing() {
        List<String> warnings = new ArrayList<>();
        assertNull(ExitWatch.open(() -> {
            throw new IOException("epoll needs Linux");
        }, warnings::add));
        assertEquals(List.of("rank exits are waited for on a thread per rank: epoll needs Linux"), warnings);
    }
}
