package org.mpiproxy.benchmarks;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.mpiproxy.api.LocalRuns;
import org.mpiproxy.cli.LocalRunComponent;
import org.mpiproxy.proxy.internal.EmbeddedProxy;

/**
 * {@code mpiproxy run} warm beside cold (docs/protocol-v2.md 4.4): the embedded proxy's local
 * socket also serves {@code RUN 1} with the cli's own {@link LocalRunComponent}, made as the
 * service component runtime makes it and bound to the socket as its optional {@link LocalRuns}
 * reference is, and the warm variant of a launch is the thin front {@value #FRONT_PATH} with the
 * cold command before its {@code --}: {@code mpiproxy-front sh bin/mpiproxy -- run ...}, with
 * {@code MPIPROXY_SOCKET} naming that socket and standard input {@code /dev/null} (a pipe would
 * send it cold). Every launch is checked by the runs the service took: a warm one must have been
 * run by it, a cold one not, or the phase fails; {@code MPIPROXY_FRONT_DEBUG=1} has the front say
 * why it ran cold.
 */
final class WarmRuns implements Closeable {

    /** Where {@code mvn package -pl cli} builds the front (with gcc). */
    static final String FRONT_PATH = "cli/target/native/mpiproxy-front";
    static final Path FRONT = Path.of(FRONT_PATH);

    /** The launcher's service, counting the runs it took. */
    private static final class CountedRuns implements LocalRuns {
        private final LocalRuns service = new LocalRunComponent();
        private final AtomicLong taken = new AtomicLong();

        @Override
        public int run(List<String> args, Map<String, String> env, Path cwd, Peer peer, OutputStream out,
                       OutputStream err, Signals signals) throws InterruptedException {
            taken.incrementAndGet();
            return service.run(args, env, cwd, peer, out, err, signals);
        }
    }

    private final CountedRuns runs = new CountedRuns();
    private final Path socket;
    private final Closeable local;

    private WarmRuns(ProxyFixture proxy, Path work) throws IOException {
        Path dir = Files.createTempDirectory(work, "warm-");
        this.socket = dir.resolve("proxy.sock");
        this.local = EmbeddedProxy.localSocket(proxy.v2, socket, dir.resolve("proxy"), runs);
    }

    /** @return why the warm path cannot be measured here, or {@code null} */
    static String unavailable() {
        return Files.isExecutable(FRONT) ? null
                : FRONT_PATH + " was not built (no gcc when cli was packaged): `mpiproxy run` ran cold only";
    }

    /**
     * Opens the warm path of a proxy serving protocol v2.
     *
     * @return the warm path, or {@code null} when the front was not built ({@link #unavailable()})
     * @throws IOException when the proxy's local socket did not open
     */
    static WarmRuns open(ProxyFixture proxy, Path work) throws IOException {
        return unavailable() != null ? null : new WarmRuns(proxy, work);
    }

    /**
     * @param cold a launcher whose commands run {@code mpiproxy run} cold ({@code ... run ARGS})
     * @return the same launches through the front: {@code mpiproxy-front COLD-COMMAND -- run ARGS}
     */
    MpichPrograms.Launcher warm(MpichPrograms.Launcher cold) {
        return (n, program, args) -> {
            List<String> c = cold.command(n, program, args);
            int run = c.indexOf("run");
            if (run < 1) {
                throw new IllegalArgumentException("not an 'mpiproxy run' command: " + String.join(" ", c));
            }
            List<String> w = new ArrayList<>();
            w.add(FRONT.toAbsolutePath().toString());
            w.addAll(c.subList(0, run));
            w.add("--");
            w.addAll(c.subList(run, c.size()));
            return w;
        };
    }

    /**
     * Runs a warm launch to its end and checks that the proxy ran it.
     *
     * @param command a command of {@link #warm}
     * @throws IllegalStateException when it failed, or ran cold (with the front's reason)
     */
    MpichPrograms.Run warmRun(List<String> command, Map<String, String> environment, Path work)
            throws IOException, InterruptedException {
        Map<String, String> env = new HashMap<>(environment);
        env.put("MPIPROXY_SOCKET", socket.toString());
        env.put("MPIPROXY_FRONT_DEBUG", "1");
        long before = runs.taken.get();
        MpichPrograms.Run r = MpichPrograms.run(command, env, work);
        long taken = runs.taken.get() - before;
        if (taken != 1) {
            String why = r.err().lines().filter(l -> l.startsWith("mpiproxy-front: running cold")).findFirst()
                    .orElse("the front said nothing");
            throw new IllegalStateException("a warm launch ran cold (" + taken + " runs in the proxy; " + why + "): "
                    + String.join(" ", command));
        }
        return r;
    }

    /**
     * Runs a cold launch to its end and checks that the proxy did not run it.
     *
     * @param warm the warm path beside it, {@code null} when there is none
     * @throws IllegalStateException when it failed, or the proxy ran it
     */
    static MpichPrograms.Run coldRun(WarmRuns warm, List<String> command, Map<String, String> environment,
                                     Path work) throws IOException, InterruptedException {
        long before = warm == null ? 0 : warm.runs.taken.get();
        MpichPrograms.Run r = MpichPrograms.run(command, environment, work);
        if (warm != null && warm.runs.taken.get() != before) {
            throw new IllegalStateException("a cold launch ran in the proxy: " + String.join(" ", command));
        }
        return r;
    }

    /** Closes the socket; runs still going on are stopped as their fronts' SIGTERM would. */
    @Override
    public void close() throws IOException {
        local.close();
    }
}
