package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.NONCES;
import static org.mpiproxy.mpi.internal.V2HostTransport.PROBE_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.UNREACHABLE_NANOS;

import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.V2Authenticator;

/**
 * One proxy of a v2 job (address and port; its ranks share it): when it was last heard, the
 * nonces sent to it lately, its probe socket and what is known to be wrong with it.
 * Not thread-safe (the transport's lock).
 */
final class V2Node {
    final HostfileEntry entry;
    final InetSocketAddress address;
    final V2Authenticator auth;
    final long[] nonces = new long[NONCES];
    int nonceAt;
    long lastHeard;
    /** When its silence began to count: the start of a wait after a gap without one. */
    long silentFrom;
    long lastWatched;
    DatagramChannel probe;
    long probeSentAt;
    /** ICMP port unreachable since {@link #unreachableSince}, with no valid reply after it. */
    boolean unreachable;
    long unreachableSince;
    /** Why the node refused a request of ours (a matched refusal), or null. */
    String refusal;
    /** Given up while TERMINATE replies were awaited. */
    boolean dead;

    V2Node(HostfileEntry entry, InetSocketAddress address, V2Authenticator auth) {
        this.entry = entry;
        this.address = address;
        this.auth = auth;
    }

    void sent(long nonce) {
        nonces[nonceAt] = nonce;
        nonceAt = (nonceAt + 1) % NONCES;
    }

    boolean wasSent(long nonce) {
        for (long n : nonces) {
            if (n == nonce && n != 0) {
                return true;
            }
        }
        return false;
    }

    void heard(long now) {
        lastHeard = now;
        unreachable = false;
        refusal = null;
    }

    void unreachable(long now) {
        if (!unreachable) {
            unreachable = true;
            unreachableSince = now;
        }
    }

    /**
     * @param launching   whether EXECs are awaited: an unreachable port fails the launch after
     *                    {@link V2HostTransport#PROBE_NANOS} already
     * @param silenceNanos the dead-node silence; {@link Long#MAX_VALUE} = never
     * @param restartWaitNanos how long a node whose proxy stopped (port closed, or silent) may take
     *                     to come back once the job runs ({@code MPIPROXY_RESTART_WAIT_MS}); 0 = not at all
     * @return why the node fails the calls that wait for it, or null while it may still answer
     */
    String failure(long now, boolean launching, long silenceNanos, long restartWaitNanos) {
        if (refusal != null) {
            return refusal;
        }
        // a job that waits for its nodes' restarts waits as long for a closed port and for silence
        long unreachableLimit = launching ? PROBE_NANOS : Math.max(UNREACHABLE_NANOS, restartWaitNanos);
        if (silenceNanos != Long.MAX_VALUE) {
            silenceNanos = Math.max(silenceNanos, restartWaitNanos);
        }
        if (unreachable && now - unreachableSince >= unreachableLimit) {
            return "no proxy answers at " + where() + ": nothing listens on that UDP port (ICMP port unreachable"
                    + (launching ? "" : "; the proxy stopped") + ")";
        }
        if (silenceNanos != Long.MAX_VALUE && now - Math.max(lastHeard, silentFrom) > silenceNanos) {
            return "no proxy answers at " + where() + ": nothing heard for "
                    + TimeUnit.NANOSECONDS.toMillis(silenceNanos) + " ms, no refusal and no ICMP error (the node may"
                    + " be down or unreachable): declared dead";
        }
        return null;
    }

    String where() {
        return address.getAddress().getHostAddress() + ":" + address.getPort();
    }
}
