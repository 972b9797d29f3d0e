package org.mpiproxy.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import picocli.CommandLine.Option;

/** Where a job's ranks go: the options {@code run} and {@code status} share. */
final class PlacementOptions {

    /** Environment variable naming a node map file when {@code --node-map} is not given. */
    static final String NODE_MAP_ENV = "MPIPROXY_NODE_MAP";

    /** The node of a job given no nodes outside Slurm: this machine's proxy, at its default address. */
    static final String LOCAL_NODE = "127.0.0.1";

    @Option(names = {"--hostfile", "-hostfile", "-f", "-machinefile"}, paramLabel = "FILE",
            description = "Hostfile: FreeNOS lines <ipv4>:<port>:<coreId> (line n runs rank n) or Hydra lines host[:n]"
                    + " (n ranks on host). Without --hostfile and --hosts: the Slurm allocation"
                    + " (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE); outside Slurm, this node: its proxy at "
                    + LOCAL_NODE + " (--port) with one slot per core, as mpiexec.")
    Path hostfile;

    @Option(names = {"--hosts", "-hosts", "-host"}, paramLabel = "LIST",
            description = "Nodes and their rank counts: host[:n],...")
    String hosts;

    @Option(names = "--node-map", paramLabel = "FILE",
            description = "Node names to proxy addresses, lines NAME ADDRESS[:PORT] (default: $" + NODE_MAP_ENV
                    + "; names not in it are resolved by DNS).")
    Path nodeMap;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "6660",
            description = "UDP port of the proxies where the node map names none (default: ${DEFAULT-VALUE}).")
    int port;

    /**
     * @param env           the environment (Slurm variables, node map)
     * @param worldSize     requested world size, 0 = from the source
     * @param ranksPerNode  ranks per node, 0 = from the source
     * @param bindCores     whether ranks are bound to their slot's core
     * @param oversubscribe whether a world larger than the slots may wrap around them
     * @return the placements of ranks 1..N-1
     * @throws IllegalArgumentException for conflicting or malformed input
     * @throws IOException when a file cannot be read
     */
    List<Placement> plan(Function<String, String> env, int worldSize, int ranksPerNode, boolean bindCores,
            boolean oversubscribe) throws IOException {
        Source source = source(env, ranksPerNode);
        if (source.freeNos() != null) {
            return WorldPlan.fromPlacements(source.freeNos(), worldSize, oversubscribe);
        }
        return WorldPlan.fromSlots(source.nodes(), ranksPerNode, worldSize, bindCores, nodeMap(env), oversubscribe);
    }

    /**
     * @param env the environment (Slurm variables, node map)
     * @return one placement per node the options name (core 0; FreeNOS lines as written)
     * @throws IllegalArgumentException for conflicting or malformed input
     * @throws IOException when a file cannot be read
     */
    List<Placement> nodes(Function<String, String> env) throws IOException {
        Source source = source(env, 0);
        if (source.freeNos() != null) {
            return source.freeNos();
        }
        NodeMap map = nodeMap(env);
        return source.nodes().stream().map(n -> {
            NodeMap.Address a = map.resolve(n.name());
            return new Placement(a.address(), a.port(), 0, n.name());
        }).toList();
    }

    /** FreeNOS placements, or the node slots of the other sources. */
    private record Source(List<Placement> freeNos, List<NodeSlots> nodes) {
    }

    private Source source(Function<String, String> env, int ranksPerNode) throws IOException {
        if (hostfile != null && hosts != null) {
            throw new IllegalArgumentException("give --hostfile or --hosts, not both");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is not in 1-65535");
        }
        if (hostfile != null) {
            Hostfiles.Content content = Hostfiles.read(hostfile);
            if (content.isFreeNos()) {
                if (ranksPerNode > 0) {
                    throw new IllegalArgumentException("--ppn does not apply to a FreeNOS hostfile (one rank per line)");
                }
                return new Source(content.placements(), null);
            }
            if (content.nodes().isEmpty()) {
                throw new IllegalArgumentException("hostfile " + hostfile + " names no nodes");
            }
            return new Source(null, content.nodes());
        }
        if (hosts != null) {
            return new Source(null, Hostfiles.parseHostList(hosts));
        }
        if (SlurmAllocation.isPresent(env)) {
            return new Source(null, SlurmAllocation.fromEnvironment(env));
        }
        return new Source(null, List.of(localNode()));
    }

    /** Takes the files the options name from the run's working directory. */
    void resolveFiles(java.util.function.UnaryOperator<Path> resolve) {
        hostfile = resolve.apply(hostfile);
        nodeMap = resolve.apply(nodeMap);
    }

    /** @return whether no option and no Slurm allocation names nodes: the job runs on this node */
    boolean local(Function<String, String> env) {
        return hostfile == null && hosts == null && !SlurmAllocation.isPresent(env);
    }

    /** @return this node: its proxy at {@value #LOCAL_NODE}, a slot per core this launcher may use */
    static NodeSlots localNode() {
        return new NodeSlots(LOCAL_NODE, Math.min(Runtime.getRuntime().availableProcessors(), Hostfiles.MAX_SLOTS));
    }

    private NodeMap nodeMap(Function<String, String> env) throws IOException {
        Path file = nodeMap;
        if (file == null) {
            String fromEnv = env.apply(NODE_MAP_ENV);
            file = fromEnv == null || fromEnv.isBlank() ? null : Path.of(fromEnv);
        }
        Map<String, NodeMap.Address> entries = file == null ? Map.of() : NodeMap.read(file);
        return new NodeMap(entries, port, NodeMap.SYSTEM_DNS);
    }
}
