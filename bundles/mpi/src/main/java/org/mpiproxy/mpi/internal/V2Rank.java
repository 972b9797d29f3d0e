package org.mpiproxy.mpi.internal;

import java.net.InetSocketAddress;

import org.mpiproxy.protocol.V2Authenticator;

/**
 * One rank of a v2 job: where it runs and what its EXEC and TERMINATE were answered (its
 * streams' positions are kept by {@link V2SendStreams}, {@link V2RecvStreams} and
 * {@link V2HostOutput}). Not thread-safe (the transport's lock).
 */
final class V2Rank {
    final HostfileEntry node;
    final V2Node at;
    final InetSocketAddress address;
    final V2Authenticator auth;
    int execResult = -1;
    String execReason;
    long terminateStatus = Long.MIN_VALUE;
    int terminateResult = -1;
    /** Interim replies to TERMINATE (STATUS: alive, still terminating) received. */
    long terminateInterims;

    V2Rank(HostfileEntry node, V2Node at, InetSocketAddress address, V2Authenticator auth) {
        this.node = node;
        this.at = at;
        this.address = address;
        this.auth = auth;
    }

    /** Whether its TERMINATE reply is still awaited (its node not given up). */
    boolean awaitsTerminate() {
        return terminateResult < 0 && execResult >= 0 && !at.dead;
    }
}
