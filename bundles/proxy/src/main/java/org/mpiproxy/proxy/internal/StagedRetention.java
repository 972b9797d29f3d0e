package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.process.StagedFiles;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the programs users staged ({@code staged/u<uid>/sha256-*}, docs/protocol-v2.md 5.8) that
 * were not used for an age, or beyond a size per user, oldest first, as {@link LogRetention} does for
 * the ranks' output; a user's directory left empty goes too. A program is used when it is staged or
 * run: its last use is the later of its modification and access times (a file system mounted
 * {@code noatime} keeps the first only). A program that a live rank (any job's) names is kept; an empty
 * directory goes whatever the limits (0 turns a limit off). The
 * shared directory, the operators' programs, is not swept. A directory that is refused for its user
 * ({@link StagedFiles#problem}) is left as it is.
 */
final class StagedRetention {

    private static final Logger LOG = LoggerFactory.getLogger(StagedRetention.class);

    /**
     * Validated limits.
     *
     * @param maxAge   delete a user's program not used for longer than this; zero = no limit
     * @param maxBytes delete a user's least recently used programs while all of hers take more; zero = no limit
     */
    record Limits(Duration maxAge, long maxBytes) {

        /**
         * @param days      {@code stage.user.retention.days}
         * @param megabytes {@code stage.user.retention.megabytes}
         * @return the limits
         * @throws IllegalArgumentException naming the bad key and its value
         */
        static Limits of(int days, long megabytes) {
            if (days < 0) {
                throw new IllegalArgumentException("stage.user.retention.days=" + days
                        + " must be >= 0 (0: no age limit)");
            }
            if (megabytes < 0 || megabytes > Long.MAX_VALUE / LogRetention.MEGABYTE) {
                throw new IllegalArgumentException("stage.user.retention.megabytes=" + megabytes
                        + " must be >= 0 (0: no size limit)");
            }
            return new Limits(Duration.ofDays(days), megabytes * LogRetention.MEGABYTE);
        }

        /** @return the limits of a configuration */
        static Limits of(ProxyConfig config) {
            return of(config.stage_user_retention_days(), config.stage_user_retention_megabytes());
        }
    }

    /** One staged program of a user. */
    private record Program(Path file, Instant lastUsed, long bytes) {
    }

    private StagedRetention() {
    }

    /**
     * @param staged       the directory of staged programs ({@link StagedFiles#directory})
     * @param limits       the limits
     * @param livePrograms the programs live ranks name, asked after the directories are listed
     * @param now          the current time
     * @return what was deleted: programs, then their directory when it was left empty
     * @throws IOException when the staged directory cannot be listed
     */
    static List<Path> sweep(Path staged, Limits limits, Supplier<Set<String>> livePrograms, Instant now)
            throws IOException {
        List<Path> deleted = new ArrayList<>();
        if (!Files.isDirectory(staged, LinkOption.NOFOLLOW_LINKS)) {
            return deleted;
        }
        List<Path> users = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(staged, StagedFiles.USER_PREFIX + "*")) {
            for (Path dir : dirs) {
                String uid = dir.getFileName().toString().substring(StagedFiles.USER_PREFIX.length());
                if (uid.matches("[0-9]{1,10}") && StagedFiles.problem(dir, Long.parseLong(uid)) == null) {
                    users.add(dir);
                }
            }
        }
        List<List<Program>> programs = new ArrayList<>();
        for (Path dir : users) {
            programs.add(list(dir));
        }
        Set<String> live = livePrograms.get();
        Instant oldest = limits.maxAge().isZero() ? Instant.MIN : now.minus(limits.maxAge());
        for (int i = 0; i < users.size(); i++) {
            List<Program> hers = programs.get(i);
            long total = 0;
            for (Program p : hers) {
                total += p.bytes();
            }
            for (Program p : hers) {
                boolean tooOld = p.lastUsed().isBefore(oldest);
                boolean tooMuch = limits.maxBytes() > 0 && total > limits.maxBytes();
                if (!tooOld && !tooMuch) {
                    break;
                }
                if (live.contains(p.file().getFileName().toString())) {
                    continue;
                }
                Files.deleteIfExists(p.file());
                total -= p.bytes();
                deleted.add(p.file());
            }
            try {
                // only an empty directory can be removed; a program staged meanwhile keeps it
                Files.delete(users.get(i));
                deleted.add(users.get(i));
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                // hers still
            }
        }
        return deleted;
    }

    /** @return a user's programs, least recently used first */
    private static List<Program> list(Path dir) throws IOException {
        List<Program> hers = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, StagedFiles.PREFIX + "*")) {
            for (Path f : files) {
                PosixFileAttributes a = Files.readAttributes(f, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (a.isRegularFile()) {
                    Instant written = a.lastModifiedTime().toInstant();
                    Instant read = a.lastAccessTime().toInstant();
                    hers.add(new Program(f, read.isAfter(written) ? read : written, a.size()));
                }
            }
        }
        hers.sort(Comparator.comparing(Program::lastUsed));
        return hers;
    }

    /**
     * {@link #sweepUsers(Path, Limits, Supplier)} of the node's staged directory ({@link StagedFiles#directory}).
     *
     * @param limits the limits
     * @param jobs   the proxy's jobs now
     */
    static void sweepUsers(Limits limits, Supplier<List<JobInfo>> jobs) {
        sweepUsers(StagedFiles.directory(System::getProperty), limits, jobs);
    }

    /**
     * One sweep of the proxy's timer, with the log sweep: deletes users' programs beyond the limits and
     * logs what went; a failure is logged and the next sweep tries again.
     *
     * @param staged the directory of staged programs
     * @param limits the limits
     * @param jobs   the proxy's jobs now: a program a live rank names is kept
     */
    static void sweepUsers(Path staged, Limits limits, Supplier<List<JobInfo>> jobs) {
        try {
            List<Path> deleted = sweep(staged, limits, () -> livePrograms(jobs.get()), Instant.now());
            if (!deleted.isEmpty()) {
                LOG.info("deleted {} staged programs and directories of users beyond stage.user.retention.days={}"
                        + " or stage.user.retention.megabytes={}: {}", deleted.size(), limits.maxAge().toDays(),
                        limits.maxBytes() / LogRetention.MEGABYTE, deleted);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot apply the retention of users' staged programs to {}: {}", staged, e.toString());
        }
    }

    /**
     * Marks a stored program as used now (its access time), so that the sweep keeps it for the age: a
     * launcher that was told the node has it sends its EXEC next. Best effort: a file that cannot be
     * touched keeps its times.
     */
    static void used(Path file) {
        try {
            Files.getFileAttributeView(file, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setTimes(null, FileTime.from(Instant.now()), null);
        } catch (IOException e) {
            LOG.debug("cannot mark {} as used: {}", file, e.toString());
        }
    }

    /** @return the program names of the ranks not ended, of every job */
    static Set<String> livePrograms(List<JobInfo> jobs) {
        Set<String> live = new HashSet<>();
        for (JobInfo job : jobs) {
            for (RankInfo r : job.ranks()) {
                if (r.state() != RankInfo.State.EXITED && r.state() != RankInfo.State.FAILED) {
                    live.add(r.program());
                }
            }
        }
        return live;
    }
}
