package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.ProcessGroup;

/**
 * Sends a named signal to a rank. Ranks lead their own session, so a rank's pid is also its
 * process group id: the signal goes to the whole group ({@code kill(-pgid)}, or the
 * {@code kill} program without native access: {@code kill -s SIG -- -pgid}), children
 * and grandchildren included, as supervision's stop does. A process that does not lead its own
 * group (not started by a launcher) gets the signal alone. Thread-safe.
 */
final class RankSignals {

    /** Signals an operator may send, without the {@code SIG} prefix. */
    static final List<String> NAMES = List.of("TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2", "STOP", "CONT");

    private static final long KILL_WAIT_SECONDS = 10;

    private final String killCommand;

    RankSignals() {
        this("/bin/kill");
    }

    RankSignals(String killCommand) {
        this.killCommand = killCommand;
    }

    /**
     * @param signal a signal name, with or without {@code SIG}, any case
     * @return the name as in {@link #NAMES}
     * @throws IllegalArgumentException when the signal is not one of {@link #NAMES}
     */
    static String normalize(String signal) {
        String s = signal == null ? "" : signal.trim().toUpperCase(Locale.ROOT);
        if (s.startsWith("SIG")) {
            s = s.substring(3);
        }
        if (!NAMES.contains(s)) {
            throw new IllegalArgumentException("signal '" + signal + "' is not one of " + String.join(", ", NAMES));
        }
        return s;
    }

    /**
     * @param pid a process id
     * @return {@code true} when the process leads its own process group (pgid = pid)
     * @throws IOException when {@code /proc} cannot be read
     */
    static boolean leadsItsGroup(long pid) throws IOException {
        return pid > 1 && ProcStat.read(pid).map(s -> s.pgrp() == pid).orElse(false);
    }

    /**
     * Sends the signal to the process's group when it leads one, else to the process; blocks until
     * {@code kill} has run.
     *
     * @param pid    the process
     * @param signal a name from {@link #NAMES}
     * @return {@code true} when the signal was delivered, {@code false} when the process is gone
     * @throws IOException when {@code kill} cannot be run
     */
    boolean send(long pid, String signal) throws IOException {
        if (pid <= 0 || ProcessHandle.of(pid).isEmpty()) {
            return false;
        }
        String target = leadsItsGroup(pid) ? "-" + pid : Long.toString(pid);
        java.util.Optional<Boolean> sent = ProcessGroup.send(Long.parseLong(target), normalize(signal));
        if (sent.isPresent()) {
            return sent.get();
        }
        Process kill = new ProcessBuilder(killCommand, "-s", normalize(signal), "--", target)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            if (!kill.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IOException(killCommand + " did not finish within " + KILL_WAIT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while signalling pid " + pid, e);
        }
        return kill.exitValue() == 0;
    }
}
