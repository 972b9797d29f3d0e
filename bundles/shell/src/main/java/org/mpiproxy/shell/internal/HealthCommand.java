package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.util.List;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.ProxyStatus;

/** {@code mpi:health}: the node's health checks. */
@Service
@Command(scope = "mpi", name = "health", description = "Checks the node: the proxy listens, the program directories "
        + "hold programs, the v2 key is usable, the channel directory has room. Prints the overall status last.")
public class HealthCommand extends MpiCommandSupport {

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Override
    protected Object doExecute(ProxyStatus status) {
        print(control().health(), System.out);
        return null;
    }

    void print(List<HealthResult> results, PrintStream out) {
        ShellTable table = new ShellTable();
        table.column("Check");
        table.column("Status");
        table.column("Message");
        for (HealthResult r : results) {
            table.addRow().addContent(r.check(), r.status(), r.message());
        }
        table.print(out, !noFormat);
        out.println("Health: " + HealthResult.worst(results));
    }
}
