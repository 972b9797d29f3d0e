package org.mpiproxy.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Where each rank of a job sits, told to the rank in its environment: its rank and size and its
 * place among the ranks of its node, under the names of our library, MPICH, Open MPI and Slurm,
 * and which ranks share a node ({@value #PROCESS_MAPPING}, for MPICH's shared memory), rank 0
 * counted with the ranks of the launcher's node.
 */
final class RankWorld {

    /** The PMI key (and EXEC variable) that tells MPICH which ranks share a node. */
    static final String PROCESS_MAPPING = "PMI_process_mapping";

    /**
     * The ranks that share a rank's proxy, so its job directory ({@code 1-3,7}): the {@code mpi}
     * package's ranks talk to those through shared memory.
     */
    static final String NODE_RANKS = "MPIPROXY_NODE_RANKS";

    /**
     * The ranks' working directory, absolute ({@code -wdir}, else the launcher's), in every EXEC: where
     * the job's ranks belong. The proxies start ranks in their own working directory for now.
     */
    static final String WORKING_DIRECTORY = "MPIPROXY_WDIR";

    /** The MPIPROXY_* variables a job's ranks take from {@code -x}: settings of the library, not of the proxy. */
    static final java.util.Set<String> PASSED_ON = java.util.Set.of("MPIPROXY_TIMEOUT", "MPIPROXY_PAIR_RING_BYTES");

    private RankWorld() {
    }

    /** @return per proxy ({@code address:port}), its ranks as ranges, {@code 1-3,7} */
    static Map<String, String> nodeRanks(List<Placement> ranks) {
        Map<String, StringBuilder> lists = new java.util.HashMap<>();
        Map<String, Integer> last = new java.util.HashMap<>();
        Map<String, Integer> runStart = new java.util.HashMap<>();
        for (int r = 1; r <= ranks.size(); r++) {
            Placement p = ranks.get(r - 1);
            String node = p.address() + ":" + p.port();
            Integer previous = last.get(node);
            if (previous != null && previous == r - 1) {
                last.put(node, r);
                continue;
            }
            if (previous != null) {
                close(lists.get(node), runStart.get(node), previous);
            }
            lists.computeIfAbsent(node, k -> new StringBuilder());
            runStart.put(node, r);
            last.put(node, r);
        }
        Map<String, String> result = new java.util.HashMap<>();
        for (Map.Entry<String, StringBuilder> e : lists.entrySet()) {
            close(e.getValue(), runStart.get(e.getKey()), last.get(e.getKey()));
            result.put(e.getKey(), e.getValue().toString());
        }
        return result;
    }

    private static void close(StringBuilder b, int from, int to) {
        if (b.length() > 0) {
            b.append(',');
        }
        b.append(from);
        if (to > from) {
            b.append('-').append(to);
        }
    }

    /**
     * @param job   the job's variables ({@code -x}, {@code --export})
     * @param slurm whether Slurm's names are set too ({@link #variables(int, int, int, int, boolean)})
     * @return the environment of ranks 1..N-1 (element r-1): the job's variables, then where each
     *         rank sits among the ranks of its node
     */
    static List<Map<String, String>> environments(List<Placement> ranks, int size, Map<String, String> job,
                                                  boolean slurm) {
        Map<String, String> nodeRanks = nodeRanks(ranks);
        int[] nodes = nodes(ranks);
        LocalPlaces places = localPlaces(nodes);
        String mapping = processMapping(nodes);
        List<Map<String, String>> environments = new ArrayList<>(ranks.size());
        for (int r = 1; r < size; r++) {
            Placement p = ranks.get(r - 1);
            String node = p.address() + ":" + p.port();
            Map<String, String> env = new java.util.LinkedHashMap<>(job);
            // a proxy sets the MPIPROXY_* variables of a rank itself, but for the library's settings
            env.keySet().removeIf(name -> name.startsWith("MPIPROXY_") && !PASSED_ON.contains(name));
            env.putAll(variables(r, size, places.rank()[r], places.size()[r], slurm));
            env.put(NODE_RANKS, nodeRanks.get(node));
            if (mapping != null) {
                env.put(PROCESS_MAPPING, mapping);
            }
            environments.add(env);
        }
        return environments;
    }

    /**
     * @param ranks placement of rank r at element r-1
     * @param slurm also under Slurm's names
     * @return rank 0's place in the world and on its node, the launcher's: the first of the
     *         ranks there
     */
    static Map<String, String> rankZeroVariables(List<Placement> ranks, boolean slurm) {
        return variables(0, ranks.size() + 1, 0, localPlaces(nodes(ranks)).size()[0], slurm);
    }

    /**
     * @return rank {@code rank}'s place in the world and on its node, under the names programs of
     *         our library, MPICH and Open MPI read (a proxy sets the rank and size itself too)
     */
    static Map<String, String> variables(int rank, int size, int localRank, int localSize) {
        return variables(rank, size, localRank, localSize, true);
    }

    /**
     * @param slurm also under Slurm's names ({@code SLURM_PROCID}, {@code SLURM_LOCALID},
     *              {@code SLURM_NTASKS}, {@code SLURM_NPROCS}), as {@code srun} gives its tasks
     * @return rank {@code rank}'s place in the world and on its node
     */
    static Map<String, String> variables(int rank, int size, int localRank, int localSize, boolean slurm) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        String[][] names = {
            {"MPIPROXY_RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"},
            {"MPIPROXY_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "SLURM_NPROCS"},
            {"MPIPROXY_LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"},
            {"MPIPROXY_LOCAL_SIZE", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"}};
        int[] values = {rank, size, localRank, localSize};
        for (int i = 0; i < names.length; i++) {
            for (String name : names[i]) {
                if (slurm || !name.startsWith("SLURM_")) {
                    env.put(name, Integer.toString(values[i]));
                }
            }
        }
        return env;
    }

    /**
     * Whether this launcher runs inside a real Slurm job step ({@code srun ... mpiproxy run}): then
     * the {@code SLURM_*} variables of a task describe that step, and the ranks keep them as they
     * are. A batch script ({@code sbatch}), an allocation ({@code salloc}) or no Slurm at all is no
     * step; their ranks get Slurm's names for their own place.
     *
     * @param env the launcher's environment
     * @return {@code true} when {@code SLURM_STEP_ID} names a real step (a number below Slurm's
     *         reserved ids for the batch, extern and interactive steps)
     */
    static boolean inSlurmStep(Map<String, String> env) {
        String step = env.get("SLURM_STEP_ID");
        if (step == null) {
            return false;
        }
        try {
            long id = Long.parseLong(step.trim());
            return id >= 0 && id < 0xfffffff0L;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /**
     * Each rank's place among the ranks of its node, as Hydra gives it: {@code rank[r]}, from 0
     * in rank order, and {@code size[r]}, the ranks of that node.
     */
    record LocalPlaces(int[] rank, int[] size) {
    }

    /**
     * Which node each rank runs on, as Hydra counts hosts: ranks share a node when their proxies
     * share an address. Rank 0 runs where the launcher runs: on the node of the first rank whose
     * proxy's address is one of this machine's (127.0.0.1 for a local run, the first node of a
     * Slurm allocation), else on a node of its own. Nodes are numbered in the order they first
     * appear, rank 0's first.
     *
     * @param ranks placement of rank r at element r-1
     * @return the node of rank r at element r, 0..N-1
     */
    static int[] nodes(List<Placement> ranks) {
        String here = "";
        for (Placement p : ranks) {
            if (isLocal(p.address())) {
                here = p.address();
                break;
            }
        }
        Map<String, Integer> nodes = new java.util.HashMap<>();
        int[] node = new int[ranks.size() + 1];
        nodes.put(here, 0);
        for (int r = 1; r <= ranks.size(); r++) {
            node[r] = nodes.computeIfAbsent(ranks.get(r - 1).address(), k -> nodes.size());
        }
        return node;
    }

    /**
     * @param nodes the node of each rank, rank 0's first ({@link #nodes})
     * @return every rank's local rank and local size, rank 0 counted with the ranks of its node
     */
    static LocalPlaces localPlaces(int[] nodes) {
        Map<Integer, Integer> sizes = new java.util.HashMap<>();
        for (int n : nodes) {
            sizes.merge(n, 1, Integer::sum);
        }
        Map<Integer, Integer> seen = new java.util.HashMap<>();
        int[] rank = new int[nodes.length];
        int[] size = new int[nodes.length];
        for (int r = 0; r < nodes.length; r++) {
            rank[r] = seen.merge(nodes[r], 1, Integer::sum) - 1;
            size[r] = sizes.get(nodes[r]);
        }
        return new LocalPlaces(rank, size);
    }

    /**
     * Which ranks share a node, as MPICH reads it from its process manager (the PMI key
     * {@value #PROCESS_MAPPING}, Hydra's format {@code (vector,(node,nodes,ranks),...)} in rank
     * order), so that ranks on one node talk through shared memory: the nodes of
     * {@link #nodes}, which the local ranks and sizes count too.
     *
     * @param ranks placement of rank r at element r-1
     * @return the mapping, or {@code null} when it would be longer than a PMI value
     */
    static String processMapping(List<Placement> ranks) {
        return processMapping(nodes(ranks));
    }

    private static String processMapping(int[] node) {
        StringBuilder b = new StringBuilder("(vector");
        for (int r = 0; r < node.length; ) {
            int run = 1;
            while (r + run < node.length && node[r + run] == node[r]) {
                run++;
            }
            b.append(",(").append(node[r]).append(",1,").append(run).append(')');
            r += run;
        }
        b.append(')');
        return b.length() > org.mpiproxy.protocol.pmi.PmiSession.VALUE_MAX ? null : b.toString();
    }

    private static boolean isLocal(String address) {
        try {
            java.net.InetAddress a = java.net.InetAddress.getByName(address);
            return a.isLoopbackAddress() || a.isAnyLocalAddress() || java.net.NetworkInterface.getByInetAddress(a) != null;
        } catch (IOException e) {
            return false;
        }
    }
}
