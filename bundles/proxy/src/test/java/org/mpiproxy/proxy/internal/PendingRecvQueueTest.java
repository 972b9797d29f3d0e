package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PendingRecvQueueTest {

    @Test
    void shouldKeepFifoOrderWhileGrowingAcrossWrap() {
        PendingRecvQueue q = new PendingRecvQueue(64);
        int added = 0;
        int taken = 0;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 3; i++) {
                assertTrue(q.offer(added % 8, 1000L + added));
                added++;
            }
            assertEquals(taken % 8, q.headDatatype());
            assertEquals(1000L + taken, q.headRemaining());
            q.pop();
            taken++;
        }
        assertEquals(40, q.size());
    }

    @Test
    void shouldConsumeHeadPartlyThenPopIt() {
        PendingRecvQueue q = new PendingRecvQueue(4);
        q.offer(3, 0xffff_ffffL);
        assertEquals(0xffff_ffffL, q.headRemaining());
        q.consume(359);
        assertEquals(0xffff_ffffL - 359, q.headRemaining());
        assertEquals(3, q.headDatatype());
        q.consume(0xffff_ffffL - 359);
        assertTrue(q.isEmpty());
    }

    @Test
    void shouldRefuseBeyondMaximum() {
        PendingRecvQueue q = new PendingRecvQueue(2);
        assertTrue(q.offer(0, 1));
        assertTrue(q.offer(0, 1));
        assertFalse(q.offer(0, 1));
    }
}
