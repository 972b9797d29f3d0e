package org.mpiproxy.shell.internal;

import java.util.List;

import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;

/** Completes the ids of the proxy's jobs. */
@Service
public class JobIdCompleter implements Completer {

    @Reference
    ProxyStatus status;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        StringsCompleter delegate = new StringsCompleter();
        for (JobInfo job : status.jobs()) {
            delegate.getStrings().add(MpiCommandSupport.hex(job.jobId()));
        }
        return delegate.complete(session, commandLine, candidates);
    }
}
