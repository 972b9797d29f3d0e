package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.mpiproxy.api.ChannelManager;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.ProcessGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this proxy started, on disk, so that the next run can clean up after a crash.
 * <p>
 * One file per live job, {@code <state>/job-<16 hex>.ranks}, one line per started rank:
 * {@code <rankId> <pid> <start time>} (the start time is field 22 of {@code /proc/<pid>/stat},
 * since pids are reused). The file goes when the job ends. {@link #sweep} (at the proxy's start)
 * kills the process group of every recorded rank whose pid and start time still match, and
 * removes the recorded jobs' shared-memory directories. Relay thread, or the activating thread
 * before the relay starts; failures are logged, never thrown: a ledger that cannot be written
 * must not stop jobs.
 */
final class RankLedger {

    /** Counts of one sweep. */
    record Sweep(int jobs, int groupsKilled) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(RankLedger.class);
    private static final String SUFFIX = ".ranks";
    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private final Path directory;

    /**
     * @param directory the state directory; created (owner-only) when missing, refused when someone
     *                  else could write it
     */
    RankLedger(Path directory) {
        this.directory = directory;
    }

    Path directory() {
        return directory;
    }

    Path file(long jobId) {
        return directory.resolve("job-" + Job.hex(jobId) + SUFFIX);
    }

    /** Records a started rank of a job. */
    void rankStarted(long jobId, int rankId, long pid) {
        try {
            Optional<ProcStat> stat = ProcStat.read(pid);
            if (stat.isEmpty()) {
                // already ended and reaped: nothing to clean up later
                return;
            }
            ensureDirectory();
            Files.writeString(file(jobId), rankId + " " + pid + " " + stat.get().startTime() + "\n",
                    StandardCharsets.US_ASCII, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot record rank {} of job {} (pid {}) in {}: {}", rankId, Job.hex(jobId), pid, directory,
                    e.toString());
        }
    }

    /** Forgets a job that has ended cleanly. */
    void jobEnded(long jobId) {
        try {
            Files.deleteIfExists(file(jobId));
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot remove {}: {}", file(jobId), e.toString());
        }
    }

    /**
     * Cleans up after a previous run that did not end its jobs: kills their surviving rank
     * process groups (only where pid and start time match the record) and removes their
     * shared-memory directories, then forgets them.
     *
     * @param channels removes the jobs' directories
     * @param keep     jobs still running here (taken over from a previous revision): left alone
     * @return what was found
     */
    Sweep sweep(ChannelManager channels, java.util.Set<Long> keep) {
        if (!trusted("not sweeping what a previous run left")) {
            return new Sweep(0, 0);
        }
        int jobs = 0;
        int killed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "job-*" + SUFFIX)) {
            for (Path file : files) {
                Long jobId = jobId(file);
                if (jobId == null || keep.contains(jobId)) {
                    continue;
                }
                jobs++;
                killed += killRecorded(file, jobId);
                try {
                    channels.release(jobId);
                    Files.deleteIfExists(file);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("cannot remove what job {} of a previous run left: {}", Job.hex(jobId), e.toString());
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot read the state directory {}: {}", directory, e.toString());
        }
        if (jobs > 0) {
            LOG.warn("cleaned up after a previous run: {} jobs, {} rank process groups killed", jobs, killed);
        }
        // what ended node keepers recorded about these ranks is of no use any more
        KeeperPolicy.removeEnded();
        return new Sweep(jobs, killed);
    }

    /**
     * Kills the process group of every recorded rank whose pid and start time still match, and
     * keeps the records: the {@link #sweep} at the channel manager's binding removes them with the
     * jobs' directories. For jobs no proxy takes over (a restart state that cannot be read), at once
     * rather than when the channel manager comes.
     *
     * @return how many groups were killed
     */
    int stopRecorded() {
        if (!trusted("not stopping the ranks a previous run left")) {
            return 0;
        }
        int killed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "job-*" + SUFFIX)) {
            for (Path file : files) {
                Long jobId = jobId(file);
                if (jobId != null) {
                    killed += killRecorded(file, jobId);
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot read the state directory {}: {}", directory, e.toString());
        }
        return killed;
    }

    /** @return whether the directory exists and only this user could have written its records; logs why not */
    private boolean trusted(String refusal) {
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        // what the records name is killed: records someone else could have written are not read
        String problem = PrivateDirectories.problem(directory, "state.directory=" + directory);
        if (problem != null) {
            LOG.error("{}: {}", refusal, problem);
            return false;
        }
        return true;
    }

    /** @return the job a record is of, or {@code null} (logged) when its name is not a record's */
    private static Long jobId(Path file) {
        String name = file.getFileName().toString();
        try {
            return Long.parseUnsignedLong(name.substring(4, name.length() - SUFFIX.length()), 16);
        } catch (NumberFormatException e) {
            LOG.warn("ignoring {}: not a job's record", file);
            return null;
        }
    }

    private static int killRecorded(Path file, long jobId) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            LOG.warn("cannot read {}: {}", file, e.toString());
            return 0;
        }
        int killed = 0;
        for (String line : lines) {
            String[] fields = line.trim().split(" ");
            if (fields.length != 3) {
                continue;
            }
            try {
                long pid = Long.parseLong(fields[1]);
                long start = Long.parseLong(fields[2]);
                Optional<ProcStat> stat = ProcStat.read(pid);
                // the very process we started, still leading its own group: kill the group
                if (pid > 1 && stat.isPresent() && stat.get().startTime() == start && stat.get().isRunning()
                        && stat.get().pgrp() == pid) {
                    LOG.warn("killing rank {} of job {} left by a previous run (pid {})", fields[0], Job.hex(jobId),
                            pid);
                    ProcessGroup.kill(pid, KILL_WAIT);
                    killed++;
                }
            } catch (NumberFormatException | IOException e) {
                LOG.warn("ignoring line '{}' of {}: {}", line, file, e.toString());
            }
        }
        return killed;
    }

    private void ensureDirectory() throws IOException {
        PrivateDirectories.restrict(directory, PrivateDirectories.OWNER_ONLY, "state.directory=" + directory);
    }
}
