package org.mpiproxy.shell.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.util.List;

import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.apache.karaf.shell.support.table.ShellTable;
import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.ProxyStatus;

/** {@code mpi:channels}: the shared-memory channel files and how full their rings are. */
@Service
@Command(scope = "mpi", name = "channels", description = "Lists the shared-memory channel files below the channel "
        + "directory: job, rank, ring capacity and how full the host-to-rank and rank-to-host rings are.")
public class ListChannelsCommand extends MpiCommandSupport {

    @Option(name = "--no-format", description = "Disable table rendered output")
    boolean noFormat;

    @Reference(optional = true)
    ChannelManager channels;

    @Override
    protected Object doExecute(ProxyStatus status) throws IOException {
        if (channels == null) {
            throw new IllegalStateException("the channel manager is not running");
        }
        print(ChannelFiles.list(channels.baseDirectory()), System.out);
        return null;
    }

    void print(List<ChannelFiles.Channel> list, PrintStream out) {
        if (list.isEmpty()) {
            out.println("No channels.");
            return;
        }
        ShellTable table = new ShellTable();
        table.column("Job");
        table.column("Rank").alignRight();
        table.column("Capacity").alignRight();
        table.column("To rank").alignRight();
        table.column("From rank").alignRight();
        table.column("File");
        for (ChannelFiles.Channel c : list) {
            table.addRow().addContent(hex(c.jobId()), c.rankId(), c.capacity(),
                    c.toRankUsed() + " (" + c.toRankPercent() + "%)", c.fromRankUsed() + " (" + c.fromRankPercent()
                            + "%)", c.file());
        }
        table.print(out, !noFormat);
    }
}
