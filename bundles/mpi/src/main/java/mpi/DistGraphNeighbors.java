package mpi;

/**
 * A distributed graph as one rank sees it ({@link GraphComm#getDistGraphNeighbors}): the ranks
 * of its edges in (sources) and out (destinations), in the order the neighbourhood collectives
 * use, with their weights.
 */
public final class DistGraphNeighbors {

    private final int[] sources;
    private final int[] sourceWeights;
    private final int[] destinations;
    private final int[] destWeights;
    private final boolean weighted;

    /**
     * @param sources       the ranks of the edges into this process
     * @param sourceWeights their weights
     * @param destinations  the ranks of the edges out of it
     * @param destWeights   their weights
     * @param weighted      whether the graph was made with weights
     */
    protected DistGraphNeighbors(int[] sources, int[] sourceWeights, int[] destinations, int[] destWeights,
                                 boolean weighted) {
        this.sources = sources;
        this.sourceWeights = sourceWeights;
        this.destinations = destinations;
        this.destWeights = destWeights;
        this.weighted = weighted;
    }

    /** @return the number of edges into this process */
    public int getInDegree() {
        return sources.length;
    }

    /** @return the number of edges out of this process */
    public int getOutDegree() {
        return destinations.length;
    }

    /** @return {@code false} when the graph was made without weights (then every weight reads 1) */
    public boolean isWeighted() {
        return weighted;
    }

    /** @return the rank edge {@code i} into this process comes from */
    public int getSource(int i) {
        return sources[i];
    }

    /** @return the weight of edge {@code i} into this process */
    public int getSourceWeight(int i) {
        return sourceWeights[i];
    }

    /** @return the rank edge {@code i} out of this process goes to */
    public int getDestination(int i) {
        return destinations[i];
    }

    /** @return the weight of edge {@code i} out of this process */
    public int getDestinationWeight(int i) {
        return destWeights[i];
    }
}
