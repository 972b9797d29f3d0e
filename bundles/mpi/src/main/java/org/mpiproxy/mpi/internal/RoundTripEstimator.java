package org.mpiproxy.mpi.internal;

/**
 * The retransmit timeout of one stream from the round trips it measures, the way TCP computes
 * it (RFC 6298): a smoothed round trip {@code srtt} and its variation {@code rttvar}, the timeout
 * {@code srtt + 4 * rttvar} kept between a floor and a ceiling, doubled by each expiry until the
 * next sample. Samples come only from fragments sent once (a resent one's acknowledgement could
 * answer either copy). Not thread-safe (the transport's lock).
 */
final class RoundTripEstimator {

    private final long initialNanos;
    private final long minNanos;
    private final long maxNanos;
    private long srtt = -1;
    private long rttvar;
    private long rto;

    /**
     * @param initialNanos the timeout before the first sample
     * @param minNanos     the floor (scheduling delays on a busy node must not look like losses)
     * @param maxNanos     the ceiling, also of the backoff
     */
    RoundTripEstimator(long initialNanos, long minNanos, long maxNanos) {
        if (minNanos <= 0 || minNanos > initialNanos || initialNanos > maxNanos) {
            throw new IllegalArgumentException("need 0 < min <= initial <= max, got " + minNanos + ", "
                    + initialNanos + ", " + maxNanos);
        }
        this.initialNanos = initialNanos;
        this.minNanos = minNanos;
        this.maxNanos = maxNanos;
        this.rto = initialNanos;
    }

    /** A round trip measured on a fragment sent once; resets the backoff. */
    void sample(long roundTripNanos) {
        long r = Math.max(0, roundTripNanos);
        if (srtt < 0) {
            srtt = r;
            rttvar = r / 2;
        } else {
            rttvar = rttvar - (rttvar >> 2) + (Math.abs(srtt - r) >> 2);
            srtt = srtt - (srtt >> 3) + (r >> 3);
        }
        rto = computed();
    }

    /** Progress without a sample (a fragment that was resent was acknowledged): the backoff ends. */
    void progress() {
        rto = srtt < 0 ? initialNanos : computed();
    }

    /** The timeout expired: the next one is twice as long, up to the ceiling. */
    void backOff() {
        rto = Math.min(rto * 2, maxNanos);
    }

    /** @return the current retransmit timeout in nanoseconds */
    long timeoutNanos() {
        return rto;
    }

    /** @return the smoothed round trip in nanoseconds, -1 before the first sample */
    long smoothedNanos() {
        return srtt;
    }

    private long computed() {
        return Math.min(maxNanos, Math.max(minNanos, srtt + 4 * rttvar));
    }
}
