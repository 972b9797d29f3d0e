package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.util.List;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** {@code mpi:jobs}: one row per rank of every job the proxy knows. */
@Service
@Command(scope = "mpi", name = "jobs", description = "Lists the MPI proxy's jobs, one row per rank: owner, "
        + "program, process, state, exit status and payload bytes in and out.")
public class ListJobsCommand extends MpiCommandSupport {

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Override
    protected Object doExecute(ProxyStatus status) {
        print(status.jobs(), System.out);
        return null;
    }

    void print(List<JobInfo> jobs, PrintStream out) {
        if (jobs.isEmpty()) {
            out.println("No jobs.");
            return;
        }
        ShellTable table = new ShellTable();
        table.column("Job");
        table.column("Proto");
        table.column("Owner");
        table.column("Rank").alignRight();
        table.column("Core").alignRight();
        table.column("Program");
        table.column("PID").alignRight();
        table.column("State");
        table.column("Exit").alignRight();
        table.column("In").alignRight();
        table.column("Out").alignRight();
        for (JobInfo job : jobs) {
            String id = String.format("%016x", job.jobId());
            if (job.ranks().isEmpty()) {
                table.addRow().addContent(id, job.protocol(), job.owner(), "-", "-", "-", "-", "-", "-", "-", "-");
            }
            for (RankInfo rank : job.ranks()) {
                table.addRow().addContent(id, job.protocol(), job.owner(), rank.rankId(), rank.coreId(),
                        rank.program(), rank.pid() < 0 ? "-" : Long.toString(rank.pid()), rank.state(),
                        rank.exitStatus() < 0 ? "-" : Integer.toString(rank.exitStatus()), rank.bytesIn(),
                        rank.bytesOut());
            }
        }
        table.print(out, !noFormat);
    }
}
