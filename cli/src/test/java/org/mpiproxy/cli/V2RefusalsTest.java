package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/** The launcher's matching of refusals and its back-off from busy nodes, on a clock the test gives. */
class V2RefusalsTest {

    private static final InetSocketAddress NODE = new InetSocketAddress("127.0.0.1", 6660);
    private static final long MS = 1_000_000L;

    private final V2Refusals refusals = new V2Refusals();

    /** A refusal as a proxy sends it, in a buffer whose position is its length (as received). */
    private static ByteBuffer refusal(long nonce, int reason) {
        ByteBuffer request = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH).order(V2HeaderDescriptor.BYTE_ORDER);
        new V2HeaderFlyweight().wrap(request, 0).reset(V2HeaderDescriptor.OP_EXEC, 0).keyId(1).nonce(nonce);
        ByteBuffer in = ByteBuffer.allocate(64).order(V2HeaderDescriptor.BYTE_ORDER);
        return in.position(V2RefusalDescriptor.put(request, 0, reason, in, 0));
    }

    @Test
    void shouldHoldANodeBackForABackOffThatDoublesPerBusyRoundUpToFourSeconds() {
        long[] expected = {250, 500, 1000, 2000, 4000, 4000};
        long now = 0;
        for (int i = 0; i < expected.length; i++) {
            refusals.sent(NODE, 100 + i);
            assertTrue(refusals.onRefusal(NODE, refusal(100 + i, V2RefusalDescriptor.REASON_BUSY), now * MS));
            assertTrue(refusals.holdsOff(NODE, (now + expected[i] - 1) * MS), "round " + i);
            assertFalse(refusals.holdsOff(NODE, (now + expected[i]) * MS), "round " + i);
            now += expected[i];
        }
        assertTrue(refusals.busy(NODE));
        refusals.answered(NODE);
        assertFalse(refusals.busy(NODE));
        assertNull(refusals.problem(NODE));
        refusals.sent(NODE, 7);
        refusals.onRefusal(NODE, refusal(7, V2RefusalDescriptor.REASON_BUSY), now * MS);
        assertFalse(refusals.holdsOff(NODE, (now + 250) * MS), "a valid reply started the back-off over");
    }

    @Test
    void shouldCountTheRefusalsOfOneRoundOnce() {
        refusals.sent(NODE, 1);
        refusals.sent(NODE, 2);
        refusals.onRefusal(NODE, refusal(1, V2RefusalDescriptor.REASON_BUSY), 0);
        refusals.onRefusal(NODE, refusal(2, V2RefusalDescriptor.REASON_BUSY), 10 * MS);
        assertFalse(refusals.holdsOff(NODE, 260 * MS), "250 ms from the second, not doubled");
    }

    @Test
    void shouldTakeOnlyRefusalsOfRequestsSentToThatNode() {
        refusals.sent(NODE, 1);
        assertFalse(refusals.onRefusal(NODE, refusal(2, V2RefusalDescriptor.REASON_BUSY), 0), "another nonce");
        assertFalse(refusals.onRefusal(new InetSocketAddress("127.0.0.2", 6660),
                refusal(1, V2RefusalDescriptor.REASON_BUSY), 0), "another node");
        assertFalse(refusals.holdsOff(NODE, 0));
        assertTrue(refusals.onRefusal(NODE, refusal(1, V2RefusalDescriptor.REASON_NOT_VERIFIED), 0));
        assertFalse(refusals.busy(NODE), "not verified is no reason to wait");
        assertFalse(refusals.holdsOff(NODE, 0));
        assertEquals(V2RefusalDescriptor.describe(V2RefusalDescriptor.REASON_NOT_VERIFIED, 1), refusals.problem(NODE));
    }
}
