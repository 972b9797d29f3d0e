package org.mpiproxy.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.MpiErrors;

/** {@value Mpi#DEAD_AFTER_ENV}: the dead-node silence, apart from {@value Mpi#TIMEOUT_ENV}. */
class MpiDeadAfterTest {

    @Test
    void shouldDefaultToFiveSecondsOrTheShorterReplyTimeout() {
        assertEquals(Duration.ofSeconds(5), Mpi.deadAfter(null, Duration.ofSeconds(30)));
        assertEquals(Duration.ofSeconds(5), Mpi.deadAfter("  ", Duration.ofSeconds(7)));
        assertEquals(Duration.ofSeconds(2), Mpi.deadAfter(null, Duration.ofSeconds(2)));
        assertEquals(Duration.ZERO, Mpi.deadAfter(null, Duration.ZERO), "a timeout of 0 waits forever");
    }

    @Test
    void shouldReadMillisecondsWithZeroForNever() {
        assertEquals(Duration.ofMillis(1500), Mpi.deadAfter(" 1500 ", Duration.ofSeconds(30)));
        assertEquals(Duration.ZERO, Mpi.deadAfter("0", Duration.ofSeconds(30)));
    }

    @Test
    void shouldRefuseWhatIsNotANumberOfMilliseconds() {
        for (String bad : new String[] {"-1", "1.5", "10s", "99999999999999999999"}) {
            MpiException e = assertThrows(MpiException.class, () -> Mpi.deadAfter(bad, Duration.ofSeconds(30)), bad);
            assertEquals(MpiErrors.ERR_ARG, e.errorCode());
            assertTrue(e.getMessage().contains(Mpi.DEAD_AFTER_ENV + "='" + bad + "'"), e.getMessage());
        }
    }
}
