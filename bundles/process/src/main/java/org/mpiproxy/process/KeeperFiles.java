package org.mpiproxy.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;

/**
 * The files through which the node keeper and the proxy talk. The keeper
 * ({@code org.mpiproxy.process.internal.NodeKeeper}) is the parent of the Karaf JVM and a child
 * subreaper: the ranks the JVM started become its children when the JVM ends, so it can reap them
 * and keep their exact exit statuses, and end them when nobody answers for them any more. Each
 * keeper has a directory {@code <root>/keeper-<its pid>}, named to the JVM in
 * {@value #DIR_ENV}, holding:
 * <ul>
 * <li>{@value #POLICY}: {@code survive.seconds} and {@code stop.grace.seconds}, written by the
 * proxy: how long the keeper's orphans may wait for a proxy, and the grace between SIGTERM and
 * SIGKILL when they may not;</li>
 * <li>{@value #OWNER}: {@code <pid> <start time>} of the JVM that answers for the keeper's orphans
 * once the keeper's own JVM has ended (a later proxy that took its jobs over);</li>
 * <li>{@code exit-<pid>-<start time>}: the exit status of a reaped process group leader (a rank),
 * in the form {@link Process#exitValue()} gives (the code, or 128 + signal).</li>
 * </ul>
 * Any thread; every write is atomic (a temporary file renamed).
 */
public final class KeeperFiles {

    /** Environment variable naming the keeper's directory to the JVM it started. */
    public static final String DIR_ENV = "MPIPROXY_KEEPER_DIR";
    /** The policy file's name. */
    public static final String POLICY = "policy";
    /** The owner file's name. */
    public static final String OWNER = "owner";
    /** Prefix of a keeper's directory name; its pid follows. */
    public static final String KEEPER_PREFIX = "keeper-";
    /** Prefix of an exit record's name. */
    public static final String EXIT_PREFIX = "exit-";

    private KeeperFiles() {
    }

    /** @return the directory of the keeper this JVM runs under, or {@code null} when it runs under none */
    public static Path own() {
        String dir = System.getenv(DIR_ENV);
        return dir == null || dir.isBlank() ? null : Path.of(dir);
    }

    /**
     * Tells a keeper how long its orphans may wait and how they are stopped.
     *
     * @param keeper         the keeper's directory
     * @param surviveSeconds how long ranks outlive the JVM that answers for them; 0 ends them at once
     * @param graceSeconds   SIGTERM to SIGKILL
     * @throws IOException when the file cannot be written
     */
    public static void writePolicy(Path keeper, long surviveSeconds, long graceSeconds) throws IOException {
        write(keeper.resolve(POLICY), "survive.seconds=" + surviveSeconds + "\nstop.grace.seconds=" + graceSeconds
                + "\n");
    }

    /**
     * @param keeper a keeper's directory
     * @return {survive seconds, grace seconds}; {0, 0} when no proxy wrote a policy (nothing to keep)
     */
    public static long[] readPolicy(Path keeper) {
        Properties p = new Properties();
        try (var in = Files.newInputStream(keeper.resolve(POLICY))) {
            p.load(in);
            return new long[] {Math.max(0, Long.parseLong(p.getProperty("survive.seconds", "0").trim())),
                    Math.max(0, Long.parseLong(p.getProperty("stop.grace.seconds", "0").trim()))};
        } catch (IOException | NumberFormatException e) {
            return new long[] {0, 0};
        }
    }

    /**
     * Makes a JVM the one that answers for a keeper's orphans (a proxy that took its jobs over).
     *
     * @param keeper    the keeper's directory
     * @param pid       the JVM's pid
     * @param startTime its start time (field 22 of {@code /proc/<pid>/stat})
     * @throws IOException when the file cannot be written
     */
    public static void writeOwner(Path keeper, long pid, long startTime) throws IOException {
        write(keeper.resolve(OWNER), pid + " " + startTime + "\n");
    }

    /**
     * @param keeper a keeper's directory
     * @return {pid, start time} of the JVM named in its owner file, or {@code null} when none is
     *         named (or the file is unreadable)
     */
    public static long[] readOwner(Path keeper) {
        try {
            String[] parts = Files.readString(keeper.resolve(OWNER), StandardCharsets.US_ASCII).trim().split(" ");
            return parts.length == 2 ? new long[] {Long.parseLong(parts[0]), Long.parseLong(parts[1])} : null;
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /**
     * Records a reaped process's exit status.
     *
     * @param keeper    the keeper's directory
     * @param pid       the process
     * @param startTime its start time
     * @param status    its exit value
     * @throws IOException when the record cannot be written
     */
    public static void writeExit(Path keeper, long pid, long startTime, int status) throws IOException {
        write(keeper.resolve(EXIT_PREFIX + pid + "-" + startTime), status + "\n");
    }

    /**
     * Looks for a process's exit status in every keeper's directory under {@code root}.
     *
     * @param root      the directory that holds the keepers' directories
     * @param pid       the process
     * @param startTime its start time
     * @return its exit value, or empty when no keeper recorded it
     */
    public static OptionalInt exitStatus(Path root, long pid, long startTime) {
        for (Path keeper : keepers(root)) {
            try {
                String text = Files.readString(keeper.resolve(EXIT_PREFIX + pid + "-" + startTime),
                        StandardCharsets.US_ASCII).trim();
                return OptionalInt.of(Integer.parseInt(text));
            } catch (NoSuchFileException e) {
                // not this keeper's
            } catch (IOException | NumberFormatException e) {
                // unreadable: another keeper may still have it
            }
        }
        return OptionalInt.empty();
    }

    /**
     * @param root the directory that holds the keepers' directories
     * @return every keeper's directory there (running or not); empty when there is none
     */
    public static List<Path> keepers(Path root) {
        List<Path> found = new ArrayList<>();
        if (root == null || !Files.isDirectory(root)) {
            return found;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root, KEEPER_PREFIX + "*")) {
            dirs.forEach(found::add);
        } catch (IOException e) {
            // nothing to read
        }
        return found;
    }

    /**
     * @param keeper a keeper's directory
     * @return the keeper's pid (from the directory's name), or -1 when the name holds none
     */
    public static long keeperPid(Path keeper) {
        String name = keeper.getFileName().toString();
        try {
            return name.startsWith(KEEPER_PREFIX) ? Long.parseLong(name.substring(KEEPER_PREFIX.length())) : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Removes the directories of keepers that no longer run, with what they recorded.
     *
     * @param root the directory that holds the keepers' directories
     * @return how many were removed
     */
    public static int removeEnded(Path root) {
        int removed = 0;
        for (Path keeper : keepers(root)) {
            long pid = keeperPid(keeper);
            if (pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                continue;
            }
            try (DirectoryStream<Path> files = Files.newDirectoryStream(keeper)) {
                for (Path file : files) {
                    Files.deleteIfExists(file);
                }
                Files.deleteIfExists(keeper);
                removed++;
            } catch (IOException e) {
                // left for the next start
            }
        }
        return removed;
    }

    private static void write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.US_ASCII);
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
