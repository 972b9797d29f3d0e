package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.util.List;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Completion;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;

/** {@code mpi:stop}: signals a job's ranks (guarded by the command ACL). */
@Service
@Command(scope = "mpi", name = "stop", description = "Sends a signal (TERM unless told) to every running rank of a "
        + "job, or to one rank. The host still receives each rank's exit status (128 + signal) on TERMINATE.")
public class StopCommand extends MpiCommandSupport {

    @Argument(index = 0, name = "job", required = true, description = "Job id (or a unique prefix), see mpi:jobs")
    @Completion(JobIdCompleter.class)
    String job;

    @Argument(index = 1, name = "rank", required = false, description = "Rank id; every running rank when omitted")
    @Completion(RankIdCompleter.class)
    int rank;

    @Option(name = "--signal", aliases = "-s", description = "Signal: TERM, KILL, INT, HUP, QUIT, USR1, USR2, STOP, CONT")
    @Completion(value = StringsCompleter.class,
            values = {"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT"})
    String signal = "TERM";

    @Override
    protected Object doExecute(ProxyStatus status) {
        JobInfo info = resolveJob(status, job);
        if (rank != 0) {
            resolveRank(info, rank);
        }
        List<Integer> signalled = control().signal(info.jobId(), rank, signal);
        print(info, signalled, System.out);
        return null;
    }

    void print(JobInfo info, List<Integer> signalled, PrintStream out) {
        String sig = signal.toUpperCase(java.util.Locale.ROOT).replaceFirst("^SIG", "");
        if (signalled.isEmpty()) {
            out.println("Job " + hex(info.jobId()) + ": no running rank" + (rank != 0 ? " " + rank : "")
                    + " to signal.");
            return;
        }
        out.println("Job " + hex(info.jobId()) + ": sent SIG" + sig + " to rank" + (signalled.size() > 1 ? "s " : " ")
                + signalled.toString().replaceAll("[\\[\\]]", "") + ".");
    }
}
