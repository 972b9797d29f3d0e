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

import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2StatusDescriptor;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code mpiproxy status}: which nodes' proxies answer, whether a job's launcher and rank 0 still
 * run, and over v2 each rank of the job on each node.
 */
@Command(name = "status", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Shows whether the nodes' proxies answer (nodes from --job-file, --hostfile, --hosts or the"
                + " Slurm allocation) and, with --job-file, whether the job's launcher and rank 0 run.",
            "Over v2 (the default) with --job ID (or a v2 job file) every node lists the job's ranks it has: rank,"
                + " state (starting, running, terminating, exited, failed, finished), pid, core and exit status"
                + " (code, or 128 + signal); a node that does not know the job says so. Any holder of the cluster"
                + " key may ask. Over v2 a proxy answers only a request signed with the cluster key; over v1 any"
                + " proxy answers, and lists no ranks (use the node's console, mpi:jobs).",
            "For a job that ended (its file records the end) it prints the final state, each rank's exit status"
                + " and ENDED, asks no node, and exits 0.",
            "Exit status: 0 when every proxy answered (also when one does not know the job), 1 otherwise, 2 for"
                + " bad usage."})
final class StatusCommand implements Callable<Integer> {

    @Option(names = "--job-file", paramLabel = "FILE", description = "A job file written by 'mpiproxy run --job-file'.")
    Path jobFile;

