package org.mpiproxy.shell.internal;

import java.util.List;
import java.util.Locale;

import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;

/** Completes rank ids: those of the job named earlier on the line, else those of every job. */
@Service
public class RankIdCompleter implements Completer {

    @Reference
    ProxyStatus status;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        List<JobInfo> jobs = status.jobs();
        String[] args = commandLine.getArguments();
        JobInfo named = null;
        for (int i = 0; i < commandLine.getCursorArgumentIndex() && i < args.length && named == null; i++) {
            String a = args[i].toLowerCase(Locale.ROOT);
            List<JobInfo> matches = jobs.stream()
                    .filter(j -> !a.isEmpty() && MpiCommandSupport.hex(j.jobId()).startsWith(a)).toList();
            named = matches.size() == 1 ? matches.get(0) : null;
        }
        StringsCompleter delegate = new StringsCompleter();
        for (JobInfo job : named != null ? List.of(named) : jobs) {
            for (RankInfo rank : job.ranks()) {
                delegate.getStrings().add(Integer.toString(rank.rankId()));
            }
        }
        return delegate.complete(session, commandLine, candidates);
    }
}
