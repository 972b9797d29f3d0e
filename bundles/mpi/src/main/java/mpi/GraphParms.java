package mpi;

/**
 * A graph communicator's graph ({@link GraphComm#getDims}), as {@link Intracomm#createGraph} took
 * it: node i's neighbours are {@code getEdge(j)} for {@code getIndex(i - 1) <= j < getIndex(i)}
 * (from 0 for node 0).
 */
public final class GraphParms {

    private final int[] index;
    private final int[] edges;

    /**
     * @param index the running sums of the nodes' degrees
     * @param edges the nodes' neighbours, node after node
     */
    protected GraphParms(int[] index, int[] edges) {
        this.index = index;
        this.edges = edges;
    }

    /** @return the number of nodes */
    public int getIndexCount() {
        return index.length;
    }

    /** @return the sum of the degrees of nodes 0..i */
    public int getIndex(int i) {
        return index[i];
    }

    /** @return the number of edges */
    public int getEdgeCount() {
        return edges.length;
    }

    /** @return edge {@code i}: a neighbour of the node whose range of {@link #getIndex} holds {@code i} */
    public int getEdge(int i) {
        return edges[i];
    }
}
