package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * Where a rank starts: the directory its launcher asked for in {@value #ENV} (the launcher's own,
 * or the user's {@code -wdir}) when it is a directory on this node, else the home directory of
 * the user the rank runs as, with one line on the rank's standard error that says so (as Hydra's
 * proxies start ranks where {@code mpiexec} was run, and a node without that directory cannot).
 * Without {@value #ENV} (a FreeNOS host, an older launcher) the rank starts in the proxy's
 * directory, as before.
 */
public final class RankWorkingDirectory {

    /** Environment variable of an EXEC: the absolute directory the rank should start in. */
    public static final String ENV = "MPIPROXY_WDIR";

    /**
     * The directory chosen for a rank.
     *
     * @param directory where it starts, {@code null} for the proxy's own directory
     * @param note      the line its standard error gets first, {@code null} when it starts where asked
     */
    public record Choice(Path directory, String note) {

        /** No directory asked for: the proxy's own, without a word. */
        static final Choice PROXYS = new Choice(null, null);

        /**
         * @param argv the rank's command line
         * @return {@code argv}, or, with a {@link #note}, a shell that writes the note to standard
         *         error and then becomes the command ({@code exec}, so the rank's pid is its own)
         */
        public List<String> command(List<String> argv) {
            if (note == null) {
                return argv;
            }
            List<String> wrapped = new java.util.ArrayList<>(argv.size() + 4);
            wrapped.add("/bin/sh");
            wrapped.add("-c");
            wrapped.add("printf '%s\\n' \"$0\" >&2; exec \"$@\"");
            wrapped.add(note);
            wrapped.addAll(argv);
            return wrapped;
        }
    }

    private RankWorkingDirectory() {
    }

    /**
     * @param environment the rank's variables (from its EXEC)
     * @param rankId      the rank, for the note
     * @param user        {uid, gid} the rank runs as, {@code null} for the proxy's user
     * @return where the rank starts
     */
    public static Choice choose(Map<String, String> environment, int rankId, long[] user) {
        return choose(environment, rankId, user, RankWorkingDirectory::homeOf, System.getProperty("user.home"));
    }

    /**
     * As {@link #choose(Map, int, long[])}, with the home directories given.
     *
     * @param homeOf   the home directory of a uid, {@code null} when it has none
     * @param ownHome  the proxy's user's home directory
     */
    static Choice choose(Map<String, String> environment, int rankId, long[] user, LongFunction<String> homeOf,
                         String ownHome) {
        String asked = environment.get(ENV);
        if (asked == null || asked.isEmpty()) {
            return Choice.PROXYS;
        }
        Path wanted = absolute(asked);
        if (wanted != null && Files.isDirectory(wanted)) {
            return new Choice(wanted, null);
        }
        String home = user == null ? ownHome : homeOf.apply(user[0]);
        Path fallback = home == null ? null : absolute(home);
        if (fallback == null || !Files.isDirectory(fallback)) {
            fallback = Path.of("/");
        }
        return new Choice(fallback, "mpiproxy: rank " + rankId + ": " + (wanted == null
                ? "the working directory '" + printable(asked) + "' is not an absolute path"
                : "no directory " + wanted + " on this node") + "; started in " + fallback);
    }

    private static Path absolute(String path) {
        try {
            Path p = Path.of(path);
            return p.isAbsolute() ? p.normalize() : null;
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 200));
        for (int i = 0; i < s.length() && i < 200; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return b.toString();
    }

    /** @return the home directory of {@code uid} in {@code /etc/passwd}, {@code null} when not found */
    static String homeOf(long uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":", -1);
                if (f.length >= 7 && f[2].equals(Long.toString(uid))) {
                    return f[5];
                }
            }
        } catch (IOException | RuntimeException e) {
            // no such file or an unreadable one: the caller falls back to /
        }
        return null;
    }
}
