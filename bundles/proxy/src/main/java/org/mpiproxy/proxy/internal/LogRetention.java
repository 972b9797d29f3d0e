package org.mpiproxy.proxy.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the rank log directories {@code job-<16 hex>} of finished jobs that are older than
 * an age or beyond a total size, oldest first; a job with a live rank keeps its logs.
 */
final class LogRetention {

    private static final Logger LOG = LoggerFactory.getLogger(LogRetention.class);

    /** Bytes in the megabyte of {@code log.retention.megabytes}. */
    static final long MEGABYTE = 1024L * 1024L;

    private static final String PREFIX = "job-";

    /**
     * Validated limits.
     *
     * @param maxAge   delete logs of finished jobs last written longer ago than this; zero = no limit
     * @param maxBytes delete the oldest logs of finished jobs while all take more; zero = no limit
     */
    record Limits(Duration maxAge, long maxBytes) {

        /**
         * @param days      {@code log.retention.days}
         * @param megabytes {@code log.retention.megabytes}
         * @return the limits
         * @throws IllegalArgumentException naming the bad key and its value
         */
        static Limits of(int days, long megabytes) {
            if (days < 0) {
                throw new IllegalArgumentException("log.retention.days=" + days + " must be >= 0 (0: no age limit)");
            }
            if (megabytes < 0 || megabytes > Long.MAX_VALUE / MEGABYTE) {
                throw new IllegalArgumentException("log.retention.megabytes=" + megabytes
                        + " must be >= 0 (0: no size limit)");
            }
            return new Limits(Duration.ofDays(days), megabytes * MEGABYTE);
        }

        boolean unlimited() {
            return maxAge.isZero() && maxBytes == 0;
        }
    }

    /** One job's log directory. */
    private record JobLogs(Path directory, long jobId, Instant lastWritten, long bytes) {
    }

    private LogRetention() {
    }

    /**
     * @param logDirectory the directory of the jobs' log directories
     * @param limits       the limits
     * @param liveJobs     the ids of the jobs with a live rank, asked after the directory is listed
     *                     (a job's directory is created after the job)
     * @param now          the current time
     * @return the directories deleted, oldest first
     * @throws IOException when the log directory cannot be listed
     */
    static List<Path> sweep(Path logDirectory, Limits limits, Supplier<Set<Long>> liveJobs, Instant now)
            throws IOException {
        if (limits.unlimited() || !Files.isDirectory(logDirectory, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<JobLogs> all = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(logDirectory, PREFIX + "*")) {
            for (Path dir : dirs) {
                Long jobId = jobId(dir.getFileName().toString());
                if (jobId != null && Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                    all.add(measure(dir, jobId));
                }
            }
        }
        Set<Long> live = liveJobs.get();
        all.sort(Comparator.comparing(JobLogs::lastWritten));
        long total = 0;
        for (JobLogs j : all) {
            total += j.bytes();
        }
        List<Path> deleted = new ArrayList<>();
        Instant oldest = limits.maxAge().isZero() ? Instant.MIN : now.minus(limits.maxAge());
        for (JobLogs j : all) {
            boolean tooOld = j.lastWritten().isBefore(oldest);
            boolean tooMuch = limits.maxBytes() > 0 && total > limits.maxBytes();
            if (!tooOld && !tooMuch) {
                break;
            }
            if (live.contains(j.jobId())) {
                continue;
            }
            delete(j.directory());
            total -= j.bytes();
            deleted.add(j.directory());
        }
        return deleted;
    }

    /** @return the job id of a directory name {@code job-<16 hex>}, or {@code null} */
    private static Long jobId(String name) {
        String hex = name.substring(PREFIX.length());
        if (hex.length() != 16) {
            return null;
        }
        try {
            return Long.parseUnsignedLong(hex, 16);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static JobLogs measure(Path dir, long jobId) throws IOException {
        Instant last = Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS).toInstant();
        long bytes = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                Instant m = a.lastModifiedTime().toInstant();
                if (m.isAfter(last)) {
                    last = m;
                }
                bytes += a.isRegularFile() ? a.size() : 0;
            }
        }
        return new JobLogs(dir, jobId, last, bytes);
    }

    /** Deletes a directory tree; links are deleted, never followed. */
    private static void delete(Path dir) throws IOException {
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.deleteIfExists(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * One sweep of the proxy's timer: deletes the output of finished jobs beyond the limits and
     * logs what went; a failure is logged and the next sweep tries again.
     *
     * @param directory the rank output directory
     * @param limits    the retention limits
     * @param jobs      the proxy's jobs now: the output of a job with a live rank is kept
     */
    static void sweepFinished(Path directory, Limits limits, Supplier<List<JobInfo>> jobs) {
        try {
            List<Path> deleted = sweep(directory, limits, () -> liveJobs(jobs.get()), Instant.now());
            if (!deleted.isEmpty()) {
                LOG.info("deleted the output of {} finished jobs beyond log.retention.days={} or"
                        + " log.retention.megabytes={}: {}", deleted.size(), limits.maxAge().toDays(),
                        limits.maxBytes() / MEGABYTE, deleted);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot apply the log retention to {}: {}", directory, e.toString());
        }
    }

    private static Set<Long> liveJobs(List<JobInfo> jobs) {
        Set<Long> live = new java.util.HashSet<>();
        for (JobInfo job : jobs) {
            for (RankInfo r : job.ranks()) {
                if (r.state() != RankInfo.State.EXITED && r.state() != RankInfo.State.FAILED) {
                    live.add(job.jobId());
                }
            }
        }
        return live;
    }
}
