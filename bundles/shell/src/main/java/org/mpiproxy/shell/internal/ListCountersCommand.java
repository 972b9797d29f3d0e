package org.mpiproxy.shell.internal;

import java.io.PrintStream;
import java.util.Map;

import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.ProxyStatus;

/** {@code mpi:counters}: the proxy's counters. */
@Service
@Command(scope = "mpi", name = "counters", description = "Shows the proxy's counters: datagrams, relayed bytes, "
        + "held and dropped data, refused and invalid requests.")
public class ListCountersCommand extends MpiCommandSupport {

    @Argument(index = 0, name = "prefix", required = false,
            description = "Only counters whose name starts with this, such as invalid.")
    String prefix;

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Option(name = "--all", aliases = "-a", description = "Also show counters that are zero")
    boolean all;

    @Override
    protected Object doExecute(ProxyStatus status) {
        print(status.counters(), System.out);
        return null;
    }

    void print(Map<String, Long> counters, PrintStream out) {
        ShellTable table = new ShellTable();
        table.column("Counter");
        table.column("Value").alignRight();
        int rows = 0;
        for (Map.Entry<String, Long> e : counters.entrySet()) {
            if ((prefix != null && !e.getKey().startsWith(prefix)) || (!all && e.getValue() == 0)) {
                continue;
            }
            table.addRow().addContent(e.getKey(), e.getValue());
            rows++;
        }
        if (rows == 0) {
            out.println(all ? "No counters." : "No counters above zero (--all shows every counter).");
            return;
        }
        table.print(out, !noFormat);
    }
}
