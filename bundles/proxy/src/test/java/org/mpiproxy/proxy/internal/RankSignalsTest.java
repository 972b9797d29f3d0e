package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

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
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
            assertEquals(128 + 9, p.exitValue());
            assertFalse(new RankSignals().send(p.pid(), "KILL"), "a process that is gone");
        } finally {
            p.destroyForcibly();
        }
    }
}
