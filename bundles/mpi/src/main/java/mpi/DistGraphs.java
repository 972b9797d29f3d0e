package mpi;

import java.nio.ByteBuffer;
import java.util.Arrays;

import org.mpiproxy.mpi.internal.engine.Collectives;
import org.mpiproxy.mpi.internal.engine.Communicator;
import org.mpiproxy.mpi.internal.engine.Kind;

/**
 * The bodies of {@link Intracomm#createDistGraph} and {@link Intracomm#createDistGraphAdjacent}:
 * their checks (Open MPI's: {@code MPI.ERR_ARG} for a negative degree or weight, a rank neither of
 * the communicator nor {@link MPI#PROC_NULL}, arrays too short), and for {@code createDistGraph}
 * the exchange that tells each rank the edges other ranks gave for it. A rank's edges come in
 * the order of the ranks that gave them, each rank's in its own order, so the edges between two
 * ranks are in the same order at both ends, as the neighbourhood collectives need. A graph made
 * without weights reads weight 1 on every edge.
 */
final class DistGraphs {

    /** Ints of an edge as it travels: source, destination, weight. */
    private static final int EDGE = 3;

    private DistGraphs() {
    }

    static GraphComm adjacent(Intracomm parent, Communicator c, int[] sources, int[] sourceWeights,
                              int[] destinations, int[] destWeights, boolean weighted) throws MPIException {
        String call = "createDistGraphAdjacent on " + parent.getName();
        if (sources == null || destinations == null) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + (sources == null ? "sources" : "destinations")
                    + " is null");
        }
        int[] in = weights(call, "sourceWeights", sourceWeights, sources.length, weighted);
        int[] out = weights(call, "destWeights", destWeights, destinations.length, weighted);
        ranks(call, "sources", sources, sources.length, c);
        ranks(call, "destinations", destinations, destinations.length, c);
        return GraphComm.distributed(parent, c.dup(),
                new int[][] {sources.clone(), in, destinations.clone(), out}, weighted);
    }

    static GraphComm create(Intracomm parent, Communicator c, int[] sources, int[] degrees, int[] destinations,
                            int[] weights, boolean weighted) throws MPIException {
        String call = "createDistGraph on " + parent.getName();
        if (sources == null || degrees == null || destinations == null) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + (sources == null ? "sources"
                    : degrees == null ? "degrees" : "destinations") + " is null");
        }
        if (degrees.length < sources.length) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + sources.length + " sources but " + degrees.length
                    + " degrees");
        }
        int edges = 0;
        for (int i = 0; i < sources.length; i++) {
            if (degrees[i] < 0) {
                throw new MPIException(MPI.ERR_ARG, call + ": degrees[" + i + "] = " + degrees[i] + " is negative");
            }
            edges += degrees[i];
        }
        ranks(call, "sources", sources, sources.length, c);
        ranks(call, "destinations", destinations, edges, c);
        int[] w = weights(call, "weights", weights, edges, weighted);
        return exchange(parent, c, sources, degrees, destinations, w, weighted);
    }

    /** @return the {@code count} weights, all 1 without weights */
    private static int[] weights(String call, String name, int[] weights, int count, boolean weighted)
            throws MPIException {
        if (!weighted) {
            int[] ones = new int[count];
            Arrays.fill(ones, 1);
            return ones;
        }
        if (weights == null || weights.length < count) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + name + " needs " + count + " entries, "
                    + (weights == null ? "it is null" : "it has " + weights.length));
        }
        for (int i = 0; i < count; i++) {
            if (weights[i] < 0) {
                throw new MPIException(MPI.ERR_ARG, call + ": " + name + "[" + i + "] = " + weights[i]
                        + " is negative");
            }
        }
        return Arrays.copyOf(weights, count);
    }

    private static void ranks(String call, String name, int[] ranks, int count, Communicator c)
            throws MPIException {
        if (ranks.length < count) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + name + " needs " + count + " entries, it has "
                    + ranks.length);
        }
        for (int i = 0; i < count; i++) {
            if ((ranks[i] < 0 && ranks[i] != MPI.PROC_NULL) || ranks[i] >= c.size()) {
                throw new MPIException(MPI.ERR_ARG, call + ": " + name + "[" + i + "] = " + ranks[i]
                        + " is no rank of 0.." + (c.size() - 1) + " nor MPI.PROC_NULL");
            }
        }
    }

    /** Each edge goes to its source and to its destination; each rank keeps those that start or end at it. */
    private static GraphComm exchange(Intracomm parent, Communicator c, int[] sources, int[] degrees,
                                      int[] destinations, int[] weights, boolean weighted) throws MPIException {
        int n = c.size();
        int[][] byRank = new int[n][];
        int[] counts = new int[n];
        for (int pass = 0; pass < 2; pass++) {
            Arrays.fill(counts, 0);
            for (int i = 0, e = 0; i < sources.length; i++) {
                for (int k = 0; k < degrees[i]; k++, e++) {
                    int s = sources[i];
                    int d = destinations[e];
                    if (s != MPI.PROC_NULL) {
                        put(byRank, counts, s, s, d, weights[e]);
                    }
                    if (d != MPI.PROC_NULL && d != s) {
                        put(byRank, counts, d, s, d, weights[e]);
                    }
                }
            }
            if (pass == 0) {
                for (int q = 0; q < n; q++) {
                    byRank[q] = new int[counts[q] * EDGE];
                }
            }
        }
        ByteBuffer sendCounts = Comm.heap(4 * n);
        int[] sendBytes = new int[n];
        int[] sendAt = new int[n];
        int total = 0;
        for (int q = 0; q < n; q++) {
            sendCounts.putInt(4 * q, counts[q]);
            sendBytes[q] = counts[q] * EDGE * 4;
            sendAt[q] = total;
            total += sendBytes[q];
        }
        ByteBuffer recvCounts = Comm.heap(4 * n);
        Collectives.allToAll(c, sendCounts, 4, recvCounts, Kind.INT);
        ByteBuffer send = Comm.heap(total);
        for (int q = 0; q < n; q++) {
            for (int x = 0; x < byRank[q].length; x++) {
                send.putInt(sendAt[q] + 4 * x, byRank[q][x]);
            }
        }
        int[] recvBytes = new int[n];
        int[] recvAt = new int[n];
        int received = 0;
        for (int q = 0; q < n; q++) {
            recvBytes[q] = recvCounts.getInt(4 * q) * EDGE * 4;
            recvAt[q] = received;
            received += recvBytes[q];
        }
        ByteBuffer recv = Comm.heap(received);
        Collectives.allToAllv(c, send, sendBytes, sendAt, recv, recvBytes, recvAt, Kind.INT);
        return GraphComm.distributed(parent, c.dup(), mine(recv, received / (4 * EDGE), c.rank()), weighted);
    }

    private static void put(int[][] byRank, int[] counts, int rank, int s, int d, int w) {
        if (byRank[rank] != null) {
            int at = counts[rank] * EDGE;
            byRank[rank][at] = s;
            byRank[rank][at + 1] = d;
            byRank[rank][at + 2] = w;
        }
        counts[rank]++;
    }

    /** @return the sources, their weights, the destinations and theirs of the edges at {@code rank}, in order */
    private static int[][] mine(ByteBuffer edges, int count, int rank) {
        int[][] dist = {new int[count], new int[count], new int[count], new int[count]};
        int in = 0;
        int out = 0;
        for (int e = 0; e < count; e++) {
            int s = edges.getInt(e * EDGE * 4);
            int d = edges.getInt(e * EDGE * 4 + 4);
            int w = edges.getInt(e * EDGE * 4 + 8);
            if (s == rank) {
                dist[2][out] = d;
                dist[3][out++] = w;
            }
            if (d == rank) {
                dist[0][in] = s;
                dist[1][in++] = w;
            }
        }
        return new int[][] {Arrays.copyOf(dist[0], in), Arrays.copyOf(dist[1], in), Arrays.copyOf(dist[2], out),
            Arrays.copyOf(dist[3], out)};
    }
}
