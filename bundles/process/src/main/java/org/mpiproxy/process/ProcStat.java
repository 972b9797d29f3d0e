package org.mpiproxy.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The fields of {@code /proc/<pid>/stat} that supervision needs (Linux).
 * <p>
 * A pid alone does not name a process: pids are reused. The pair (pid, {@link #startTime})
 * does, because the start time of a live process never changes and no two processes with the
 * same pid start in the same clock tick. Immutable and thread-safe.
 *
 * @param pid       the process id
 * @param state     the state letter ({@code R}, {@code S}, {@code Z} for a zombie, ...)
 * @param ppid      the parent's pid
 * @param pgrp      the process group id
 * @param session   the session id
 * @param startTime field 22: clock ticks after boot at which the process started
 */
public record ProcStat(long pid, char state, long ppid, long pgrp, long session, long startTime) {

    private static final Path PROC = Path.of("/proc");

    /**
     * Reads a process's stat line; any thread.
     *
     * @param pid the process id
     * @return its fields, or empty when no such process exists (or it vanished while read)
     * @throws IOException when {@code /proc} cannot be read or the line cannot be parsed
     */
    public static Optional<ProcStat> read(long pid) throws IOException {
        String line;
        try {
            line = Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            // the process ended between open and read
            if (!Files.exists(PROC.resolve(Long.toString(pid)))) {
                return Optional.empty();
            }
            throw e;
        }
        return Optional.of(parse(line));
    }

    /**
     * @param line a {@code /proc/<pid>/stat} line
     * @return its fields
     * @throws IOException when the line is malformed
     */
    public static ProcStat parse(String line) throws IOException {
        // field 2 (comm) is in parentheses and may itself contain spaces and ')': split after the last ')'
        int open = line.indexOf('(');
        int close = line.lastIndexOf(')');
        if (open < 1 || close < open || close + 2 >= line.length()) {
            throw new IOException("malformed /proc stat line: " + line);
        }
        String[] rest = line.substring(close + 2).trim().split(" +");
        // rest[0] is field 3 (state); field n is rest[n - 3]
        if (rest.length < 20 || rest[0].length() != 1) {
            throw new IOException("malformed /proc stat line: " + line);
        }
        try {
            return new ProcStat(Long.parseLong(line.substring(0, open).trim()), rest[0].charAt(0),
                    Long.parseLong(rest[1]), Long.parseLong(rest[2]), Long.parseLong(rest[3]),
                    Long.parseLong(rest[19]));
        } catch (NumberFormatException e) {
            throw new IOException("malformed /proc stat line: " + line, e);
        }
    }

    /** @return {@code true} unless the process is a zombie (ended, not yet reaped) or dead */
    public boolean isRunning() {
        return state != 'Z' && state != 'X' && state != 'x';
    }

    /**
     * @param pid       a process id
     * @param startTime its start time as recorded earlier
     * @return {@code true} when that very process (pid and start time) still runs
     * @throws IOException when {@code /proc} cannot be read
     */
    public static boolean isRunning(long pid, long startTime) throws IOException {
        Optional<ProcStat> stat = read(pid);
        return stat.isPresent() && stat.get().startTime == startTime && stat.get().isRunning();
    }
}
