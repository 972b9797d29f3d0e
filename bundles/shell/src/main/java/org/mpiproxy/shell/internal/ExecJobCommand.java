package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** {@code mpi:exec}: starts a job on this node, the console acting as its v1 host (guarded by the command ACL). */
@Service
@Command(scope = "mpi", name = "exec", description = "Starts a job on this node for smoke tests: the console is the "
        + "job's host (rank 0) over loopback UDP, ranks 1..N run PROGRAM ARGS. When every rank has ended the job is "
        + "terminated and its channels removed; its output stays (mpi:output).")
public class ExecJobCommand extends MpiCommandSupport {

    @Option(name = "--ranks", aliases = "-n", description = "Number of ranks (default: one per --cores entry, else 1)")
    int ranks;

    @Option(name = "--cores", aliases = "-c", description = "Core of each rank, comma-separated, such as 0,1; "
            + "with --ranks and one core, every rank runs there (default 0)")
    String cores;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Argument(index = 0, name = "program", required = true, description = "Program in the program directory")
    @Completion(ProgramCompleter.class)
    String program;

    @Argument(index = 1, name = "args", required = false, multiValued = true, description = "The program's arguments")
    List<String> args;

    @Override
    protected Object doExecute(ProxyStatus status) throws Exception {
        JobInfo job = control().exec(program, args == null ? List.of() : args, cores(ranks, cores));
        print(job, System.out);
        return null;
    }

    /**
     * @return the core of each rank
     * @throws IllegalArgumentException on a bad count or core list
     */
    static List<Integer> cores(int ranks, String cores) {
        if (ranks < 0) {
            throw new IllegalArgumentException("--ranks " + ranks + " must be >= 1");
        }
        List<Integer> list = new ArrayList<>();
        if (cores != null && !cores.isBlank()) {
            for (String part : cores.split(",")) {
                try {
                    int core = Integer.parseInt(part.trim());
                    if (core < 0) {
                        throw new NumberFormatException();
                    }
                    list.add(core);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("--cores " + cores + ": '" + part.trim()
                            + "' is not a core number");
                }
            }
        } else {
            list.add(0);
        }
        if (ranks > 0 && list.size() == 1) {
            int core = list.get(0);
            list.clear();
            for (int r = 0; r < ranks; r++) {
                list.add(core);
            }
        } else if (ranks > 0 && list.size() != ranks) {
            throw new IllegalArgumentException("--ranks " + ranks + " but --cores names " + list.size() + " cores");
        }
        return list;
    }

    void print(JobInfo job, PrintStream out) {
        out.println("Job " + hex(job.jobId()) + " started (host " + job.owner() + ")");
        ShellTable table = new ShellTable();
        table.column("Rank").alignRight();
        table.column("Core").alignRight();
        table.column("Program");
        table.column("PID").alignRight();
        table.column("State");
        for (RankInfo r : job.ranks()) {
            table.addRow().addContent(r.rankId(), r.coreId(), r.program(), r.pid() < 0 ? "-" : Long.toString(r.pid()),
                    r.state());
        }
        table.print(out, !noFormat);
    }
}
