package org.mpiproxy.proxy.internal;

import java.net.InetSocketAddress;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.RingFaultException;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.slf4j.Logger;

/**
 * v2 requests whose handling threw (docs/protocol-v2.md 6): the request is answered with
 * MPI_ERR_IO and the reason in one line, as other refusals are, never left unanswered; when a
 * rank's ring faulted, the rank's job is failed: one log line names the cause, its ranks are
 * stopped, and STATUS shows the faulted rank FAILED once it ended. Other jobs go on. Receive
 * thread only (the dispatcher's lock).
 */
final class V2RequestFailures {

    private final Logger log;
    private final LongMap<V2Job> jobs;
    private final V2Replies replies;
    private final RankLifecycle lifecycle;
    private final ProxyCounters<V2Counter> counters;
    private final RateLimitedLog<V2Counter> lines;
    /** The verified request being handled, {@code null} before verification. */
    private V2HeaderFlyweight request;

    V2RequestFailures(Logger log, LongMap<V2Job> jobs, V2Replies replies, RankLifecycle lifecycle,
                      ProxyCounters<V2Counter> counters, RateLimitedLog<V2Counter> lines) {
        this.log = log;
        this.jobs = jobs;
        this.replies = replies;
        this.lifecycle = lifecycle;
        this.counters = counters;
        this.lines = lines;
    }

    /** @param header the verified request now handled, {@code null} for a datagram not verified yet */
    void handling(V2HeaderFlyweight header) {
        request = header;
    }

    /**
     * The handling of a datagram threw: counted; a verified request is answered with the reason;
     * a ring fault fails the job it names (a bare {@link InternalError}: the request's job).
     */
    void failed(InetSocketAddress source, DatagramTransport transport, Throwable failure) {
        counters.increment(V2Counter.ERRORS);
        V2HeaderFlyweight header = request;
        request = null;
        long jobId = header != null ? header.jobId() : 0;
        long rankId = header != null ? header.rank() : 0;
        String reason = RequestFailure.reason(failure, Job.hex(jobId), rankId);
        if (RequestFailure.isRingFault(failure)) {
            RingFaultException fault = failure instanceof RingFaultException r ? r : null;
            failJob(fault != null ? fault.jobId() : jobId, fault != null ? fault.rankId() : rankId, reason);
        } else if (lines.permit(V2Counter.ERRORS)) {
            log.error("failed to handle a v2 datagram from {} ({} similar failures suppressed)", source,
                    lines.takeSuppressed(V2Counter.ERRORS), failure);
        }
        if (header != null) {
            replies.to(header).rank(rankId).core(header.core()).sequence(header.sequence())
                    .result(RequestFailure.RESULT);
            replies.send(transport, replies.putReason(reason), source);
        }
    }

    /**
     * Work on a rank outside a request threw (reading its data for RECV): a ring fault fails its
     * job; anything else is counted and logged.
     */
    void rankFailed(V2Rank rank, RuntimeException failure) {
        counters.increment(V2Counter.ERRORS);
        if (failure instanceof RingFaultException) {
            failJob(rank.job.jobId, rank.rankId, failure.getMessage());
            return;
        }
        log.error("v2 job {} rank {}: reading the rank's data failed", Job.hex(rank.job.jobId), rank.rankId,
                failure);
    }

    /** Fails the job once: one line, every rank of it stopped; the faulted rank keeps the reason. */
    private void failJob(long jobId, long rankId, String reason) {
        V2Job job = jobs.get(jobId);
        V2Rank faulted = job != null && rankId >= 0 ? job.rank(rankId) : null;
        if (faulted == null || faulted.fault != null) {
            return;
        }
        faulted.fault = reason;
        counters.increment(V2Counter.JOBS_RING_FAULT);
        log.error("v2 job {} of {} failed: {}; stopping its ranks", Job.hex(jobId), Job.ownerText(job.owner), reason);
        for (V2Rank rank : job.ranks()) {
            lifecycle.stopFaulted(rank);
        }
    }
}
