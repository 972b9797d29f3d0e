package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProcessGroupTest {

    /** Longest wait for a process event: only catches a hang. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path temp;

    private SpawnedRankProcess process;
    private long grandchild = -1;

    @AfterEach
    void killLeftovers() {
        if (process != null && process.isAlive()) {
            ProcessGroup.signal(process.pid(), ProcessGroup.Signal.KILL);
        }
        if (grandchild > 0) {
            ProcessHandle.of(grandchild).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private SpawnedRankProcess start(String body, Path ready) throws Exception {
        Path script = TestScripts.write(temp, "rank", body);
        process = RankProcessStarter.start("rank", List.of(script.toString()), Map.of("READY", ready.toString(),
                "TERMS", temp.resolve("terms").toString(), "ALIVE", temp.resolve("alive").toString()),
                temp.resolve("logs"), 1, 0);
        return process;
    }

    private static int exitStatus(SpawnedRankProcess p) throws Exception {
        return p.onExit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void shouldPrefixSetsid() {
        assertEquals(List.of("setsid", "prog", "--slave"), ProcessGroup.argv(List.of("prog", "--slave")));
    }

    @Test
    void shouldRefuseToSignalInitOrEveryGroup() {
        assertThrows(IllegalArgumentException.class, () -> ProcessGroup.signal(1, ProcessGroup.Signal.TERM));
        assertThrows(IllegalArgumentException.class, () -> ProcessGroup.signal(0, ProcessGroup.Signal.TERM));
        assertThrows(IllegalArgumentException.class, () -> ProcessGroup.signal(-5, ProcessGroup.Signal.TERM));
    }

    @Test
    void shouldRunTheRankAsLeaderOfItsOwnGroupAndSession() throws Exception {
        Path ready = temp.resolve("ready");
        CompletableFuture<String> readiness = TestScripts.readFifo(ready);
        SpawnedRankProcess p = start("echo $$ > \"$READY\"\nexec sleep 30\n", ready);
        // the script's own view of its pid: setsid exec'd in place, so it is the spawned pid
        assertEquals(Long.toString(p.pid()), TestScripts.await(ready, readiness, TIMEOUT).trim());

        ProcStat stat = ProcStat.read(p.pid()).orElseThrow();
        assertEquals(p.pid(), stat.pgrp(), "process group id");
        assertEquals(p.pid(), stat.session(), "session id");
        assertTrue(p.ownGroup());
        ProcStat self = ProcStat.read(ProcessHandle.current().pid()).orElseThrow();
        assertTrue(self.pgrp() != stat.pgrp(), "not in the proxy's group");
    }

    @Test
    void shouldKillRankAndOrphanedGrandchildThatIgnoreSigtermOnceTheGraceHasPassed() throws Exception {
        Path ready = temp.resolve("ready");
        CompletableFuture<String> readiness = TestScripts.readFifo(ready);
        Path terms = temp.resolve("terms");
        CompletableFuture<String> termed = TestScripts.readFifo(terms);
        // the rank says when SIGTERM comes (once) and goes on, and answers SIGUSR1; the subshell
        // starts the grandchild, which ignores SIGTERM, and ends at once: the grandchild is
        // re-parented, no longer a descendant of the rank, but still in its process group
        SpawnedRankProcess p = start("trap 'trap \"\" TERM; echo TERM > \"$TERMS\"' TERM\n"
                + "trap 'echo USR1 > \"$ALIVE\"' USR1\n"
                + "( trap '' TERM; sleep 1000 & echo $! > \"$READY\" )\n"
                + "while :; do sleep 1; done\n", ready);
        grandchild = Long.parseLong(TestScripts.await(ready, readiness, TIMEOUT).trim());
        long grandchildStart = ProcStat.read(grandchild).orElseThrow().startTime();
        // the subshell wrote the pid just before it ends: wait until the grandchild is re-parented
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (ProcessHandle.of(p.pid()).orElseThrow().descendants().anyMatch(h -> h.pid() == grandchild)) {
            assertTrue(System.nanoTime() < deadline, "grandchild is orphaned");
            Thread.sleep(10);
        }

        // the test is the timer: the grace passes when it runs the task
        List<Runnable> kills = new ArrayList<>();
        List<Duration> delays = new ArrayList<>();
        p.stop(Duration.ofSeconds(2), (kill, delay) -> {
            kills.add(kill);
            delays.add(delay);
        });
        assertEquals(List.of(Duration.ofSeconds(2)), delays, "SIGKILL is due when the grace has passed");
        assertEquals("TERM", TestScripts.await(terms, termed, TIMEOUT).trim(), "SIGTERM first");
        // an answer after the SIGTERM: no SIGKILL had reached the group (it ends a process at once)
        Path alive = temp.resolve("alive");
        CompletableFuture<String> answer = TestScripts.readFifo(alive);
        Process usr1 = new ProcessBuilder("kill", "-USR1", Long.toString(p.pid())).inheritIO().start();
        assertTrue(usr1.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS) && usr1.exitValue() == 0,
                "the rank is there for SIGUSR1");
        assertEquals("USR1", TestScripts.await(alive, answer, TIMEOUT).trim(),
                "the rank goes on after SIGTERM while the grace lasts");
        assertTrue(ProcStat.isRunning(grandchild, grandchildStart), "so does the grandchild, which ignores it");

        kills.get(0).run();
        assertEquals(128 + 9, exitStatus(p), "ended by SIGKILL");
        assertFalse(ProcStat.isRunning(grandchild, grandchildStart), "grandchild killed with the group");
        assertFalse(ProcessGroup.hasMembers(p.pid()), "group is empty");
    }

    @Test
    void shouldKillWhatIsLeftOfTheGroupWhenTheRankExitsByItself() throws Exception {
        Path ready = temp.resolve("ready");
        CompletableFuture<String> readiness = TestScripts.readFifo(ready);
        SpawnedRankProcess p = start("( trap '' TERM; sleep 1000 & echo $! > \"$READY\" )\nsleep 1\nexit 3\n", ready);
        grandchild = Long.parseLong(TestScripts.await(ready, readiness, TIMEOUT).trim());
        long grandchildStart = ProcStat.read(grandchild).orElseThrow().startTime();

        assertEquals(3, exitStatus(p));
        assertFalse(ProcStat.isRunning(grandchild, grandchildStart), "nothing of the rank outlives it");
    }

    @ParameterizedTest
    @CsvSource({
        "'exit 0', 0",
        "'exit 42', 42",
        "'exit 255', 255",
        "'kill -KILL $$', 137",
        "'kill -TERM $$', 143",
        "'kill -SEGV $$', 139",
        "'kill -INT $$', 130",
    })
    void shouldReportExitCodesAndSignalsExactly(String line, int status) throws Exception {
        SpawnedRankProcess p = start(line + "\n", temp.resolve("unused"));
        assertEquals(status, exitStatus(p));
    }

    @Test
    void shouldParseStatLinesWhoseCommandHasSpacesAndParentheses() throws Exception {
        String line = "4242 (a b) c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100";
        ProcStat stat = ProcStat.parse(line);
        assertEquals(4242, stat.pid());
        assertEquals('S', stat.state());
        assertEquals(1, stat.ppid());
        assertEquals(4242, stat.pgrp());
        assertEquals(4242, stat.session());
        assertEquals(987654, stat.startTime());
        assertThrows(java.io.IOException.class, () -> ProcStat.parse("garbage"));
    }
}
