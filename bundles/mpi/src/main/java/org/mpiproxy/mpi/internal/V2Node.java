package org.mpiproxy.mpi.internal;

import static org.mpiproxy.mpi.internal.V2HostTransport.NONCES;
import static org.mpiproxy.mpi.internal.V2HostTransport.PROBE_NANOS;
import static org.mpiproxy.mpi.internal.V2HostTransport.UNREACHABLE_NANOS;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * One proxy of a v2 job (address and port; its ranks share it): when it was last heard, the
 * nonces sent to it lately, its probe socket, its back-off while it refuses our requests as busy
 * (docs/protocol-v2.md 3.5), the presentation of the job's credential to it (5.9) and what is known
 * to be wrong with it.
 * Not thread-safe (the transport's lock).
 */
final class V2Node {

    /** The first back-off after a busy refusal; doubled per busy refusal in a row. */
    static final long BUSY_FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** The longest back-off after a busy refusal. */
    static final long BUSY_MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(4);
    /**
     * A node that answered nothing but busy this long fails the call: 2 * skew + 1 s, by when
     * every nonce the proxy remembered before the first busy refusal has left its replay cache.
     */
    static final long BUSY_GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(61);

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
    /** The node refused a request of ours as busy since it last answered: {@link #busySince}, {@link #lastBusy}. */
    boolean busy;
    long busySince;
    long lastBusy;
    private long busyBackoffNanos;
    /** Requests to the node wait until then while it is busy. */
    private long holdOffUntil;
    /** The job's credential was presented to it at {@link #presentedAt}, not answered yet ({@link V2HostCredential}). */
    boolean presenting;
    long presentedAt;
    /** Why the node refused the job's credential (its CREDENTIAL reply), or null; no later reply clears it. */
    String credentialRefusal;

    V2Node(HostfileEntry entry, InetSocketAddress address, V2Authenticator auth) {
        this.entry = entry;
        this.address = address;
        this.auth = auth;
    }

    /** Opens its probe socket, connected to it, in {@code selector}, unless it is open. */
    void openProbe(Selector selector) throws IOException {
        if (probe != null) {
            return;
        }
        DatagramChannel c = DatagramChannel.open();
        try {
            c.configureBlocking(false);
            c.connect(address);
            c.register(selector, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
        probe = c;
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
        busy = false;
        busyBackoffNanos = 0;
        presenting = false;
    }

    /**
     * A refusal (docs/protocol-v2.md 3.5) is not authenticated: it counts only when it names the
     * nonce of a request sent to the node lately. Forging one needs that nonce, i.e. seeing our
     * requests on their way, which already allows dropping them. A busy refusal holds the node's
     * requests back ({@link #busy}; the first of a spell is reported to {@code diagnostics}); no
     * credential (reason 6) to a host that signs with a job key leaves them pending, for the job's
     * credential to be presented ({@link V2HostCredential}); any other fails the calls that wait for
     * the node, with the reason.
     *
     * @param in the refusal, from index 0 ({@link V2RefusalDescriptor#isRefusal} holds)
     * @return whether it answered a request sent to the node lately
     */
    boolean refused(ByteBuffer in, long now, PrintStream diagnostics) {
        if (!wasSent(V2RefusalDescriptor.nonce(in, 0))) {
            return false;
        }
        int reason = V2RefusalDescriptor.reason(in, 0);
        if (reason == V2RefusalDescriptor.REASON_NO_CREDENTIAL && auth.sendKeyId() == JobCredential.JOB_KEY_ID) {
            return true;
        }
        String why = V2RefusalDescriptor.describe(reason, V2RefusalDescriptor.keyId(in, 0));
        if (!V2RefusalDescriptor.isRetryable(reason)) {
            refusal = why;
        } else if (busy(now)) {
            diagnostics.println("mpi: node " + where() + ": " + why + "; retrying with back-off");
        }
        return true;
    }

    /**
     * A busy refusal of a request of ours (docs/protocol-v2.md 3.5): the request was not done and
     * may be sent again; the node's requests wait for a back-off that doubles per busy refusal in
     * a row. The proxy read and checked the request, so the node counts as alive.
     *
     * @return whether this began a busy spell (the node was not busy before)
     */
    boolean busy(long now) {
        boolean began = !busy;
        if (began) {
            busy = true;
            busySince = now;
            busyBackoffNanos = BUSY_FIRST_BACKOFF_NANOS;
        } else if (now - holdOffUntil >= 0) {
            // refusals of requests sent in one round count once
            busyBackoffNanos = Math.min(busyBackoffNanos * 2, BUSY_MAX_BACKOFF_NANOS);
        }
        lastBusy = now;
        holdOffUntil = now + busyBackoffNanos;
        return began;
    }

    /** @return when the node last showed it is alive: a valid reply, the start of the wait, a busy refusal */
    long aliveAt() {
        long alive = Math.max(lastHeard, silentFrom);
        return busy ? Math.max(alive, lastBusy) : alive;
    }

    /** @return whether requests to the node wait now (it refused one as busy, and its back-off is not over) */
    boolean holdsOff(long now) {
        return busy && now - holdOffUntil < 0;
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
        if (credentialRefusal != null) {
            return credentialRefusal;
        }
        if (refusal != null) {
            return refusal;
        }
        if (busy && now - busySince >= BUSY_GIVE_UP_NANOS) {
            return "the proxy at " + where() + " refused our requests as busy for "
                    + TimeUnit.NANOSECONDS.toSeconds(now - busySince) + " s: "
                    + V2RefusalDescriptor.describe(V2RefusalDescriptor.REASON_BUSY, auth.sendKeyId());
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
        // a busy refusal shows the node alive (for BUSY_GIVE_UP_NANOS at most, above)
        if (silenceNanos != Long.MAX_VALUE && now - aliveAt() > silenceNanos) {
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
