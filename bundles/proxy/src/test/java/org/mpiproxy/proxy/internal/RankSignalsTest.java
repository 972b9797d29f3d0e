package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.ProcessGroup;

import org.junit.jupiter.api.Test;

class RankSignalsTest {

    @Test
    void shouldAcceptSignalNamesWithOrWithoutSigInAnyCase() {
        assertEquals("TERM", RankSignals.normalize("term"));
        assertEquals("KILL", RankSignals.normalize("SIGKILL"));
        assertEquals("USR1", RankSignals.normalize(" sigusr1 "));
    }

    @Test
    void shouldRejectOtherSignalsAndNumbers() {
        assertThrows(IllegalArgumentException.class, () -> RankSignals.normalize("9"));
        assertThrows(IllegalArgumentException.class, () -> RankSignals.normalize("SEGV"));
        assertThrows(IllegalArgumentException.class, () -> RankSignals.normalize(null));
    }

    @Test
    void shouldEndAProcessWithTheSignalSent() throws Exception {
        Process p = new ProcessBuilder("sleep", "60").start();
        try {
            assertTrue(new RankSignals().send(p.pid(), "KILL"));
            assertTrue(p.waitFor(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
            assertEquals(128 + 9, p.exitValue());
            assertFalse(new RankSignals().send(p.pid(), "KILL"), "a process that is gone");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void shouldSignalTheWholeProcessGroupOfARankThatHasAChild() throws Exception {
        // a rank as the launchers start it (setsid: it leads its own group) with a child in that group
        Process rank = new ProcessBuilder(ProcessGroup.argv(java.util.List.of("sh", "-c",
                "sleep 1000 & echo $!; exec sleep 1000"))).start();
        long child = -1;
        try {
            child = Long.parseLong(new BufferedReader(new InputStreamReader(rank.getInputStream(),
                    StandardCharsets.US_ASCII)).readLine().trim());
            long childStart = ProcStat.read(child).orElseThrow().startTime();
            assertTrue(RankSignals.leadsItsGroup(rank.pid()));
            assertEquals(rank.pid(), ProcStat.read(child).orElseThrow().pgrp(), "the child is in the rank's group");

            assertTrue(new RankSignals().send(rank.pid(), "TERM"));

            assertTrue(rank.waitFor(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
            assertEquals(128 + 15, rank.exitValue());
            // the child is not ours to wait for: watch its state, bounded (it is signalled already)
            long pid = child;
            Await.until(() -> {
                try {
                    return !ProcStat.isRunning(pid, childStart);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, "the rank's child got the signal too");
        } finally {
            rank.destroyForcibly();
            if (child > 0) {
                ProcessHandle.of(child).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void shouldSignalOnlyTheProcessWhenItDoesNotLeadAGroup() throws Exception {
        Process p = new ProcessBuilder("sleep", "60").start();
        try {
            assertFalse(RankSignals.leadsItsGroup(p.pid()), "in the test's own group");
            assertTrue(new RankSignals().send(p.pid(), "TERM"));
            assertTrue(p.waitFor(Await.CEILING.toSeconds(), TimeUnit.SECONDS));
            assertTrue(ProcessHandle.current().isAlive(), "the test's group was not signalled");
        } finally {
            p.destroyForcibly();
        }
    }
}
