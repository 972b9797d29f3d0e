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
            "Over v1 a proxy cannot list its jobs to a remote host: use the node's console (mpi:jobs) for ranks.",
            "Exit status: 0 when every proxy answered, 1 otherwise, 2 for bad usage."})
final class StatusCommand implements Callable<Integer> {

    @Option(names = "--job-file", paramLabel = "FILE", description = "A job file written by 'mpiproxy run --job-file'.")
    Path jobFile;

    @Mixin
    PlacementOptions placement;

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
        try {
            if (jobFile != null) {
                JobFile job = JobFile.read(jobFile);
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
        Map<InetSocketAddress, Boolean> answered = V1Control.probe(new ArrayList<>(nodes.keySet()),
                Duration.ofMillis(Math.max(1, waitMillis)));
        int down = 0;
        for (Map.Entry<InetSocketAddress, Boolean> e : answered.entrySet()) {
            String name = nodes.get(e.getKey());
            String address = e.getKey().getAddress().getHostAddress() + ":" + e.getKey().getPort();
            out.println("node " + (name.equals(e.getKey().getAddress().getHostAddress()) ? address
                    : name + " (" + address + ")") + ": " + (e.getValue() ? "proxy answers (v1)" : "no answer"));
            down += e.getValue() ? 0 : 1;
        }
        return down == 0 ? 0 : 1;
    }

    private static String alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) ? "running" : "not running";
    }
}
