package org.mpiproxy.cli;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code mpiproxy status}: which nodes' proxies answer, and whether a job's launcher and rank 0 still run. */
@Command(name = "status", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Shows whether the nodes' proxies answer (nodes from --job-file, --hostfile, --hosts or the"
                + " Slurm allocation) and, with --job-file, whether the job's launcher and rank 0 run.",
            "Over v2 (the default) a proxy answers only a request signed with the cluster key; over v1 any proxy"
                + " answers. A proxy does not list its jobs to a remote host: use the node's console (mpi:jobs) for"
                + " ranks.",
            "Exit status: 0 when every proxy answered, 1 otherwise, 2 for bad usage."})
final class StatusCommand implements Callable<Integer> {

    @Option(names = "--job-file", paramLabel = "FILE", description = "A job file written by 'mpiproxy run --job-file'.")
    Path jobFile;

    @Mixin
    PlacementOptions placement;

    @Option(names = "--protocol", paramLabel = "v1|v2", defaultValue = "v2",
            description = "How to probe the proxies (default: ${DEFAULT-VALUE}; a job file names its own).")
    String protocol;

    @Option(names = "--key-file", paramLabel = "FILE", description = "The cluster's v2 key (default as for run).")
    Path keyFile;

    @Option(names = "--wait", paramLabel = "MILLISECONDS", defaultValue = "2000",
            description = "How long to wait for the proxies' answers (default: ${DEFAULT-VALUE}).")
    long waitMillis;

    private final RunCommand.Launch launch;

    StatusCommand(RunCommand.Launch launch) {
        this.launch = launch;
    }

    @Override
    public Integer call() throws Exception {
        PrintStream out = launch.out();
        List<Placement> ranks;
        String keySpec = null;
        try {
            if (jobFile != null) {
                JobFile job = JobFile.read(jobFile);
                protocol = job.protocol();
                keySpec = job.keySpec();
                if (job.v2()) {
                    out.println("job " + JobRunner.Job.hex(job.jobId()) + " (v2)");
                }
                out.println("launcher pid " + job.launcherPid() + ": " + alive(job.launcherPid()));
                out.println("rank 0 pid " + job.rankZeroPid() + ": " + alive(job.rankZeroPid()));
                ranks = job.ranks();
            } else {
                ranks = placement.nodes(launch.env()::get);
            }
        } catch (IllegalArgumentException | java.io.IOException e) {
            launch.err().println("mpiproxy: " + e.getMessage());
            return 2;
        }
        Map<InetSocketAddress, String> nodes = new LinkedHashMap<>();
        for (Placement p : ranks) {
            nodes.putIfAbsent(new InetSocketAddress(p.address(), p.port()), p.node());
        }
        if (!protocol.equals("v1") && !protocol.equals("v2")) {
            launch.err().println("mpiproxy: --protocol " + protocol + ": expected v1 or v2");
            return 2;
        }
        Map<InetSocketAddress, Boolean> answered;
        if (protocol.equals("v2")) {
            try {
                answered = V2Control.probe(new ArrayList<>(nodes.keySet()),
                        V2Control.keys(keySpec != null ? keySpec : V2Control.keySpec(keyFile, launch.env())),
                        Duration.ofMillis(Math.max(1, waitMillis)));
            } catch (IllegalArgumentException e) {
                launch.err().println("mpiproxy: " + e.getMessage());
                return 2;
            }
        } else {
            answered = V1Control.probe(new ArrayList<>(nodes.keySet()), Duration.ofMillis(Math.max(1, waitMillis)));
        }
        int down = 0;
        for (Map.Entry<InetSocketAddress, Boolean> e : answered.entrySet()) {
            String name = nodes.get(e.getKey());
            String address = e.getKey().getAddress().getHostAddress() + ":" + e.getKey().getPort();
            out.println("node " + (name.equals(e.getKey().getAddress().getHostAddress()) ? address
                    : name + " (" + address + ")") + ": " + (e.getValue() ? "proxy answers (" + protocol + (protocol.equals("v2") ? ", key accepted" : "")
                    + ")" : "no answer"));
            down += e.getValue() ? 0 : 1;
        }
        return down == 0 ? 0 : 1;
    }

    private static String alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) ? "running" : "not running";
    }
}
