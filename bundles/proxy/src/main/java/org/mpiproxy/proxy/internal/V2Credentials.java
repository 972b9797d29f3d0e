package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2Authenticator;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;
import org.slf4j.Logger;

/**
 * The users of v2 (docs/protocol-v2.md 4.1, 5.9): takes the job credentials hosts present
 * (CREDENTIAL), so that the authenticator knows their job keys, and says whose a job is. A
 * credential is accepted when the node has its job with its user (whatever its expiry: a credential
 * presented again after a restart, or by a later {@code mpiproxy kill}), else when it is valid now
 * (the clock skew allowed) and the authenticator keeps fewer than {@code v2.credentials.max} keys of
 * jobs the node does not have (else refused busy, reason 5). It is refused with
 * MPIPROXY_ERR_PERMISSION (202) for a job the node has with another user or created under a
 * cluster key, for a job another user's credential was presented for first, and for uid 0 unless
 * {@code rank.root.allowed}; with MPIPROXY_ERR_EXPIRED (203) when expired or issued in the future.
 * The reply is signed with the job key of the credential it answers. A job created by an EXEC of
 * key id 0 is its credential's user's, and its key is kept as long as the node has the job.
 * Receive thread only (the dispatcher's lock).
 */
final class V2Credentials {

    private final Logger log;
    private final LongMap<V2Job> jobs;
    private final V2Replies replies;
    private final Supplier<V2Settings> v2;
    private final LongSupplier clock;
    private final ProxyCounters<V2Counter> counters;
    private final RateLimitedLog<V2Counter> lines;

    V2Credentials(Logger log, LongMap<V2Job> jobs, V2Replies replies, Supplier<V2Settings> v2, LongSupplier clock,
                  ProxyCounters<V2Counter> counters, RateLimitedLog<V2Counter> lines) {
        this.log = log;
        this.jobs = jobs;
        this.replies = replies;
        this.v2 = v2;
        this.clock = clock;
        this.counters = counters;
        this.lines = lines;
    }

    /**
     * A CREDENTIAL that verified: its credential is the authenticator's ({@link V2Authenticator#credential()}).
     *
     * @return {@code false} when it is not of key id 0 (under a cluster key it means nothing: a cluster
     *         key acts for every job), to be dropped as an invalid operation
     */
    boolean onCredential(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport) {
        if (header.keyId() != JobCredential.JOB_KEY_ID) {
            return false;
        }
        counters.increment(V2Counter.CREDENTIAL_REQUESTS);
        V2Authenticator authenticator = replies.authenticator();
        JobCredential c = authenticator.credential();
        long now = clock.getAsLong();
        V2Job job = jobs.get(c.jobId());
        RankIdentity user = new RankIdentity(c.uid(), c.gid());
        String job16 = Job.hex(c.jobId());
        if (c.uid() == 0 && !v2.get().rankRootAllowed()) {
            refuse(header, source, transport, MpiErrors.ERR_PERMISSION, "credential of uid 0 refused: ranks may not"
                    + " run as root on this node (rank.root.allowed)");
            return true;
        }
        if (job != null && job.user == null) {
            refuse(header, source, transport, MpiErrors.ERR_PERMISSION, "job " + job16
                    + " was started under a cluster key: no credential acts for it");
            return true;
        }
        if (job != null && !job.user.equals(user)) {
            refuse(header, source, transport, MpiErrors.ERR_PERMISSION, "job " + job16 + " is another user's");
            return true;
        }
        String invalid = job != null ? null : c.invalidAt(now, v2.get().skew().toMillis());
        if (invalid != null) {
            refuse(header, source, transport, MpiErrors.ERR_EXPIRED, invalid);
            return true;
        }
        int accepted = job != null ? authenticator.acceptCredentialOfKeptJob(c, now)
                : authenticator.acceptCredential(c, now);
        if (accepted == V2Authenticator.CREDENTIAL_OTHER_USER) {
            refuse(header, source, transport, MpiErrors.ERR_PERMISSION, "job " + job16
                    + " is another user's (a credential of another user was presented for it first)");
            return true;
        }
        if (accepted == V2Authenticator.CREDENTIAL_TABLE_FULL) {
            counters.increment(V2Counter.CREDENTIAL_TABLE_FULL);
            replies.refuse(header.buffer(), header.offset(), V2RefusalDescriptor.REASON_BUSY, source, transport);
            return true;
        }
        replies.to(header).result(MpiErrors.SUCCESS);
        replies.send(transport, 0, source);
        return true;
    }

    private void refuse(V2HeaderFlyweight header, InetSocketAddress source, DatagramTransport transport, int result,
                        String reason) {
        counters.increment(V2Counter.CREDENTIAL_REFUSED);
        if (lines.permit(V2Counter.CREDENTIAL_REFUSED)) {
            log.warn("v2 CREDENTIAL for job {} from {} refused with {}: {} ({} similar lines suppressed)",
                    Job.hex(header.jobId()), Job.ownerText(source), MpiErrors.name(result), reason,
                    lines.takeSuppressed(V2Counter.CREDENTIAL_REFUSED));
        }
        replies.to(header).result(result);
        replies.send(transport, replies.putReason(reason), source);
    }

    /**
     * @param header an EXEC that creates its job
     * @return whose the job is: the user of the credential whose job key signed the EXEC (key id 0),
     *         {@code null} under a cluster key
     */
    RankIdentity userOfNewJob(V2HeaderFlyweight header) {
        if (header.keyId() != JobCredential.JOB_KEY_ID) {
            return null;
        }
        JobCredential c = replies.authenticator().credentialOf(header.jobId());
        if (c == null) {
            // verified with the job's key, so the key is known: never runs as the proxy's user by mistake
            throw new IllegalStateException("job " + Job.hex(header.jobId()) + ": key id 0 verified without a job key");
        }
        return new RankIdentity(c.uid(), c.gid());
    }

    /**
     * A job was created: its key is kept as long as the node has it, or, created under a cluster key,
     * forgotten (no credential acts for such a job).
     */
    void created(V2Job job) {
        if (job.user != null) {
            replies.authenticator().keepJob(job.jobId);
        } else {
            replies.authenticator().forgetJob(job.jobId);
        }
    }

    /**
     * Forgets jobs whose last rank ended longer than the job linger ago (their answers for repeats
     * and their keys go with them), and the keys of jobs the node does not have whose credentials expired.
     *
     * @param nowNanos    {@link System#nanoTime} now
     * @param lingerNanos the job linger
     */
    void purge(long nowNanos, long lingerNanos) {
        V2Authenticator authenticator = replies.authenticator();
        jobs.removeIf(job -> {
            boolean over = job.isEmpty() && job.emptySince != 0 && nowNanos - job.emptySince >= lingerNanos;
            if (over) {
                authenticator.forgetJob(job.jobId);
            }
            return over;
        });
        authenticator.purgeJobKeys(clock.getAsLong());
    }
}
