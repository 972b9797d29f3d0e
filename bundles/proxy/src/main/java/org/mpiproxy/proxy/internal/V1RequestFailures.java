package org.mpiproxy.proxy.internal;

import static org.mpiproxy.protocol.V1HeaderDescriptor.HEADER_LENGTH;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_EXEC;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_RECV;
import static org.mpiproxy.protocol.V1HeaderDescriptor.OP_SEND;

import java.net.InetSocketAddress;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import org.mpiproxy.api.DatagramTransport;
import org.mpiproxy.api.RingFaultException;
import org.mpiproxy.protocol.V1HeaderFlyweight;
import org.slf4j.Logger;

/**
 * v1 requests whose handling threw (docs/protocol-v1.md, "Error codes"): the request is answered
 * with its operation, MPI_ERR_IO and the reason as payload, SEND too (the only SEND reply v1
 * has); when a rank's ring faulted, its job is stopped as a whole ({@link JobSupervisor}: one
 * line names the cause) and the rank's waiting RECVs are answered the same way. Other jobs go on.
 * Receive thread only (the dispatcher's lock).
 */
final class V1RequestFailures {

    private final Logger log;
    private final V1Replies replies;
    private final ProxyCounters<ProxyCounter> counters;
    private final RateLimitedLog<ProxyCounter> lines;
    private final Supplier<JobSupervisor> supervisor;
    private final BiFunction<InetSocketAddress, Integer, Rank> ranks;
    /** The request being handled, {@code null} before its header was checked. */
    private V1HeaderFlyweight request;

    /**
     * @param supervisor stops jobs
     * @param ranks      the rank a request names: of the job of its source, by rank id; {@code null} when none
     */
    V1RequestFailures(Logger log, V1Replies replies, ProxyCounters<ProxyCounter> counters,
                      RateLimitedLog<ProxyCounter> lines, Supplier<JobSupervisor> supervisor,
                      BiFunction<InetSocketAddress, Integer, Rank> ranks) {
        this.log = log;
        this.replies = replies;
        this.counters = counters;
        this.lines = lines;
        this.supervisor = supervisor;
        this.ranks = ranks;
    }

    /** @param header the request now handled, {@code null} before its header was checked */
    void handling(V1HeaderFlyweight header) {
        request = header;
    }

    /** The handling of a datagram threw: counted, answered with the reason; a ring fault fails the rank's job. */
    void failed(InetSocketAddress source, DatagramTransport transport, Throwable failure) {
        counters.increment(ProxyCounter.ERRORS);
        V1HeaderFlyweight header = request;
        request = null;
        Rank about = header != null && header.operation() != OP_EXEC ? ranks.apply(source, header.rankId()) : null;
        long rankId = header != null ? header.rankId() : 0;
        String reason = RequestFailure.reason(failure, about != null ? Job.hex(about.job.jobId) : "of " + source,
                rankId);
        if (about != null && RequestFailure.isRingFault(failure)) {
            failJob(about, reason, transport);
        } else if (lines.permit(ProxyCounter.ERRORS)) {
            log.error("failed to handle a datagram from {} ({} similar failures suppressed)", source,
                    lines.takeSuppressed(ProxyCounter.ERRORS), failure);
        }
        if (header != null) {
            int operation = header.operation();
            replies.set(operation, RequestFailure.RESULT, header.rankId(), header.coreId(),
                    operation == OP_RECV || operation == OP_SEND ? header.datatype() : 0, 0);
            replies.send(transport, HEADER_LENGTH + replies.putReason(reason), source);
        }
    }

    /**
     * Moving a rank's held SENDs or answering its RECVs threw: a ring fault fails its job, anything
     * else is logged; either way the rank's waiting RECVs are answered with the reason.
     */
    void rankFailed(Rank failed, DatagramTransport transport, RuntimeException failure) {
        counters.increment(ProxyCounter.ERRORS);
        String reason = RequestFailure.reason(failure, Job.hex(failed.job.jobId), failed.rankId);
        if (failure instanceof RingFaultException) {
            failJob(failed, reason, transport);
            return;
        }
        log.error("job {} rank {}: moving the rank's data failed", Job.hex(failed.job.jobId), failed.rankId, failure);
        answerRecvs(failed, reason, transport);
    }

    private void failJob(Rank faulted, String reason, DatagramTransport transport) {
        if (faulted.fault == null) {
            faulted.fault = reason;
            counters.increment(ProxyCounter.JOBS_RING_FAULT);
            supervisor.get().onRingFault(faulted.job, reason);
        }
        answerRecvs(faulted, reason, transport);
    }

    /** The host's waiting RECVs of the rank learn why they fail; its ring is not read for them again. */
    private void answerRecvs(Rank faulted, String reason, DatagramTransport transport) {
        while (!faulted.recvs.isEmpty()) {
            replies.set(OP_RECV, RequestFailure.RESULT, faulted.rankId, faulted.coreId, faulted.recvs.headDatatype(), 0);
            replies.send(transport, HEADER_LENGTH + replies.putReason(reason), faulted.job.owner);
            faulted.recvs.pop();
        }
    }
}
