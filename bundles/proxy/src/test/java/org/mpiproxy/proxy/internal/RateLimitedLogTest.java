package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RateLimitedLogTest {

    @Test
    void shouldPermitOneLinePerReasonAndCountTheRest() {
        RateLimitedLog<ProxyCounter> log = new RateLimitedLog<>(ProxyCounter.class, RateLimitedLog.DEFAULT_INTERVAL_NANOS);
        assertTrue(log.permit(ProxyCounter.INVALID_SHORT));
        assertEquals(0, log.takeSuppressed(ProxyCounter.INVALID_SHORT));
        assertFalse(log.permit(ProxyCounter.INVALID_SHORT));
        assertFalse(log.permit(ProxyCounter.INVALID_SHORT));
        assertTrue(log.permit(ProxyCounter.INVALID_OP), "other reasons are limited separately");
        assertEquals(2, log.takeSuppressed(ProxyCounter.INVALID_SHORT));
    }

    @Test
    void shouldPermitAgainAfterInterval() {
        RateLimitedLog<ProxyCounter> log = new RateLimitedLog<>(ProxyCounter.class, 0);
        assertTrue(log.permit(ProxyCounter.INVALID_RANK));
        assertTrue(log.permit(ProxyCounter.INVALID_RANK));
    }
}
