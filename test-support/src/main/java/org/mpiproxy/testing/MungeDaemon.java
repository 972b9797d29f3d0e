package org.mpiproxy.testing;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code munged} for tests: the one running, else one started as the Slurm test cluster's
 * {@code up.sh} does (as root, as the user {@code munge}), stopped by {@link #stop()}. {@link #start()}
 * says why there is none when it cannot be had, so tests skip with that message.
 */
public final class MungeDaemon {

    private static final Path RUN = Path.of("/run/munge");
    private static final Path SOCKET = RUN.resolve("munge.socket.2");
    private static final Path KEY = Path.of("/etc/munge/munge.key");
    private static final long WAIT_SECONDS = 20;

    private static Process started;

    private MungeDaemon() {
    }

    /** @return {@code null} when munged answers (already, or started now), else why not */
    public static synchronized String start() {
        if (works()) {
            return null;
        }
        try {
            if (!"0".equals(output("id", "-u").strip())) {
                return "munged does not answer and only root may start one";
            }
            if (!Files.isRegularFile(KEY)) {
                output("install", "-d", "-o", "munge", "-g", "munge", "-m", "0700", "/etc/munge");
                output("mungekey", "--create", "--keyfile=" + KEY);
                output("chown", "munge:munge", KEY.toString());
                output("chmod", "0400", KEY.toString());
            }
            output("install", "-d", "-o", "munge", "-g", "munge", "-m", "0755", RUN.toString());
            output("install", "-d", "-o", "munge", "-g", "munge", "-m", "0700", "/var/log/munge", "/var/lib/munge");
            Files.deleteIfExists(SOCKET);
            Files.deleteIfExists(RUN.resolve("munge.socket.2.lock"));
            try (WatchService watch = FileSystems.getDefault().newWatchService()) {
                RUN.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
                started = new ProcessBuilder("setsid", "setpriv", "--reuid=munge", "--regid=munge", "--clear-groups",
                        munged(), "-F").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
                while (!works()) {
                    long left = deadline - System.nanoTime();
                    if (!started.isAlive() || left <= 0) {
                        stop();
                        return "munged did not start";
                    }
                    // the socket appears when munged listens; a spawned munge -n then answers
                    if (!Files.exists(SOCKET) && watch.poll(left, TimeUnit.NANOSECONDS) == null) {
                        continue;
                    }
                }
            }
            return null;
        } catch (IOException | InterruptedException e) {
            stop();
            return "munged could not be started: " + e;
        }
    }

    /** Stops the munged {@link #start()} started, if it did. */
    public static synchronized void stop() {
        if (started != null) {
            started.destroy();
            try {
                started.waitFor(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            started = null;
        }
    }

    private static String munged() {
        return Files.isExecutable(Path.of("/usr/sbin/munged")) ? "/usr/sbin/munged" : "munged";
    }

    private static boolean works() {
        try {
            Process munge = new ProcessBuilder("munge", "-n").redirectError(ProcessBuilder.Redirect.DISCARD).start();
            Process unmunge = new ProcessBuilder("unmunge").redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            unmunge.getOutputStream().write(munge.getInputStream().readAllBytes());
            unmunge.getOutputStream().close();
            return munge.waitFor() == 0 && unmunge.waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static String output(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + ": " + out.strip());
        }
        return out;
    }
}
