package org.mpiproxy.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Places a job's ranks. Rank 0 always runs here, where the launcher runs.
 * <ul>
 * <li>FreeNOS placements (one per hostfile line) are ranks 1, 2, ... in order, as in the
 * original: the world size defaults to lines + 1.</li>
 * <li>Node slots (Hydra hostfiles, {@code --hosts}, Slurm) are laid out node by node; rank 0
 * takes the first slot (the launcher runs on the first node, as under Slurm), rank r takes
 * slot r. The world size defaults to the number of slots.</li>
 * </ul>
 * A larger world than the placements or slots is refused unless over-subscription is asked
 * for ({@code --oversubscribe}, as Open MPI): then it wraps around them, several ranks sharing
 * a slot's core. With core binding, a rank's core is
 * its slot's index on its node (slot 0 is the proxy's own core, core 0); without it every
 * rank runs on core 0, the proxy's local launcher.
 */
public final class WorldPlan {

    /** The largest world: rank ids are 16-bit on the wire. */
    public static final int MAX_WORLD = 65535;

    private WorldPlan() {
    }

    /**
     * @param placements FreeNOS placements in rank order
     * @param worldSize  requested world size, or 0 for lines + 1
     * @param oversubscribe whether a world larger than lines + 1 may wrap around the lines
     * @return the placements of ranks 1..N-1
     * @throws IllegalArgumentException for an empty list or a bad world size
     */
    public static List<Placement> fromPlacements(List<Placement> placements, int worldSize, boolean oversubscribe) {
        if (placements.isEmpty()) {
            throw new IllegalArgumentException("the hostfile names no nodes");
        }
        int size = worldSize == 0 ? placements.size() + 1 : worldSize;
        checkSize(size);
        if (size > placements.size() + 1 && !oversubscribe) {
            throw oversubscribed(size, placements.size() + 1, "the hostfile's " + placements.size()
                    + (placements.size() == 1 ? " line" : " lines") + " and rank 0");
        }
        List<Placement> ranks = new ArrayList<>(size - 1);
        for (int r = 1; r < size; r++) {
            ranks.add(placements.get((r - 1) % placements.size()));
        }
        return ranks;
    }

    /**
     * @param nodes          the nodes with their slots, in order
     * @param ranksPerNode   replaces every node's slot count when &gt; 0
     * @param worldSize      requested world size, or 0 for the number of slots
     * @param bindCores      whether a rank's core is its slot's index on the node
     * @param map            resolves node names to proxies
     * @param oversubscribe  whether a world larger than the slots may wrap around them
     * @return the placements of ranks 1..N-1
     * @throws IllegalArgumentException for no nodes, a bad world size, an unknown node or a
     *                                  world larger than the slots without {@code oversubscribe}
     */
    public static List<Placement> fromSlots(List<NodeSlots> nodes, int ranksPerNode, int worldSize, boolean bindCores,
            NodeMap map, boolean oversubscribe) {
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("no nodes to run on");
        }
        List<Placement> slots = new ArrayList<>();
        for (NodeSlots node : nodes) {
            NodeMap.Address address = map.resolve(node.name());
            int n = ranksPerNode > 0 ? ranksPerNode : node.slots();
            for (int s = 0; s < n; s++) {
                slots.add(new Placement(address.address(), address.port(), bindCores ? s : 0, node.name()));
                if (slots.size() > MAX_WORLD) {
                    throw new IllegalArgumentException("more than " + MAX_WORLD + " slots");
                }
            }
        }
        int size = worldSize == 0 ? slots.size() : worldSize;
        checkSize(size);
        if (size > slots.size() && !oversubscribe) {
            throw oversubscribed(size, slots.size(), "the " + slots.size() + (slots.size() == 1 ? " slot" : " slots")
                    + " of " + slotList(nodes, ranksPerNode));
        }
        List<Placement> ranks = new ArrayList<>(size - 1);
        for (int r = 1; r < size; r++) {
            ranks.add(slots.get(r % slots.size()));
        }
        return ranks;
    }

    private static IllegalArgumentException oversubscribed(int size, int capacity, String what) {
        return new IllegalArgumentException("-n " + size + " is more ranks than " + what + " (" + capacity
                + "); give more slots, or --oversubscribe to put several ranks on one slot");
    }

    private static String slotList(List<NodeSlots> nodes, int ranksPerNode) {
        StringBuilder text = new StringBuilder();
        for (NodeSlots node : nodes) {
            if (text.length() > 60) {
                return text.append(",...").toString();
            }
            text.append(text.length() == 0 ? "" : ",").append(node.name()).append(':')
                    .append(ranksPerNode > 0 ? ranksPerNode : node.slots());
        }
        return text.toString();
    }

    private static void checkSize(int size) {
        if (size < 1 || size > MAX_WORLD) {
            throw new IllegalArgumentException("world size " + size + " is not in 1-" + MAX_WORLD);
        }
    }
}
