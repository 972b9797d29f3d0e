package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.RankProcessStarter;

class RankLedgerTest {

    private static final long JOB = 0x1234_5678_9abc_def0L;

    @TempDir
    Path temp;

    private final FakeChannelManager channels = new FakeChannelManager();
    private RankProcess first;
    private RankProcess second;

    @AfterEach
    void tearDown() {
        for (RankProcess p : new RankProcess[] {first, second}) {
            if (p != null) {
                p.stop(Duration.ZERO);
            }
        }
    }

    private RankProcess start(String name, String body) throws Exception {
        Path file = temp.resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
        return RankProcessStarter.start(name, List.of(file.toString()), Map.of(), temp.resolve("logs"), 1, 0);
    }

    @Test
    void shouldRecordStartedRanksWithStartTimeAndForgetEndedJobs() throws Exception {
        RankLedger ledger = new RankLedger(temp.resolve("state"));
        first = start("sleeper", "exec sleep 60\n");
        ledger.rankStarted(JOB, 3, first.pid());

        String line = Files.readString(ledger.file(JOB)).trim();
        assertEquals("3 " + first.pid() + " " + ProcStat.read(first.pid()).orElseThrow().startTime(), line);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(temp.resolve("state"))));

        ledger.jobEnded(JOB);
        assertFalse(Files.exists(ledger.file(JOB)));
    }

    @Test
    void shouldKillRecordedGroupsWhosePidAndStartTimeMatchAndReleaseTheirJobs() throws Exception {
        Path state = temp.resolve("state");
        RankLedger previousRun = new RankLedger(state);
        first = start("orphan", "trap '' TERM\n( sleep 1000 & echo $! > \"$0.child\" )\nexec sleep 60\n");
        second = start("bystander", "exec sleep 60\n");
        previousRun.rankStarted(JOB, 1, first.pid());
        long secondStart = ProcStat.read(second.pid()).orElseThrow().startTime();
        // the same pid, but another start time: a different process that reuses the pid
        Files.writeString(previousRun.file(JOB + 1), "1 " + second.pid() + " " + (secondStart + 1) + "\n");
        Path childFile = temp.resolve("orphan.child");
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!(Files.exists(childFile) && Files.readString(childFile).endsWith("\n"))) {
            assertTrue(System.nanoTime() < deadline, "grandchild started");
            Thread.sleep(10);
        }
        long child = Long.parseLong(Files.readString(childFile).trim());
        long childStart = ProcStat.read(child).orElseThrow().startTime();

        RankLedger.Sweep sweep = new RankLedger(state).sweep(channels, java.util.Set.of());

        assertEquals(new RankLedger.Sweep(2, 1), sweep);
        assertFalse(ProcStat.isRunning(first.pid(), ProcStat.read(first.pid()).map(ProcStat::startTime).orElse(-1L)),
                "recorded rank killed");
        assertFalse(ProcStat.isRunning(child, childStart), "its grandchild too");
        assertTrue(second.isAlive(), "a pid whose start time differs is left alone");
        assertTrue(channels.released.contains(JOB) && channels.released.contains(JOB + 1), "job directories removed");
        assertFalse(Files.exists(previousRun.file(JOB)));
        assertFalse(Files.exists(previousRun.file(JOB + 1)));
        assertEquals(new RankLedger.Sweep(0, 0), new RankLedger(state).sweep(channels, java.util.Set.of()), "nothing left to sweep");
    }
}
