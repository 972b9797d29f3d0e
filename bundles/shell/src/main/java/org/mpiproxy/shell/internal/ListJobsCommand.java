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

/**
 * {@code mpi:jobs}: one row per rank of every running job the proxy knows ({@code --all}: of the
 * finished ones too, which the proxy keeps for a while after their end).
 */
@Service
@Command(scope = "mpi", name = "jobs", description = "Lists the MPI proxy's running jobs, one row per rank: owner, "
        + "program, process, state, exit status and payload bytes in and out.")
public class ListJobsCommand extends MpiCommandSupport {

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Option(name = "-a", aliases = "--all", description = "Also the jobs whose ranks have all ended (v2 keeps them"
            + " v2.job.linger.seconds, v1 until the host terminates them)")
    boolean all;

    @Override
    protected Object doExecute(ProxyStatus status) {
        print(status.jobs(), System.out);
        return null;
    }

    void print(List<JobInfo> known, PrintStream out) {
        List<JobInfo> jobs = all ? known : known.stream().filter(ListJobsCommand::running).toList();
        int hidden = known.size() - jobs.size();
        if (jobs.isEmpty()) {
            out.println(hidden == 0 ? "No jobs." : "No running jobs (" + hidden + " finished: mpi:jobs --all).");
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
                        shortName(rank.program()), rank.pid() < 0 ? "-" : Long.toString(rank.pid()), rank.state(),
                        rank.exitStatus() < 0 ? "-" : Integer.toString(rank.exitStatus()), rank.bytesIn(),
                        rank.bytesOut());
            }
        }
        table.print(out, !noFormat);
        if (hidden > 0 && !noFormat) {
            out.println(hidden + " finished job" + (hidden == 1 ? "" : "s") + " not shown: mpi:jobs --all");
        }
    }

    /** @return whether a rank of {@code job} runs or is being stopped, or it has none yet */
    static boolean running(JobInfo job) {
        if (job.ranks().isEmpty()) {
            return true;
        }
        for (RankInfo rank : job.ranks()) {
            if (rank.state() == RankInfo.State.RUNNING || rank.state() == RankInfo.State.TERMINATING) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return a staged program's name ({@code sha256-} and 64 hexadecimal digits, and its suffix)
     *         cut to the digest's first 12 digits, as {@code git} shows commits; other names as they are
     */
    static String shortName(String program) {
        if (program != null && program.startsWith("sha256-") && program.length() >= 7 + 64
                && program.substring(7, 7 + 64).chars().allMatch(c -> c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
            return program.substring(0, 7 + 12) + "…" + program.substring(7 + 64);
        }
        return program;
    }
}
