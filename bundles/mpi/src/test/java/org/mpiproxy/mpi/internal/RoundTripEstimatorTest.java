package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RoundTripEstimatorTest {

    private static final long MS = 1_000_000L;

    @Test
    void shouldUseTheInitialTimeoutUntilTheFirstSampleAndDoubleItUpToTheCeiling() {
        RoundTripEstimator e = new RoundTripEstimator(20 * MS, 2 * MS, 100 * MS);
        assertEquals(20 * MS, e.timeoutNanos());
        assertEquals(-1, e.smoothedNanos());
        e.backOff();
        assertEquals(40 * MS, e.timeoutNanos());
        e.backOff();
        e.backOff();
        assertEquals(100 * MS, e.timeoutNanos(), "the ceiling bounds the backoff");
        e.progress();
        assertEquals(20 * MS, e.timeoutNanos(), "progress without a sample ends the backoff");
    }

    @Test
    void shouldFollowTheRoundTripsAboveTheFloor() {
        RoundTripEstimator e = new RoundTripEstimator(20 * MS, 2 * MS, 1000 * MS);
        e.sample(4 * MS);
        // first sample: srtt = 4, rttvar = 2, timeout = 4 + 4 * 2
        assertEquals(4 * MS, e.smoothedNanos());
        assertEquals(12 * MS, e.timeoutNanos());
        e.sample(4 * MS);
        // rttvar = 3/4 * 2 + 1/4 * 0 = 1.5; srtt stays 4: 4 + 6
        assertEquals(10 * MS, e.timeoutNanos());
        for (int i = 0; i < 100; i++) {
            e.sample(50_000);
        }
        assertEquals(2 * MS, e.timeoutNanos(), "a 50 µs round trip is held at the floor");
        e.backOff();
        assertEquals(4 * MS, e.timeoutNanos());
        e.progress();
        assertEquals(2 * MS, e.timeoutNanos());
        e.sample(300 * MS);
        assertTrue(e.timeoutNanos() > 300 * MS, "a long round trip raises the timeout at once");
    }

    @Test
    void shouldRefuseBoundsOutOfOrder() {
        assertThrows(IllegalArgumentException.class, () -> new RoundTripEstimator(MS, 2 * MS, 10 * MS));
        assertThrows(IllegalArgumentException.class, () -> new RoundTripEstimator(20 * MS, 0, 10 * MS));
    }
}
