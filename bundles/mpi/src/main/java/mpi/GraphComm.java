package mpi;

import java.util.Arrays;

import org.mpiproxy.mpi.internal.engine.Communicator;

/**
 * An intra-communicator with a graph attached, as in Open MPI's bindings one class for both
 * kinds ({@link #getTopology}): a graph ({@link MPI#GRAPH}, {@link Intracomm#createGraph}), every
 * node's neighbours known to every rank, or a distributed graph ({@link MPI#DIST_GRAPH},
 * {@link Intracomm#createDistGraph}, {@link Intracomm#createDistGraphAdjacent}), each rank knowing
 * the edges into and out of it with their weights. Ranks are never reordered ({@code reorder}
 * is accepted and changes nothing, as MPI allows). The neighbourhood collectives
 * ({@link Comm#neighborAllGather} and the others) exchange along the edges in their order.
 */
public final class GraphComm extends Intracomm {

    private static final int[][] NO_EDGES = {{}, {}, {}, {}};

    private final int kind;
    /** A graph's running sums of degrees and its edges; empty for a distributed graph. */
    private final int[] index;
    private final int[] edges;
    /** A distributed graph's edges into and out of this rank; empty for a graph. */
    private final int[] sources;
    private final int[] sourceWeights;
    private final int[] destinations;
    private final int[] destWeights;
    private final boolean weighted;

    private GraphComm(Communicator comm, String name, int kind, int[] index, int[] edges, int[][] dist,
                      boolean weighted) {
        super(comm, name);
        this.kind = kind;
        this.index = index;
        this.edges = edges;
        this.sources = dist[0];
        this.sourceWeights = dist[1];
        this.destinations = dist[2];
        this.destWeights = dist[3];
        this.weighted = weighted;
    }

    /**
     * The body of {@link Intracomm#createGraph}: the first {@code index.length} ranks of
     * {@code parent}, in their order.
     *
     * @return the graph, or a null communicator ({@link #isNull}) for a rank beyond it and for
     *         every rank when the graph has no node
     */
    static GraphComm create(Intracomm parent, Communicator c, int[] index, int[] edges) throws MPIException {
        String call = "createGraph on " + parent.getName();
        int nnodes = checkGraph(call, c, index, edges);
        if (nnodes == 0) {
            return new GraphComm(null, "MPI_COMM_NULL", MPI.GRAPH, new int[0], new int[0], NO_EDGES, false);
        }
        int rank = c.rank();
        Communicator graph = c.split(rank < nnodes ? 0 : MPI.UNDEFINED, rank);
        if (graph == null) {
            return new GraphComm(null, "MPI_COMM_NULL", MPI.GRAPH, new int[0], new int[0], NO_EDGES, false);
        }
        return parent.inheriting(new GraphComm(graph, parent.getName() + " (graph of " + nnodes + ")", MPI.GRAPH,
                index.clone(), Arrays.copyOf(edges, index[nnodes - 1]), NO_EDGES, false));
    }

    /** @return the number of nodes of a valid graph of at most {@code c.size()} nodes */
    private static int checkGraph(String call, Communicator c, int[] index, int[] edges) throws MPIException {
        if (index == null || edges == null) {
            throw new MPIException(MPI.ERR_ARG, call + ": " + (index == null ? "index" : "edges") + " is null");
        }
        int nnodes = index.length;
        if (nnodes > c.size()) {
            throw new MPIException(MPI.ERR_ARG, call + ": a graph of " + nnodes + " nodes on " + c.size() + " ranks");
        }
        for (int i = 0; i < nnodes; i++) {
            int before = i == 0 ? 0 : index[i - 1];
            if (index[i] < before) {
                throw new MPIException(MPI.ERR_ARG, call + ": index[" + i + "] = " + index[i] + " is below "
                        + (i == 0 ? "0" : "index[" + (i - 1) + "] = " + before) + " (a negative degree)");
            }
        }
        int count = nnodes == 0 ? 0 : index[nnodes - 1];
        if (edges.length < count) {
            throw new MPIException(MPI.ERR_ARG, call + ": index counts " + count + " edges, edges has "
                    + edges.length);
        }
        for (int j = 0; j < count; j++) {
            if (edges[j] < 0 || edges[j] >= nnodes) {
                throw new MPIException(MPI.ERR_ARG, call + ": edges[" + j + "] = " + edges[j] + " is no node of 0.."
                        + (nnodes - 1));
            }
        }
        return nnodes;
    }

