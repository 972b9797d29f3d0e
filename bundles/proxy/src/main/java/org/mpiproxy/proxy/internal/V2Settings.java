package org.mpiproxy.proxy.internal;

import java.time.Duration;
import java.util.Objects;

import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.NodeIds;
import org.mpiproxy.protocol.V2HeaderDescriptor;

/**
 * Validated settings of protocol v2.
 *
 * @param keys             the cluster keys
 * @param nodeName         this node's name; requests must name it
 * @param skew             largest accepted clock difference
 * @param replayCacheSize  nonces remembered per key
 * @param datagramSize     largest datagram sent and accepted
 * @param jobLinger        how long a finished job's TERMINATE replies are remembered
 * @param maxMessageBytes  the largest message a SEND may carry to a rank, in bytes; 0 = no limit
 * @param stageMaxBytes    the largest program a host may STAGE, in bytes
 * @param replaySourceShare nonces remembered per key for one source (IPv4 address, IPv6 /64); at
 *                         most {@code replayCacheSize} count
 * @param credentialsMax   job keys kept of jobs the node does not have yet (docs/protocol-v2.md 5.9)
 * @param rankRootAllowed  whether a credential of uid 0 is accepted: ranks may then run as root
 * @param limits           what one job and one user may hold of the node
 * @param credentialSeconds how long a credential this node issues for a MUNGE request is valid
 *                         ({@code identity.credential.seconds}, as over the local socket)
 */
record V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
                  Duration jobLinger, long maxMessageBytes, long stageMaxBytes, int replaySourceShare,
                  int credentialsMax, boolean rankRootAllowed, NodeLimits limits, long credentialSeconds) {

    /** Default of {@code v2.credentials.max}. */
    static final int DEFAULT_CREDENTIALS_MAX = 4096;

    /** Default of {@code v2.replay.source.share}: a sixteenth of the default replay cache. */
    static final int DEFAULT_REPLAY_SOURCE_SHARE = 4096;

    /** Default of {@code v2.max.message.bytes}: 1 GiB. */
    static final long DEFAULT_MAX_MESSAGE_BYTES = 1L << 30;

    /** Settings with the default maximum message size. */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, DEFAULT_MAX_MESSAGE_BYTES);
    }

    /** Settings with the default largest staged program. */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger, long maxMessageBytes) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, maxMessageBytes,
                StagedPrograms.MAX_FILE_BYTES);
    }

    /** Settings whose replay cache has no bound per source (one source may fill it). */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger, long maxMessageBytes, long stageMaxBytes) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, maxMessageBytes, stageMaxBytes,
                replayCacheSize);
    }

    /** Settings with the default bound of credentials and no rank as root. */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger, long maxMessageBytes, long stageMaxBytes, int replaySourceShare) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, maxMessageBytes, stageMaxBytes,
                replaySourceShare, DEFAULT_CREDENTIALS_MAX, false);
    }

    /** Settings with the default limits of jobs and users ({@link NodeLimits#DEFAULT}). */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger, long maxMessageBytes, long stageMaxBytes, int replaySourceShare,
               int credentialsMax, boolean rankRootAllowed) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, maxMessageBytes, stageMaxBytes,
                replaySourceShare, credentialsMax, rankRootAllowed, NodeLimits.DEFAULT);
    }

    /** Settings whose issued credentials have the default lifetime. */
    V2Settings(ClusterKeys keys, String nodeName, Duration skew, int replayCacheSize, int datagramSize,
               Duration jobLinger, long maxMessageBytes, long stageMaxBytes, int replaySourceShare,
               int credentialsMax, boolean rankRootAllowed, NodeLimits limits) {
        this(keys, nodeName, skew, replayCacheSize, datagramSize, jobLinger, maxMessageBytes, stageMaxBytes,
                replaySourceShare, credentialsMax, rankRootAllowed, limits, CredentialIssuer.DEFAULT_LIFETIME_SECONDS);
    }

    V2Settings {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(limits, "limits");
        if (nodeName == null || nodeName.isBlank()) {
            throw new IllegalArgumentException("node.name must not be empty");
        }
        if (skew.isNegative()) {
            throw new IllegalArgumentException("v2.skew.seconds=" + skew.toSeconds() + " must be >= 0");
        }
        if (replayCacheSize < 1) {
            throw new IllegalArgumentException("v2.replay.cache.size=" + replayCacheSize + " must be >= 1");
        }
        if (replaySourceShare < 1) {
            throw new IllegalArgumentException("v2.replay.source.share=" + replaySourceShare + " must be >= 1");
        }
        if (datagramSize < V2HeaderDescriptor.MIN_DATAGRAM_LENGTH + 8
                || datagramSize > V2HeaderDescriptor.MAX_DATAGRAM_LENGTH) {
            throw new IllegalArgumentException("v2.datagram.size=" + datagramSize + " out of range "
                    + (V2HeaderDescriptor.MIN_DATAGRAM_LENGTH + 8) + ".." + V2HeaderDescriptor.MAX_DATAGRAM_LENGTH);
        }
        if (jobLinger.isNegative()) {
            throw new IllegalArgumentException("v2.job.linger.seconds=" + jobLinger.toSeconds() + " must be >= 0");
        }
        if (maxMessageBytes < 0) {
            throw new IllegalArgumentException("v2.max.message.bytes=" + maxMessageBytes + " must be >= 0 (0: no limit)");
        }
        if (stageMaxBytes < 0) {
            throw new IllegalArgumentException("stage.max.bytes=" + stageMaxBytes + " must be >= 0 (0: no staging)");
        }
        if (credentialsMax < 0) {
            throw new IllegalArgumentException("v2.credentials.max=" + credentialsMax + " must be >= 0");
        }
        CredentialIssuer.lifetime(credentialSeconds);
    }

    long nodeId() {
        return NodeIds.of(nodeName);
    }

    int maxPayload() {
        return V2HeaderDescriptor.maxPayload(datagramSize);
    }

    /**
     * @param next changed settings
     * @return these settings with what takes effect while jobs run taken from {@code next}: keys,
     *         node name, job linger, maximum message size, largest staged program, whether ranks
     *         may run as root, the limits of jobs and users (from their next EXEC, PMI handshake) and
     *         the lifetime of credentials issued (from the next MUNGE request)
     */
    V2Settings applyLive(V2Settings next) {
        return new V2Settings(next.keys(), next.nodeName(), skew, replayCacheSize, datagramSize, next.jobLinger(),
                next.maxMessageBytes(), next.stageMaxBytes(), replaySourceShare, credentialsMax,
                next.rankRootAllowed(), next.limits(), next.credentialSeconds());
    }

    /**
     * @param next changed settings
     * @return the configuration keys whose new values wait for the next start (they size buffers and
     *         caches of running jobs): the clock skew, the replay cache size and share per source,
     *         the datagram size, the bound of credentials
     */
    java.util.List<String> waitingForStart(V2Settings next) {
        java.util.List<String> later = new java.util.ArrayList<>();
        if (!next.skew().equals(skew)) {
            later.add("v2.skew.seconds");
        }
        if (next.replayCacheSize() != replayCacheSize) {
            later.add("v2.replay.cache.size");
        }
        if (next.replaySourceShare() != replaySourceShare) {
            later.add("v2.replay.source.share");
        }
        if (next.datagramSize() != datagramSize) {
            later.add("v2.datagram.size");
        }
        if (next.credentialsMax() != credentialsMax) {
            later.add("v2.credentials.max");
        }
        return later;
    }
}
