package org.mpiproxy.proxy.internal;

/** The proxy's counters; {@link #key()} is the name shown to operators. */
enum ProxyCounter implements CounterKey {
    DATAGRAMS_IN("datagrams.in"),
    EXEC_REQUESTS("exec.requests"),
    EXEC_STARTED("exec.started"),
    EXEC_FAILED("exec.failed"),
    EXEC_REJECTED("exec.rejected"),
    EXEC_DUPLICATE("exec.duplicate"),
    SEND_DATAGRAMS("send.datagrams"),
    SEND_BYTES("send.bytes"),
    SEND_HELD("send.held"),
    SEND_DROPPED("send.dropped"),
    RECV_REQUESTS("recv.requests"),
    RECV_REPLIES("recv.replies"),
    RECV_BYTES("recv.bytes"),
    RECV_TYPE_MISMATCH("recv.type.mismatch"),
    RECV_ABANDONED("recv.abandoned"),
    RECV_DROPPED("recv.dropped"),
    TERMINATE_REQUESTS("terminate.requests"),
    TERMINATE_UNKNOWN("terminate.unknown"),
    TERMINATE_FORCED("terminate.forced"),
    /** TERMINATE of rank 0: the launcher's probe, answered MPI_ERR_RANK (docs/protocol-v1.md). */
    PROBES("probes"),
    RANKS_EXITED("ranks.exited"),
    JOBS_CREATED("jobs.created"),
    JOBS_FINISHED("jobs.finished"),
    REPLIES_FAILED("replies.failed"),
    DOORBELLS_RUNG("doorbells.rung"),
    INVALID_SHORT("invalid.short"),
    INVALID_OP("invalid.op"),
    INVALID_DATATYPE("invalid.datatype"),
    INVALID_COUNT("invalid.count"),
    INVALID_RANK("invalid.rank"),
    INVALID_OVERSIZE("invalid.oversize"),
    /** Jobs failed because a ring of one of their ranks faulted (the channel base full, among others). */
    JOBS_RING_FAULT("jobs.ring.fault"),
    ERRORS("errors");

    private final String key;

    ProxyCounter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }
}
