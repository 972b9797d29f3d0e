package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;

class SpawnedRankProcessTest {

    /** Longest wait for a process event: only catches a hang. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path temp;

    private SpawnedRankProcess process;

    @AfterEach
    void killLeftovers() {
        if (process != null && process.isAlive()) {
            process.stop(Duration.ZERO);
        }
    }

    private SpawnedRankProcess start(Path script, Map<String, String> env) throws LaunchException {
        process = RankProcessStarter.start(script.getFileName().toString(), List.of(script.toString()), env,
                temp.resolve("logs"), 1, 0);
        return process;
    }

    private static int exitStatus(SpawnedRankProcess p) throws Exception {
        return p.onExit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void shouldReportOneHundredThirtySevenWhenKilledBySigkill() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of());

        Process kill = new ProcessBuilder("kill", "-KILL", Long.toString(p.pid())).inheritIO().start();
        assertTrue(kill.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(0, kill.exitValue());

        assertEquals(137, exitStatus(p));
        assertFalse(p.isAlive());
    }

    @Test
    void shouldEndWithSigtermWhenProcessHonoursIt() throws Exception {
        Path ready = temp.resolve("ready");
        CompletableFuture<String> readiness = TestScripts.readFifo(ready);
        SpawnedRankProcess p = start(TestScripts.write(temp, "polite",
                "echo up > \"$READY\"\nexec sleep 30\n"), Map.of("READY", ready.toString()));
        TestScripts.await(ready, readiness, TIMEOUT);

        p.stop(Duration.ofMinutes(5));

        assertEquals(143, exitStatus(p));
    }

    @Test
    void shouldKillProcessIgnoringSigtermAfterGraceTogetherWithItsChildren() throws Exception {
        Path ready = temp.resolve("ready");
        CompletableFuture<String> readiness = TestScripts.readFifo(ready);
        SpawnedRankProcess p = start(TestScripts.write(temp, "stubborn",
                "trap '' TERM\nsleep 30 &\necho up > \"$READY\"\nwhile :; do sleep 1; done\n"),
                Map.of("READY", ready.toString()));
        TestScripts.await(ready, readiness, TIMEOUT);
        List<ProcessHandle> children = ProcessHandle.of(p.pid()).orElseThrow().descendants().toList();
        assertFalse(children.isEmpty());

        long start = System.nanoTime();
        p.stop(Duration.ofMillis(300));
        int status = exitStatus(p);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertEquals(137, status, "SIGTERM must have been ignored, SIGKILL must end it");
        assertTrue(elapsedMillis >= 300, "killed after " + elapsedMillis + " ms, before the grace");
        CompletableFuture.allOf(children.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new))
                .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void shouldGiveIndependentExitFutures() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "quick", "exit 7\n"), Map.of());

        p.onExit().cancel(true);

        assertEquals(7, exitStatus(p));
        assertEquals(0, p.coreId());
        assertTrue(p.pid() > 0);
    }

    @Test
    void shouldAppendOutputAcrossRunsOfTheSameRank() throws Exception {
        Path script = TestScripts.write(temp, "talker", "echo out-$X\necho err-$X >&2\n");
        assertEquals(0, exitStatus(start(script, Map.of("X", "1"))));
        assertEquals(0, exitStatus(start(script, Map.of("X", "2"))));

        assertEquals("out-1\nout-2\n", Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1)));
        assertEquals("err-1\nerr-2\n", Files.readString(RankProcessStarter.errorFile(temp.resolve("logs"), 1)));
    }

    @Test
    void shouldFailWithIoErrorWhenProcessCannotBeSpawned() {
        LaunchException e = assertThrows(LaunchException.class, () -> RankProcessStarter.start("ghost",
                List.of(temp.resolve("ghost").toString()), Map.of(), temp.resolve("logs"), 1, 0));

        assertTrue(e.getMessage().startsWith("cannot start program 'ghost'"), e.getMessage());
    }

    @Test
    void shouldFailWithIoErrorWhenEnvironmentHoldsNulCharacter() {
        LaunchException e = assertThrows(LaunchException.class, () -> RankProcessStarter.start("p",
                List.of("true"), Map.of("BAD", "a\u0000b"), temp.resolve("logs"), 1, 0));

    }

    @Test
    void shouldFailWhenLogDirectoryCannotBeCreated() throws Exception {
        Path blocker = Files.writeString(temp.resolve("file"), "x");

        LaunchException e = assertThrows(LaunchException.class, () -> RankProcessStarter.start("p",
                List.of("true"), Map.of(), blocker.resolve("logs"), 1, 0));
        assertTrue(e.getMessage().startsWith("cannot create log directory"), e.getMessage());
    }
}
