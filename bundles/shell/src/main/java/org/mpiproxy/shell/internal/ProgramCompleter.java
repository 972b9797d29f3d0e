package org.mpiproxy.shell.internal;

import java.util.List;

import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.api.console.CommandLine;
import org.apache.karaf.shell.api.console.Completer;
import org.apache.karaf.shell.api.console.Session;
import org.apache.karaf.shell.support.completers.StringsCompleter;
import org.mpiproxy.api.ProxyControl;

/** Completes the names of the programs in the launchers' program directories. */
@Service
public class ProgramCompleter implements Completer {

    @Reference
    ProxyControl control;

    @Override
    public int complete(Session session, CommandLine commandLine, List<String> candidates) {
        return new StringsCompleter(control.programs()).complete(session, commandLine, candidates);
    }
}
