package org.mpiproxy.proxy.internal;

/** Counters of protocol v2; {@link #key()} is the name shown to operators. */
enum V2Counter implements CounterKey {
    DATAGRAMS_IN("v2.datagrams.in"),
    AUTH_TOO_SHORT("v2.auth.too.short"),
    AUTH_BAD_MAGIC("v2.auth.bad.magic"),
    AUTH_BAD_LENGTH("v2.auth.bad.length"),
    AUTH_UNKNOWN_KEY("v2.auth.unknown.key"),
    AUTH_BAD_MAC("v2.auth.bad.mac"),
    AUTH_WRONG_NODE("v2.auth.wrong.node"),
    AUTH_STALE("v2.auth.stale"),
    AUTH_FUTURE("v2.auth.future"),
    AUTH_REPLAYED("v2.auth.replayed"),
    /** Authentic and new, but the key's replay cache was full: refused busy (docs/protocol-v2.md 3.5). */
    AUTH_REPLAY_CACHE_FULL("v2.auth.replay.cache.full"),
    /** Authentic and new, but its source held its share of the key's replay cache: refused busy. */
    AUTH_REPLAY_SOURCE_FULL("v2.auth.replay.source.full"),
    /** Key id 0 for a job whose job key the node does not know: refused "no credential" (docs/protocol-v2.md 4.1). */
    AUTH_NO_CREDENTIAL("v2.auth.no.credential"),
    /** A CREDENTIAL whose credential did not verify, or named another job: refused "not verified". */
    AUTH_BAD_CREDENTIAL("v2.auth.bad.credential"),
    INVALID_OVERSIZE("v2.invalid.oversize"),
    INVALID_OP("v2.invalid.op"),
    INVALID_FLAGS("v2.invalid.flags"),
    INVALID_SEQUENCE("v2.invalid.sequence"),
    /** TERMINATE refused for argument bits other than STOP. */
    INVALID_ARGUMENT("v2.invalid.argument"),
    EXEC_REQUESTS("v2.exec.requests"),
    EXEC_STARTED("v2.exec.started"),
    EXEC_FAILED("v2.exec.failed"),
    EXEC_REJECTED("v2.exec.rejected"),
    EXEC_DUPLICATE("v2.exec.duplicate"),
    /** EXECs refused because their job has {@code job.max.ranks} live ranks on this node. */
    EXEC_JOB_MAX_RANKS("v2.exec.refused.job.max.ranks"),
    /** EXECs refused because their user's jobs have {@code user.max.ranks} live ranks on this node. */
    EXEC_USER_MAX_RANKS("v2.exec.refused.user.max.ranks"),
    SEND_FRAGMENTS("v2.send.fragments"),
    SEND_STORED("v2.send.stored"),
    DOORBELLS_RUNG("v2.doorbells.rung"),
    SEND_DUPLICATE("v2.send.duplicate"),
    SEND_OUT_OF_ORDER("v2.send.out.of.order"),
    /** Out-of-order fragments held until the hole before them is filled. */
    SEND_HELD("v2.send.held"),
    SEND_RING_FULL("v2.send.ring.full"),
    SEND_WINDOW_UPDATES("v2.send.window.updates"),
    SEND_TOO_LARGE("v2.send.too.large"),
    SEND_BYTES("v2.send.bytes"),
    RECV_REQUESTS("v2.recv.requests"),
    RECV_FRAGMENTS("v2.recv.fragments"),
    RECV_RESENT("v2.recv.resent"),
    RECV_IN_FLIGHT("v2.recv.in.flight"),
    /** Fragments the host had from a previous proxy instance, cut again from the ring and skipped. */
    RECV_SKIPPED("v2.recv.skipped"),
    RECV_BYTES("v2.recv.bytes"),
    TERMINATE_REQUESTS("v2.terminate.requests"),
    TERMINATE_FORCED("v2.terminate.forced"),
    /** Ranks stopped at once by a TERMINATE with STOP. */
    TERMINATE_STOPPED("v2.terminate.stopped"),
    /** Interim replies (STATUS) to repeated TERMINATEs of ranks still terminating. */
    TERMINATE_INTERIM("v2.terminate.interim"),
    STATUS_REQUESTS("v2.status.requests"),
    /** STATUS of job id 0: a host or launcher asking whether a proxy with its key is there. */
    STATUS_PROBES("v2.status.probes"),
    /** CREDENTIAL requests that verified (docs/protocol-v2.md 5.9). */
    CREDENTIAL_REQUESTS("v2.credential.requests"),
    /** Credentials refused with MPIPROXY_ERR_PERMISSION or MPIPROXY_ERR_EXPIRED. */
    CREDENTIAL_REFUSED("v2.credential.refused"),
    /** Credentials of jobs the node does not have, refused busy: it keeps {@code v2.credentials.max} such keys. */
    CREDENTIAL_TABLE_FULL("v2.credential.table.full"),
    /** CREDENTIAL requests with the MUNGE flag (docs/protocol-v2.md 4.3), within the rate limit or not. */
    MUNGE_REQUESTS("v2.munge.requests"),
    /** MUNGE requests answered with a job credential. */
    MUNGE_ANSWERED("v2.munge.answered"),
    /** MUNGE requests refused, unanswered: munged refused the credential, or its line names another request. */
    MUNGE_REFUSED("v2.munge.refused"),
    /** MUNGE requests dropped unread: more than 64 a second, or too many waiting for munged. */
    MUNGE_DROPPED("v2.munge.dropped"),
    /** Refusals sent to the source of a request that did not verify (docs/protocol-v2.md 3.5). */
    REFUSALS_SENT("v2.refusals.sent"),
    /** Refusals not sent: the per-source or global rate limit was reached. */
    REFUSALS_LIMITED("v2.refusals.limited"),
    UNKNOWN_JOB("v2.unknown.job"),
    UNKNOWN_RANK("v2.unknown.rank"),
    RANKS_EXITED("v2.ranks.exited"),
    JOBS_CREATED("v2.jobs.created"),
    JOBS_FINISHED("v2.jobs.finished"),
    REPLIES_FAILED("v2.replies.failed"),
    REPLIES_KEY_REMOVED("v2.replies.key.removed"),
    /** Jobs failed because a ring of one of their ranks faulted (the channel base full, among others). */
    JOBS_RING_FAULT("v2.jobs.ring.fault"),
    ERRORS("v2.errors");

    private static final V2Counter[] AUTH = {null, AUTH_TOO_SHORT, AUTH_BAD_MAGIC, AUTH_BAD_LENGTH, AUTH_UNKNOWN_KEY,
        AUTH_BAD_MAC, AUTH_WRONG_NODE, AUTH_STALE, AUTH_FUTURE, AUTH_REPLAYED, AUTH_REPLAY_CACHE_FULL,
        AUTH_REPLAY_SOURCE_FULL, AUTH_NO_CREDENTIAL, AUTH_BAD_CREDENTIAL};

    private final String key;

    V2Counter(String key) {
        this.key = key;
    }

    @Override
    public String key() {
        return key;
    }

    /** @return the counter of a refusal by {@code V2Authenticator.verify}, never for OK */
    static V2Counter ofAuthResult(int result) {
        return result > 0 && result < AUTH.length ? AUTH[result] : ERRORS;
    }
}
