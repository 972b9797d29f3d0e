package org.mpiproxy.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * How the host library takes a node's refusals (docs/protocol-v2.md 3.5), on times the test gives:
 * busy holds the node's requests back for a growing back-off and keeps it alive for at most
 * 61 s; any other reason fails the calls at once.
 */
class V2NodeBusyTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long SILENCE = TimeUnit.SECONDS.toNanos(5);

    private final ByteArrayOutputStream text = new ByteArrayOutputStream();
    private final PrintStream diagnostics = new PrintStream(text, true, StandardCharsets.UTF_8);
    private final V2Node node = new V2Node(new HostfileEntry(1, new byte[] {127, 0, 0, 1}, 6660, 0),
            new InetSocketAddress("127.0.0.1", 6660),
            new V2Authenticator(ClusterKeys.of(Map.of(1, new byte[32]), 1), NodeIds.of("127.0.0.1"), 30_000, 1));

    private ByteBuffer refusal(long nonce, int reason) {
        ByteBuffer request = ByteBuffer.allocate(V2HeaderDescriptor.HEADER_LENGTH).order(V2HeaderDescriptor.BYTE_ORDER);
        new V2HeaderFlyweight().wrap(request, 0).reset(V2HeaderDescriptor.OP_EXEC, 0).keyId(1).nonce(nonce);
        ByteBuffer in = ByteBuffer.allocate(V2RefusalDescriptor.LENGTH).order(V2HeaderDescriptor.BYTE_ORDER);
        V2RefusalDescriptor.put(request, 0, reason, in, 0);
        return in;
    }

    @Test
    void shouldBackOffFromABusyNodeDoublingPerRoundAndSayItOnce() {
        long[] expected = {250, 500, 1000, 2000, 4000, 4000};
        long now = 0;
        for (int i = 0; i < expected.length; i++) {
            node.sent(10 + i);
            assertTrue(node.refused(refusal(10 + i, V2RefusalDescriptor.REASON_BUSY), now * MS, diagnostics));
            assertTrue(node.holdsOff((now + expected[i] - 1) * MS), "round " + i);
            assertFalse(node.holdsOff((now + expected[i]) * MS), "round " + i);
            now += expected[i];
        }
        assertEquals("mpi: node 127.0.0.1:6660: " + V2RefusalDescriptor.describe(V2RefusalDescriptor.REASON_BUSY, 1)
                + "; retrying with back-off\n", text.toString(StandardCharsets.UTF_8), "one line per busy spell");
        node.heard(now * MS);
        assertFalse(node.holdsOff(now * MS), "a valid reply ends the spell");
    }

    @Test
    void shouldKeepABusyNodeAliveBeyondTheSilenceButGiveItUpAfterSixtyOneSeconds() {
        node.silentFrom = 0;
        node.lastHeard = 0;
        node.sent(1);
        node.refused(refusal(1, V2RefusalDescriptor.REASON_BUSY), 0, diagnostics);
        long t = 0;
        while (t + 4000 * MS < V2Node.BUSY_GIVE_UP_NANOS) {
            t += 4000 * MS;
            node.sent(t);
            node.refused(refusal(t, V2RefusalDescriptor.REASON_BUSY), t, diagnostics);
            assertNull(node.failure(t + MS, false, SILENCE, 0), "busy at " + t / MS + " ms is alive");
        }
        String failure = node.failure(V2Node.BUSY_GIVE_UP_NANOS, false, SILENCE, 0);
        assertTrue(failure != null && failure.startsWith("the proxy at 127.0.0.1:6660 refused our requests as busy"
                + " for 61 s: the proxy is busy"), failure);
    }

    @Test
    void shouldFailAtOnceOnAnyOtherRefusalAndIgnoreOnesOfRequestsNotSent() {
        assertFalse(node.refused(refusal(5, V2RefusalDescriptor.REASON_STALE), 0, diagnostics), "not sent: ignored");
        assertNull(node.failure(0, true, SILENCE, 0));
        node.sent(5);
        assertTrue(node.refused(refusal(5, V2RefusalDescriptor.REASON_STALE), 0, diagnostics));
        assertFalse(node.holdsOff(0));
        assertEquals(V2RefusalDescriptor.describe(V2RefusalDescriptor.REASON_STALE, 1), node.failure(0, true, SILENCE, 0));
    }
}
