package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.nio.file.Path;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.channel.shm.ChannelDescriptor;

/** {@code mpi:job}: one job's ranks in detail. */
@Service
@Command(scope = "mpi", name = "job", description = "Shows one job's ranks: process, core, state, exit status, "
        + "payload bytes in and out, data held and dropped, and how full each ring is.")
public class ShowJobCommand extends MpiCommandSupport {

    @Argument(index = 0, name = "job", required = true, description = "Job id (or a unique prefix), see mpi:jobs")
    @Completion(JobIdCompleter.class)
    String job;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Reference(optional = true)
    ChannelManager channels;

    @Override
    protected Object doExecute(ProxyStatus status) {
        print(resolveJob(status, job), System.out);
        return null;
    }

    void print(JobInfo info, PrintStream out) {
        if (!noFormat) {
            out.println("Job " + hex(info.jobId()) + " (" + info.protocol() + ") of " + info.owner() + ", started "
                    + info.started());
        }
        ShellTable table = new ShellTable();
        table.column("Rank").alignRight();
        table.column("Core").alignRight();
        table.column("Program");
        table.column("PID").alignRight();
        table.column("State");
        table.column("Exit").alignRight();
        table.column("In").alignRight();
        table.column("Out").alignRight();
        table.column("Held").alignRight();
        table.column("Dropped").alignRight();
        table.column("Ring in").alignRight();
        table.column("Ring out").alignRight();
        for (RankInfo rank : info.ranks()) {
            ChannelFiles.Channel c = channel(info.jobId(), rank.rankId());
            table.addRow().addContent(rank.rankId(), rank.coreId(), rank.program(),
                    rank.pid() < 0 ? "-" : Long.toString(rank.pid()), rank.state(),
                    rank.exitStatus() < 0 ? "-" : Integer.toString(rank.exitStatus()), rank.bytesIn(),
                    rank.bytesOut(), rank.held(), rank.dropped(), c == null ? "-" : c.toRankPercent() + "%",
                    c == null ? "-" : c.fromRankPercent() + "%");
        }
        table.print(out, !noFormat);
    }

    private ChannelFiles.Channel channel(long jobId, int rankId) {
        ChannelManager m = channels;
        if (m == null) {
            return null;
        }
        Path file = m.jobDirectory(jobId).resolve(ChannelDescriptor.fileName(rankId));
        return ChannelFiles.read(file);
    }
}
