package org.mpiproxy.cli;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * A job as {@code mpiproxy run --job-file} describes it: written when rank 0 has started, and
 * rewritten with the job's {@link End} when the launcher ends. A launcher that is killed (SIGKILL)
 * leaves the running state behind. The file is a properties file; every key of the running state
 * is as before, so a file of an older launcher reads as a running job.
 *
 * @param launcherPid     the launcher's process id
 * @param rankZeroPid     rank 0's process id, 0 when it could not be started
 * @param hostPort        the UDP port rank 0 sends from (the job's owner on every proxy)
 * @param ranks           placement of rank r at element r-1
 * @param protocol        {@code v1} or {@code v2}
 * @param jobId           v2: the job id; v1: 0
 * @param keySpec         v2: the key file list the job used, else (v1, or a job run with a job credential) {@code null}
 * @param launcherStarted when the launcher started, {@code null} when unknown
 * @param rankZeroStarted when rank 0 started, {@code null} when unknown
 * @param end             how the job ended, {@code null} while it runs (or when its launcher died)
 */
record JobFile(long launcherPid, long rankZeroPid, int hostPort, List<Placement> ranks, String protocol, long jobId,
               String keySpec, Instant launcherStarted, Instant rankZeroStarted, End end) {

    /** Start instants of one process as two readers see it differ by less than this. */
    private static final Duration SAME_START = Duration.ofSeconds(1);

    /** {@link End#exitStatus()} of a job whose launcher died before recording it: unknown. */
    static final int LAUNCHER_GONE = -1;

    /**
     * How a job ended.
     *
     * @param at          when the launcher recorded it
     * @param exitStatus  the launcher's exit status, or {@link #LAUNCHER_GONE} when the launcher had died and
     *                    {@code mpiproxy kill} stopped the job
     * @param stopReason  {@code timeout}, {@code SIGINT}, {@code SIGTERM}, {@code failure}, {@code abort},
     *                    {@code node-lost} (a node the job needed was lost), {@code kill} (the SIGTERM of
     *                    {@code mpiproxy kill}, which records it), or {@code null} when the job was not stopped
     * @param rankStatuses rank r's exit status at element r: code or 128 + signal, or one of the
     *                    negative codes of {@link V1Control}
     */
    record End(Instant at, int exitStatus, String stopReason, List<Integer> rankStatuses) {
    }

    boolean v2() {
        return "v2".equals(protocol);
    }

    /** @return this job, ended as {@code end} says */
    JobFile ended(End end) {
        return new JobFile(launcherPid, rankZeroPid, hostPort, ranks, protocol, jobId, keySpec, launcherStarted,
                rankZeroStarted, end);
    }

    /** @return the job's name for messages: its v2 id, or over v1 the file it is described in */
    String name(Path file) {
        return v2() ? JobRunner.Job.hex(jobId) : "of " + file;
    }

    /** @return the recorded end in words: {@code at TIME (exit status N[, stopped by REASON])} */
    String endText() {
        return "at " + end.at().truncatedTo(ChronoUnit.SECONDS) + " (" + (end.exitStatus() == LAUNCHER_GONE
                ? "its launcher had died" : "exit status " + end.exitStatus())
                + (end.stopReason() == null ? "" : ", stopped by " + (end.stopReason().equals("kill") ? "'mpiproxy kill'"
                : end.stopReason())) + ")";
    }

    /** @return whether the launcher still runs (its pid is alive and, when known, started when it did) */
    boolean launcherRuns() {
        return process(launcherPid, launcherStarted).isPresent();
    }

    /** @return rank 0's process while it still runs (not a later process with its pid) */
    Optional<ProcessHandle> rankZero() {
        return rankZeroPid == 0 ? Optional.empty() : process(rankZeroPid, rankZeroStarted);
    }

    /**
     * @param pid     a process id
     * @param started when the process of that id started, or {@code null} when unknown
     * @return the process, when it is alive and has not been replaced by another with its id
     */
    static Optional<ProcessHandle> process(long pid, Instant started) {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(p -> started == null
                || p.info().startInstant().map(s -> Duration.between(s, started).abs().compareTo(SAME_START) < 0)
                        .orElse(true));
    }

    /** @return when the process started, {@code null} when the system does not tell */
    static Instant startOf(ProcessHandle process) {
        return process.info().startInstant().orElse(null);
    }

    /**
     * @param file the job file
     * @return its content
     * @throws IOException              when it cannot be read
     * @throws IllegalArgumentException when it is malformed or does not exist
     */
    static JobFile read(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (NoSuchFileException e) {
            throw missing(file);
        }
        try {
            String protocol = p.getProperty("protocol");
            if (!"v1".equals(protocol) && !"v2".equals(protocol)) {
                throw new IllegalArgumentException("protocol=" + protocol + " is neither v1 nor v2");
            }
            long jobId = 0;
            String keySpec = null;
            if (protocol.equals("v2")) {
                jobId = Long.parseUnsignedLong(p.getProperty("job.id"), 16);
                keySpec = p.getProperty("key.files");
            }
            int size = Integer.parseInt(p.getProperty("world.size"));
            List<Placement> ranks = new ArrayList<>();
            for (int r = 1; r < size; r++) {
                String value = p.getProperty("rank." + r);
                String[] f = value.split(" ", 2);
                Hostfiles.Content c = Hostfiles.parse(file + " rank." + r, List.of(f[0]));
                Placement at = c.placements().get(0);
                ranks.add(new Placement(at.address(), at.port(), at.coreId(), f.length > 1 ? f[1] : at.address()));
            }
            return new JobFile(Long.parseLong(p.getProperty("launcher.pid")), Long.parseLong(p.getProperty("rank0.pid")),
                    Integer.parseInt(p.getProperty("host.port")), List.copyOf(ranks), protocol, jobId, keySpec,
                    instant(p, "launcher.started"), instant(p, "rank0.started"), end(p, size));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("job file " + file + " is malformed: " + e.getMessage(), e);
        }
    }

    /** @return the end the file records, or {@code null} for a running job ({@code state} absent or running) */
    private static End end(Properties p, int size) {
        String state = p.getProperty("state", "running");
        if (state.equals("running")) {
            return null;
        }
        if (!state.equals("ended")) {
            throw new IllegalArgumentException("state=" + state + " is neither running nor ended");
        }
        List<Integer> statuses = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            statuses.add(Integer.parseInt(p.getProperty("exit." + r, Integer.toString(V1Control.NO_REPLY))));
        }
        Instant at = instant(p, "ended.at");
        if (at == null) {
            throw new IllegalArgumentException("state=ended without ended.at");
        }
        return new End(at, Integer.parseInt(p.getProperty("exit.status")), p.getProperty("stop.reason"),
                List.copyOf(statuses));
    }

    private static Instant instant(Properties p, String key) {
        String text = p.getProperty(key);
        try {
            return text == null ? null : Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(key + "=" + text + " is not an ISO-8601 instant", e);
        }
    }

    /** @return the file's text: the running state, and the end when there is one */
    String text() {
        StringBuilder text = new StringBuilder();
        text.append("# mpiproxy job: read by 'mpiproxy status' and 'mpiproxy kill'\n");
        text.append("protocol=").append(protocol).append('\n');
        if (v2()) {
            text.append("job.id=").append(JobRunner.Job.hex(jobId)).append('\n');
            if (keySpec != null) {
                // a job run with a job credential names no key file: its owner asks the local socket again
                text.append("key.files=").append(keySpec.replace("\\", "\\\\")).append('\n');
            }
        }
        text.append("launcher.pid=").append(launcherPid).append('\n');
        if (launcherStarted != null) {
            text.append("launcher.started=").append(launcherStarted).append('\n');
        }
        text.append("rank0.pid=").append(rankZeroPid).append('\n');
        if (rankZeroStarted != null) {
            text.append("rank0.started=").append(rankZeroStarted).append('\n');
        }
        text.append("host.port=").append(hostPort).append('\n');
        text.append("world.size=").append(ranks.size() + 1).append('\n');
        for (int r = 1; r <= ranks.size(); r++) {
            Placement p = ranks.get(r - 1);
            text.append("rank.").append(r).append('=').append(p.hostEntry()).append(' ').append(p.node()).append('\n');
        }
        if (end == null) {
            text.append("state=running\n");
            return text.toString();
        }
        text.append("state=ended\n");
        text.append("ended.at=").append(end.at().truncatedTo(ChronoUnit.MILLIS)).append('\n');
        text.append("exit.status=").append(end.exitStatus()).append('\n');
        if (end.stopReason() != null) {
            text.append("stop.reason=").append(end.stopReason()).append('\n');
        }
        for (int r = 0; r < end.rankStatuses().size(); r++) {
            text.append("exit.").append(r).append('=').append(end.rankStatuses().get(r)).append('\n');
        }
        return text.toString();
    }

    /**
     * Writes the file atomically: a temporary file in the same directory, renamed over it, so a
     * reader sees the old content or the new, never part of it.
     *
     * @param file where
     * @throws IOException when it cannot be written
     */
    void write(Path file) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path temp = absolute.resolveSibling("." + absolute.getFileName() + "." + ProcessHandle.current().pid()
                + ".tmp");
        try {
            try (Writer out = Files.newBufferedWriter(temp, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                out.write(text());
            }
            try {
                Files.move(temp, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private static IllegalArgumentException missing(Path file) {
        return new IllegalArgumentException("job file " + file + " does not exist (written by 'mpiproxy run"
                + " --job-file " + file + "' when the job starts, and kept with the job's end when it ends)");
    }
}
