package org.mpiproxy.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Ranks in their own process group and session, and signals to a whole group.
 * <p>
 * {@link #argv} prefixes a command line with util-linux {@code setsid}: it calls
 * {@code setsid(2)} and execs the command in place (it forks only when the caller already
 * leads a process group, which a freshly spawned child never does), so the rank's pid is its
 * process group id and session id, and every child or grandchild it starts is in that group
 * unless it makes its own session ({@link NativeSpawn} gives a rank the same with a spawn
 * attribute instead). {@link #signal} calls {@code kill(-pgid)} through {@link NativeSpawn}, or
 * without it runs {@code kill -s <SIGNAL> -- -<pgid>} (procps {@code kill}); the kernel delivers
 * the signal to every member of the group at once, even to members whose parent has already
 * ended. Stateless and thread-safe; {@link #signal}
 * blocks for the few milliseconds {@code kill} takes.
 */
public final class ProcessGroup {

    /** The program that starts a command in a new session. */
    public static final String SETSID = "setsid";

    private static final long KILL_WAIT_SECONDS = 10;

    /** Signals sent to rank groups. */
    public enum Signal {
        /** SIGTERM: asks the processes to end. */
        TERM,
        /** SIGKILL: ends them. */
        KILL
    }

    private ProcessGroup() {
    }

    /**
     * @param argv a command line
     * @return {@code setsid argv...} (unmodifiable)
     */
    public static List<String> argv(List<String> argv) {
        List<String> grouped = new ArrayList<>(argv.size() + 1);
        grouped.add(SETSID);
        grouped.addAll(argv);
        return Collections.unmodifiableList(grouped);
    }

    /**
     * Sends a signal to every process of a group.
     *
     * @param pgid   the process group id (&gt; 1)
     * @param signal the signal
     * @return {@code true} when at least one process was signalled, {@code false} when the group
     *         has no member (any more) or the signal could not be sent
     * @throws IllegalArgumentException when {@code pgid <= 1}, which would signal far too much
     */
    public static boolean signal(long pgid, Signal signal) {
        if (pgid <= 1) {
            throw new IllegalArgumentException("pgid=" + pgid + " must be > 1");
        }
        NativeSpawn spawn = RankProcessStarter.nativeSpawn();
        if (spawn != null) {
            return spawn.signal(-pgid, signal == Signal.KILL ? NativeSpawn.SIGKILL : NativeSpawn.SIGTERM);
        }
        ProcessBuilder builder = new ProcessBuilder(killCommand(), "-s", signal.name(), "--", "-" + pgid)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        try {
            Process kill = builder.start();
            if (!kill.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                return false;
            }
            return kill.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Linux's numbers (x86 and arm64) of the signals {@link #send} knows, by name without {@code SIG}. */
    private static final java.util.Map<String, Integer> NUMBERS = java.util.Map.of("HUP", 1, "INT", 2, "QUIT", 3,
            "KILL", 9, "USR1", 10, "USR2", 12, "TERM", 15, "CONT", 18, "STOP", 19);

    /**
     * Sends a signal by name with {@code kill(2)}, without spawning a program, when the native
     * spawner is available.
     *
     * @param target a pid, or minus a process group id
     * @param name   HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT or STOP
     * @return whether it was delivered, or empty when it could not be tried here (no native
     *         access, or a signal name it does not know): the caller runs {@code kill} instead
     */
    public static java.util.Optional<Boolean> send(long target, String name) {
        Integer number = NUMBERS.get(name);
        NativeSpawn spawn = RankProcessStarter.nativeSpawn();
        if (number == null || spawn == null || target == 0 || target == -1 || target == 1) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(spawn.signal(target, number));
    }

    /**
     * Kills every process of a group and waits until none runs (zombies count as ended), sending
     * SIGKILL again to members that a dying process forked meanwhile; blocks the caller.
     *
     * @param pgid    the process group id (&gt; 1)
     * @param timeout the longest wait
     * @return {@code true} when the group has no running member any more
     */
    public static boolean kill(long pgid, java.time.Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            // a group whose leader has ended usually has no member left: then nothing is signalled,
            // and /proc is not even read when kill(-pgid, 0) says the group is empty
            NativeSpawn spawn = RankProcessStarter.nativeSpawn();
            if ((spawn != null && spawn.groupEmpty(pgid)) || !hasMembers(pgid)) {
                return true;
            }
            while (true) {
                signal(pgid, Signal.KILL);
                if (!hasMembers(pgid)) {
                    return true;
                }
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                // SIGKILL is delivered asynchronously; the kernel needs a moment to tear the process down
                Thread.sleep(5);
            }
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * @param pgid a process group id
     * @return {@code true} when a running (not zombie) process of that group exists
     * @throws IOException when {@code /proc} cannot be read
     */
    public static boolean hasMembers(long pgid) throws IOException {
        try (var pids = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) pids::iterator) {
                String name = p.getFileName().toString();
                if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
                    continue;
                }
                var stat = ProcStat.read(Long.parseLong(name));
                if (stat.isPresent() && stat.get().pgrp() == pgid && stat.get().isRunning()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String killCommand() {
        for (String candidate : new String[] {"/bin/kill", "/usr/bin/kill"}) {
            if (Files.isExecutable(Path.of(candidate))) {
                return candidate;
            }
        }
        return "kill";
    }
}
