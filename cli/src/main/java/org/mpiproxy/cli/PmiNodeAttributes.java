package org.mpiproxy.cli;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.mpiproxy.protocol.pmi.PmiServer;
import org.mpiproxy.protocol.pmi.PmiSpace;

/**
 * Carries a node attribute a rank put (PMI-2's {@code info-putnodeattr}) to the job's other PMI
 * servers on the rank's node ({@link RankWorld#nodes}, as {@code PMI_process_mapping} counts
 * them): the proxies there (fence 0 of docs/protocol-v2.md 5.7) and, on the launcher's node,
 * the launcher's own server of rank 0. MPICH shares its shared-memory segment among the ranks
 * of a node this way, without a fence. Thread-safe.
 */
final class PmiNodeAttributes implements PmiFence.NodeAttributes {

    /** Sends one delivery to some proxies. */
    interface Nodes {
        void send(int number, byte[] pairs, Collection<InetSocketAddress> nodes);
    }

    private final long jobId;
    private final int[] nodeOf;
    private final Map<Integer, List<InetSocketAddress>> proxies = new HashMap<>();
    private final Nodes nodes;
    private final PmiServer local;
    private int delivered;

    /**
     * @param jobId the job
     * @param ranks placement of rank r at element r-1
     * @param nodes the proxies' side (the launcher's v2 session), or {@code null} for a job of one rank
     * @param local the launcher's PMI server, rank 0's
     */
    PmiNodeAttributes(long jobId, List<Placement> ranks, Nodes nodes, PmiServer local) {
        this.jobId = jobId;
        this.nodeOf = RankWorld.nodes(ranks);
        this.nodes = nodes;
        this.local = local;
        Map<Integer, Set<InetSocketAddress>> byNode = new HashMap<>();
        for (int r = 1; r < nodeOf.length; r++) {
            Placement p = ranks.get(r - 1);
            byNode.computeIfAbsent(nodeOf[r], m -> new LinkedHashSet<>())
                    .add(new InetSocketAddress(p.address(), p.port()));
        }
        byNode.forEach((m, set) -> proxies.put(m, new ArrayList<>(set)));
    }

    @Override
    public void put(int rank, String key, String value) {
        if (rank < 0 || rank >= nodeOf.length) {
            return;
        }
        byte[] pairs = PmiSpace.encode(Map.of(key, value), Integer.MAX_VALUE).get(0);
        int number;
        synchronized (this) {
            number = delivered++;
        }
        int node = nodeOf[rank];
        List<InetSocketAddress> to = proxies.getOrDefault(node, List.of());
        if (nodes != null && !to.isEmpty()) {
            nodes.send(number, pairs, to);
        }
        if (node == 0 && rank != 0) {
            local.onFence(jobId, 0, number, 1, java.nio.ByteBuffer.wrap(pairs), 0, pairs.length);
        }
    }
}