    @Option(names = "--job", paramLabel = "ID",
            description = "The v2 job id (16 hexadecimal digits, as 'mpiproxy run' prints it and rank 0 gets in"
                    + " MPIPROXY_JOB_ID): list its ranks on the nodes.")
    String job;

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
        long jobId = 0;
        try {
            if (this.job != null) {
                jobId = parseJobId(this.job);
            }
            if (jobFile != null) {
                JobFile job = JobFile.read(jobFile);
                if (job.end() != null) {
                    return ended(out, job, jobFile);
                }
                protocol = job.protocol();
                keySpec = job.keySpec();
                if (job.v2()) {
                    out.println("job " + JobRunner.Job.hex(job.jobId()) + " (v2)");
                    jobId = jobId != 0 ? jobId : job.jobId();
                }
                out.println("launcher pid " + job.launcherPid() + ": " + (job.launcherRuns() ? "running"
                        : "not running (it ended without recording the job's end, e.g. killed): asking the nodes"));
                out.println("rank 0 pid " + job.rankZeroPid() + ": " + (job.rankZero().isPresent() ? "running"
                        : "not running"));
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
        if (this.job != null && !protocol.equals("v2")) {
            launch.err().println("mpiproxy: --job needs --protocol v2 (v1 has no status request)");
            return 2;
        }
        Map<InetSocketAddress, Prober.Answer> answered;
        if (protocol.equals("v2") && jobId != 0) {
            try {
                // without the cluster key: the job's own key, from the local proxy (docs/protocol-v2.md 4.2)
                return ranks(out, nodes, jobId, LauncherIdentity.forJob(keySpec, keyFile, launch.env(), jobId,
                        ranks.isEmpty() ? null : ranks.get(0)));
            } catch (IllegalArgumentException e) {
                launch.err().println("mpiproxy: " + e.getMessage());
                return 2;
            }
        }
        if (protocol.equals("v2")) {
            try {
                String spec = keySpec != null ? keySpec : LauncherIdentity.keySpec(keyFile, launch.env());
                if (spec == null) {
                    throw new IllegalArgumentException("no v2 key file: give --key-file FILE (the cluster's key, as in"
                            + " every node's etc/mpiproxy.key) or set " + V2Control.KEY_FILE_ENV + "; without it,"
                            + " --job ID asks about one of this user's jobs");
                }
                answered = V2Control.probe(new ArrayList<>(nodes.keySet()), V2Control.keys(spec),
                        Duration.ofMillis(Math.max(1, waitMillis)));
            } catch (IllegalArgumentException e) {
                launch.err().println("mpiproxy: " + e.getMessage());
                return 2;
            }
        } else {
            answered = V1Control.probe(new ArrayList<>(nodes.keySet()), Duration.ofMillis(Math.max(1, waitMillis)));
        }
        int down = 0;
        for (Map.Entry<InetSocketAddress, Prober.Answer> e : answered.entrySet()) {
            String name = nodes.get(e.getKey());
            String address = e.getKey().getAddress().getHostAddress() + ":" + e.getKey().getPort();
            Prober.Answer a = e.getValue();
            out.println("node " + (name.equals(e.getKey().getAddress().getHostAddress()) ? address
                    : name + " (" + address + ")") + ": " + (a.answered() ? "proxy answers (" + protocol
                    + (protocol.equals("v2") ? ", key accepted" : "") + ")" : "no answer"
                    + (a == Prober.Answer.SILENT ? "" : " (" + a.problem() + ")")));
            down += a.answered() ? 0 : 1;
        }
        return down == 0 ? 0 : 1;
    }

    /** Asks every node for the job's ranks and prints them; returns the exit status. */
    private int ranks(PrintStream out, Map<InetSocketAddress, String> nodes, long jobId, LauncherIdentity identity)
            throws java.io.IOException {
        Duration wait = Duration.ofMillis(Math.max(1, waitMillis));
        String refused = identity.credential() == null ? null
                : identity.credential().presentTo(nodes.keySet(), wait);
        if (refused != null) {
            launch.err().println("mpiproxy: " + refused);
            return 1;
        }
        Map<InetSocketAddress, V2Control.NodeStatus> answers = V2Control.status(new ArrayList<>(nodes.keySet()), jobId,
                identity.keys(), identity.credential(), wait);
        String hex = JobRunner.Job.hex(jobId);
        List<String[]> rows = new ArrayList<>();
        int down = 0;
        for (Map.Entry<InetSocketAddress, V2Control.NodeStatus> e : answers.entrySet()) {
            String node = nodeText(nodes.get(e.getKey()), e.getKey());
            V2Control.NodeStatus s = e.getValue();
            if (!s.answered) {
                out.println("node " + node + ": no answer (proxy down, unreachable, or another cluster key)");
                down++;
            } else if (s.unknownJob) {
                out.println("node " + node + ": job " + hex + " is not known on this node");
            } else if (s.result != MpiErrors.SUCCESS) {
                out.println("node " + node + ": refused with " + MpiErrors.name(s.result));
            } else {
                out.println("node " + node + ": " + s.ranks.size() + (s.ranks.size() == 1 ? " rank" : " ranks")
                        + " of job " + hex);
                for (V2Control.RankState r : s.ranks) {
                    rows.add(new String[] {Long.toString(r.rank()), node, V2StatusDescriptor.stateName(r.state()),
                        r.pid() == 0 ? "-" : Long.toString(r.pid()), Integer.toString(r.core()),
                        exitText(r.exitStatus())});
                }
            }
        }
        if (!rows.isEmpty()) {
            rows.sort(java.util.Comparator.comparingLong(r -> Long.parseLong(r[0])));
            rows.add(0, new String[] {"RANK", "NODE", "STATE", "PID", "CORE", "EXIT"});
            int[] width = new int[6];
            for (String[] r : rows) {
                for (int i = 0; i < r.length; i++) {
                    width[i] = Math.max(width[i], r[i].length());
                }
            }
            for (String[] r : rows) {
                StringBuilder line = new StringBuilder();
                for (int i = 0; i < r.length; i++) {
                    line.append(i == r.length - 1 ? r[i] : String.format("%-" + (width[i] + 2) + "s", r[i]));
                }
                out.println(line.toString().stripTrailing());
            }
        }
        return down == 0 ? 0 : 1;
    }

    /** Prints the final state an ended job's file records, asking no node; returns 0. */
    private static int ended(PrintStream out, JobFile job, Path file) {
        out.println("job " + job.name(file) + " ENDED " + job.endText());
        List<Integer> statuses = job.end().rankStatuses();
        for (int r = 0; r < statuses.size(); r++) {
            int s = statuses.get(r);
            out.println("rank " + r + " (" + (r == 0 ? "here" : job.ranks().get(r - 1).toString()) + "): ENDED, "
                    + (s >= 0 ? "exit status " + exitText(s) : V1Control.describe(s)));
        }
        return 0;
    }

    static String exitText(int status) {
        if (status < 0) {
            return "-";
        }
        return status > 128 && status <= 128 + 64 ? status + " (signal " + (status - 128) + ")"
                : Integer.toString(status);
    }

    private static String nodeText(String name, InetSocketAddress address) {
        String text = address.getAddress().getHostAddress() + ":" + address.getPort();
        return name.equals(address.getAddress().getHostAddress()) ? text : name + " (" + text + ")";
    }

    private static long parseJobId(String text) {
        String hex = text.startsWith("0x") ? text.substring(2) : text;
        long id;
        try {
            id = hex.length() > 16 || hex.isEmpty() ? 0 : Long.parseUnsignedLong(hex, 16);
        } catch (NumberFormatException e) {
            id = 0;
        }
        if (id == 0) {
            throw new IllegalArgumentException("--job " + text + ": expected a job id of up to 16 hexadecimal"
                    + " digits, not 0");
        }
        return id;
    }

}
