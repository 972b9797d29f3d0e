package org.mpiproxy.cli;

import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.mpiproxy.api.LocalRuns;
import org.mpiproxy.api.PrivateDirectories;
import org.osgi.service.component.annotations.Component;

/**
 * {@code mpiproxy run} inside the proxy's warm JVM (docs/protocol-v2.md 4.4): the proxy's local
 * socket hands it the front's arguments, environment, working directory, streams and signals,
 * and it runs the launcher's own code with them, as the standalone launcher would in the
 * front's place. It serves the proxy's own user only: the run has the proxy's rights.
 */
@Component(service = LocalRuns.class)
public final class LocalRunComponent implements LocalRuns {

    /** Creates the service. */
    public LocalRunComponent() {
    }

    /**
     * @throws IllegalArgumentException in one line, before anything ran: the command is not
     *                                  {@code run}, or the peer is not the proxy's own user
     */
    @Override
    public int run(List<String> args, Map<String, String> env, Path cwd, Peer peer, OutputStream out,
                   OutputStream err, Signals signals) {
        if (args.isEmpty() || !args.get(0).equals("run")) {
            throw new IllegalArgumentException("the proxy runs 'mpiproxy run' only");
        }
        long self = PrivateDirectories.currentUid();
        if (peer.uid() != self) {
            throw new IllegalArgumentException("the proxy runs jobs of its own user (uid " + self + ") only");
        }
        if (!cwd.isAbsolute()) {
            throw new IllegalArgumentException("the working directory " + cwd + " is not absolute");
        }
        String home = env.get("HOME");
        PrintStream o = new PrintStream(new BufferedOutputStream(out), true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(new BufferedOutputStream(err), true, StandardCharsets.UTF_8);
        RunCommand.Launch launch = new RunCommand.Launch(Map.copyOf(env), o, e, System::nanoTime, cwd,
                home != null && home.startsWith("/") ? Path.of(home) : Path.of(System.getProperty("user.home")),
                signals, peer.pid(), false);
        try {
            return MpiproxyCommand.execute(args.toArray(String[]::new), launch);
        } finally {
            o.flush();
            e.flush();
        }
    }
}
