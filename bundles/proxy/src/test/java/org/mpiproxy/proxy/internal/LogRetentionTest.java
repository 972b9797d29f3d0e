package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogRetentionTest {

    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

    @TempDir
    Path logs;

    /** A job's log directory with one output file of {@code bytes} (sparse), last written {@code age} ago. */
    private Path job(long jobId, Duration age, long bytes) throws IOException {
        return jobAt(jobId, NOW.minus(age), bytes);
    }

    private Path jobAt(long jobId, Instant written, long bytes) throws IOException {
        Path dir = Files.createDirectories(logs.resolve("job-" + Job.hex(jobId)));
        Path out = dir.resolve("rank-1.out");
        try (RandomAccessFile f = new RandomAccessFile(out.toFile(), "rw")) {
            f.setLength(bytes);
        }
        FileTime time = FileTime.from(written);
        Files.setLastModifiedTime(out, time);
        Files.setLastModifiedTime(dir, time);
        return dir;
    }

    @Test
    void shouldDeleteFinishedJobsOlderThanTheAgeButNeverALiveOne() throws IOException {
        Path old = job(1, Duration.ofDays(20), 10);
        Path oldButLive = job(2, Duration.ofDays(30), 10);
        Path recent = job(3, Duration.ofDays(2), 10);
        Path other = Files.createDirectories(logs.resolve("notes"));

        List<Path> deleted = LogRetention.sweep(logs, LogRetention.Limits.of(14, 0), () -> Set.of(2L), NOW);

        assertEquals(List.of(old), deleted);
        assertFalse(Files.exists(old));
        assertTrue(Files.exists(oldButLive.resolve("rank-1.out")), "a running rank's output stays");
        assertTrue(Files.exists(recent));
        assertTrue(Files.exists(other));
    }

    @Test
    void shouldDeleteTheOldestFinishedJobsWhileAllTakeMoreThanTheSizeLimit() throws IOException {
        long mb = LogRetention.MEGABYTE;
        Path oldest = job(1, Duration.ofHours(5), 2 * mb);
        Path live = job(2, Duration.ofHours(4), 2 * mb);
        Path middle = job(3, Duration.ofHours(3), 2 * mb);
        Path newest = job(4, Duration.ofHours(1), 2 * mb);

        List<Path> deleted = LogRetention.sweep(logs, LogRetention.Limits.of(0, 5), () -> Set.of(2L), NOW);

        assertEquals(List.of(oldest, middle), deleted, "8 MB: the oldest finished ones go until 4 MB are left");
        assertTrue(Files.exists(live));
        assertTrue(Files.exists(newest));
    }

    @Test
    void shouldKeepEverythingWithoutLimits() throws IOException {
        job(1, Duration.ofDays(400), 10);
        assertEquals(List.of(), LogRetention.sweep(logs, LogRetention.Limits.of(0, 0), Set::of, NOW));
        assertEquals(List.of(), LogRetention.sweep(logs.resolve("absent"), LogRetention.Limits.of(1, 1), Set::of,
                NOW));
    }

    @Test
    void shouldRefuseNegativeLimitsNamingKeyAndValue() {
        assertEquals("log.retention.days=-1 must be >= 0 (0: no age limit)",
                assertThrows(IllegalArgumentException.class, () -> LogRetention.Limits.of(-1, 0)).getMessage());
        assertEquals("log.retention.megabytes=-2 must be >= 0 (0: no size limit)",
                assertThrows(IllegalArgumentException.class, () -> LogRetention.Limits.of(0, -2)).getMessage());
    }

    @Test
    void shouldSweepTheLogDirectoryWhenTheProxyStarts() throws Exception {
        Path old = jobAt(7, Instant.now().minus(Duration.ofDays(3)), 10);
        Path recent = jobAt(8, Instant.now(), 10);
        ProxyComponent component = new ProxyComponent(TestConfigs.of(ProxyConfig.class,
                Map.of("log.directory", logs.toString(), "log.retention.days", 1, "v2.enabled", false)));
        try {
            Await.until(() -> !Files.exists(old), "the old output removed");
            assertFalse(Files.exists(old), "the output of a job finished 3 days ago goes at start");
            assertTrue(Files.exists(recent));
        } finally {
            component.deactivate();
        }
    }

    @Test
    void shouldSweepTheLogDirectoryWhenTheLimitsChange() throws Exception {
        Path old = jobAt(9, Instant.now().minus(Duration.ofDays(3)), 10);
        Path recent = jobAt(10, Instant.now(), 10);
        ProxyComponent component = new ProxyComponent(TestConfigs.of(ProxyConfig.class,
                Map.of("log.directory", logs.toString(), "log.retention.days", 14, "v2.enabled", false)));
        try {
            assertEquals(null, component.reconfigure(TestConfigs.of(ProxyConfig.class,
                    Map.of("log.directory", logs.toString(), "log.retention.days", 1, "v2.enabled", false))));
            Await.until(() -> !Files.exists(old), "the old output removed");
            assertFalse(Files.exists(old), "a 3 days old output goes once the limit is 1 day, not 10 minutes later");
            assertTrue(Files.exists(recent));
        } finally {
            component.deactivate();
        }
    }
}
