package org.mpiproxy.mpi.internal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.function.LongSupplier;

/**
 * A rank's watch on its proxy. The proxy passes its pid and start time (field 22 of
 * {@code /proc/<pid>/stat}) in {@code MPIPROXY_PROXY_PID} and {@code MPIPROXY_PROXY_START};
 * while the rank idles on a ring, {@link #check()} looks at most every {@link #CHECK_INTERVAL_NANOS}
 * whether that very process still runs.
 * <p>
 * When it does not, the node may be restarting: on a node run under the node keeper
 * ({@code MPIPROXY_KEEPER_DIR} names its directory), the rank waits up to the keeper's
 * {@code survive.seconds} (its {@code policy} file, written by the proxy) for a new proxy to take
 * the job over; that proxy names itself in the keeper's {@code owner} file, and the rank watches it
 * from then on. When no proxy takes over within the window (or the node has no keeper, or the
 * window is 0), nobody will ever fill or drain the rings again: the rank prints why on standard
 * error and exits with {@link #EXIT_PROXY_GONE}. Without the variables (a rank started by hand),
 * there is nothing to watch. Not thread-safe: one per transport.
 */
public final class ProxyLifeline {

    /** Environment variable with the proxy's pid. */
    public static final String PID_ENV = "MPIPROXY_PROXY_PID";
    /** Environment variable with the proxy's start time in clock ticks after boot. */
    public static final String START_ENV = "MPIPROXY_PROXY_START";
    /** Exit status of a rank whose proxy is gone ({@code EX_UNAVAILABLE}). */
    public static final int EXIT_PROXY_GONE = 69;
    /** Environment variable with the node keeper's directory. */
    public static final String KEEPER_ENV = "MPIPROXY_KEEPER_DIR";
    /** How often an idle rank looks at its proxy: 500 ms. */
    public static final long CHECK_INTERVAL_NANOS = 500_000_000L;

    private long pid;
    private long start;
    private final Path keeper;
    /** When the watched proxy was found gone (clock), or {@link Long#MIN_VALUE} while it runs. */
    private long goneSince = Long.MIN_VALUE;
    private final String who;
    private final PrintStream diagnostics;
    private final IntConsumer exit;
    private final LongSupplier clock;
    private long nextCheck;

    ProxyLifeline(long pid, long start, String who, PrintStream diagnostics, IntConsumer exit, LongSupplier clock) {
        this(pid, start, null, who, diagnostics, exit, clock);
    }

    ProxyLifeline(long pid, long start, Path keeper, String who, PrintStream diagnostics, IntConsumer exit,
                  LongSupplier clock) {
        this.pid = pid;
        this.start = start;
        this.keeper = keeper;
        this.who = who;
        this.diagnostics = diagnostics;
        this.exit = exit;
        this.clock = clock;
        this.nextCheck = clock.getAsLong() + CHECK_INTERVAL_NANOS;
    }

    /**
     * @param env  the environment
     * @param rank this rank, for the message
     * @return the lifeline the environment describes, or {@code null} when it names no proxy
     */
    public static ProxyLifeline fromEnvironment(Function<String, String> env, int rank) {
        String pidText = env.apply(PID_ENV);
        if (pidText == null || pidText.isBlank()) {
            return null;
        }
        try {
            long pid = Long.parseLong(pidText.trim());
            String startText = env.apply(START_ENV);
            long start = startText == null || startText.isBlank() ? -1 : Long.parseLong(startText.trim());
            String keeperText = env.apply(KEEPER_ENV);
            Path keeper = keeperText == null || keeperText.isBlank() ? null : Path.of(keeperText.trim());
            return new ProxyLifeline(pid, start, keeper, "rank " + rank, System.err, System::exit, System::nanoTime);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Checks the proxy when the interval has passed; does not return when it is gone. */
    public void check() {
        long now = clock.getAsLong();
        if (now - nextCheck < 0) {
            return;
        }
        nextCheck = now + CHECK_INTERVAL_NANOS;
        if (runs(pid, start)) {
            goneSince = Long.MIN_VALUE;
            return;
        }
        long[] owner = keeper == null ? null : owner(keeper);
        if (owner != null && (owner[0] != pid || owner[1] != start) && runs(owner[0], owner[1])) {
            diagnostics.println("mpiproxy " + who + ": the proxy (pid " + pid + ") is gone; the proxy with pid "
                    + owner[0] + " took the job over");
            diagnostics.flush();
            pid = owner[0];
            start = owner[1];
            goneSince = Long.MIN_VALUE;
            return;
        }
        long survive = keeper == null ? 0 : surviveSeconds(keeper);
        if (goneSince == Long.MIN_VALUE) {
            goneSince = now;
            if (survive > 0) {
                diagnostics.println("mpiproxy " + who + ": the proxy (pid " + pid + ") is gone; waiting up to "
                        + survive + " s for a proxy to take the job over");
                diagnostics.flush();
            }
        }
        if (now - goneSince >= survive * 1_000_000_000L) {
            diagnostics.println("mpiproxy " + who + ": the proxy (pid " + pid + ") is gone"
                    + (survive > 0 ? " and no proxy took the job over within " + survive + " s" : "")
                    + "; exiting with status " + EXIT_PROXY_GONE);
            diagnostics.flush();
            exit.accept(EXIT_PROXY_GONE);
        }
    }

    /** @return {pid, start time} named in the keeper's owner file, or {@code null} */
    static long[] owner(Path keeper) {
        try {
            String[] parts = Files.readString(keeper.resolve("owner"), StandardCharsets.US_ASCII).trim().split(" ");
            return parts.length == 2 ? new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])} : null;
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /** @return the keeper's {@code survive.seconds}, 0 when it has none */
    static long surviveSeconds(Path keeper) {
        java.util.Properties policy = new java.util.Properties();
        try (var in = Files.newInputStream(keeper.resolve("policy"))) {
            policy.load(in);
            return Math.max(0, Long.parseLong(policy.getProperty("survive.seconds", "0").trim()));
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }

    /** @return whether the proxy process (pid and, when known, start time) still runs */
    boolean proxyRuns() {
        return runs(pid, start);
    }

    private static boolean runs(long pid, long start) {
        String line;
        try {
            line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            // cannot tell (no /proc?): assume it runs rather than end a healthy rank
            return !Files.notExists(Path.of("/proc", Long.toString(pid)));
        }
        int close = line.lastIndexOf(')');
        if (close < 0 || close + 2 >= line.length()) {
            return true;
        }
        String[] fields = line.substring(close + 2).split(" ");
        if (fields.length < 20) {
            return true;
        }
        boolean ended = fields[0].equals("Z") || fields[0].equals("X");
        return !ended && (start < 0 || fields[19].equals(Long.toString(start)));
    }
}