    /**
     * A distributed graph on {@code made}, a communicator of the parent's ranks in their order.
     *
     * @param dist the sources, their weights, the destinations and their weights
     */
    static GraphComm distributed(Intracomm parent, Communicator made, int[][] dist, boolean weighted)
            throws MPIException {
        return parent.inheriting(new GraphComm(made, parent.getName() + " (dist graph)", MPI.DIST_GRAPH, new int[0],
                new int[0], dist, weighted));
    }

    @Override
    int topology() {
        return kind;
    }

    /** @return a communicator of the same graph whose messages never meet this one's (collective) */
    @Override
    public GraphComm dup() throws MPIException {
        return call(c -> inheriting(new GraphComm(c.dup(), getName() + " (dup)", kind, index, edges,
                new int[][] {sources, sourceWeights, destinations, destWeights}, weighted)));
    }

    /**
     * As {@link #dup}, under the name Open MPI's bindings give it.
     *
     * @throws RuntimeException carrying the {@link MPIException} where {@code dup} would throw one
     */
    @Override
    public GraphComm clone() {
        try {
            return dup();
        } catch (MPIException e) {
            throw new RuntimeException(e.getMessage(), e);
        }
    }

    /**
     * @return the graph: its index and edges, as {@code createGraph} took them
     * @throws MPIException {@code MPI.ERR_TOPOLOGY} on a distributed graph
     */
    public GraphParms getDims() throws MPIException {
        return call(c -> {
            graphOnly("getDims");
            return new GraphParms(index.clone(), edges.clone());
        });
    }

    /**
     * @param rank a rank of this communicator
     * @return its neighbours, in the order of its edges
     * @throws MPIException {@code MPI.ERR_RANK} for no rank of it, {@code MPI.ERR_TOPOLOGY} on a
     *                      distributed graph
     */
    public int[] getNeighbors(int rank) throws MPIException {
        return call(c -> {
            graphOnly("getNeighbors");
            if (rank < 0 || rank >= c.size()) {
                throw new MPIException(MPI.ERR_RANK, "getNeighbors on " + getName() + ": rank " + rank
                        + " is not in 0.." + (c.size() - 1));
            }
            return neighboursOf(rank);
        });
    }

    private int[] neighboursOf(int rank) {
        return Arrays.copyOfRange(edges, rank == 0 ? 0 : index[rank - 1], index[rank]);
    }

    private void graphOnly(String call) throws MPIException {
        if (kind != MPI.GRAPH) {
            throw new MPIException(MPI.ERR_TOPOLOGY, call + " on " + getName() + ": a distributed graph has no "
                    + "graph every rank knows (getDistGraphNeighbors gives its edges)");
        }
    }

    /**
     * @return the edges into and out of this process, with their weights
     * @throws MPIException {@code MPI.ERR_TOPOLOGY} on a graph that is not distributed
     */
    public DistGraphNeighbors getDistGraphNeighbors() throws MPIException {
        return call(c -> {
            if (kind != MPI.DIST_GRAPH) {
                throw new MPIException(MPI.ERR_TOPOLOGY, "getDistGraphNeighbors on " + getName() + ": it is a "
                        + "graph, not a distributed graph (getNeighbors gives its edges)");
            }
            return new DistGraphNeighbors(sources.clone(), sourceWeights.clone(), destinations.clone(),
                    destWeights.clone(), weighted);
        });
    }

    /**
     * Where this process would sit in a graph of {@code index.length} nodes made from this
     * communicator: its rank, as {@code createGraph} keeps them (local).
     *
     * @return this process's rank in such a graph, {@link MPI#UNDEFINED} when it is beyond it
     * @throws MPIException {@code MPI.ERR_ARG} for no node, more nodes than ranks or a graph
     *                      {@code createGraph} would refuse
     */
    public int map(int[] index, int[] edges) throws MPIException {
        return call(c -> {
            int nnodes = checkGraph("map on " + getName(), c, index, edges);
            if (nnodes < 1) {
                throw new MPIException(MPI.ERR_ARG, "map on " + getName() + ": a graph of no node");
            }
            return c.rank() < nnodes ? c.rank() : MPI.UNDEFINED;
        });
    }

    /** @return the ranks this process receives from and sends to in a neighbourhood collective, in order */
    int[][] neighbours(Communicator c) {
        if (kind == MPI.GRAPH) {
            int[] around = neighboursOf(c.rank());
            return new int[][] {around, around};
        }
        return new int[][] {sources, destinations};
    }
}
