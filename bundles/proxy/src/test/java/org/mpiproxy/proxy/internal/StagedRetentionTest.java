package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import com.sun.security.auth.module.UnixSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.MpiErrors;

/**
 * The programs users staged are swept as the ranks' output is: not used for the age, or beyond the
 * size of one user, oldest use first, never one a live rank names; a user's directory left empty goes,
 * the shared programs and a refused directory stay.
 */
class StagedRetentionTest {

    private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
    private static final long MB = LogRetention.MEGABYTE;
    private static final RankIdentity ME = new RankIdentity(new UnixSystem().getUid(), new UnixSystem().getGid());

    @TempDir
    Path staged;

    /** The user's own directory, as StagedPrograms makes it: hers, rwx------. */
    private Path own() throws IOException {
        Path own = StagedFiles.userDirectory(staged, ME.uid());
        if (!Files.isDirectory(own)) {
            Files.createDirectory(own,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        return own;
    }

    /** A program of {@code bytes} (sparse) in {@code dir}, written {@code written} ago and read {@code read} ago. */
    private static Path program(Path dir, char digit, long bytes, Duration written, Duration read) throws IOException {
        Path file = dir.resolve(StagedFiles.PREFIX + String.valueOf(digit).repeat(64));
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(bytes);
        }
        Files.setAttribute(file, "lastAccessTime", FileTime.from(NOW.minus(read)));
        Files.setLastModifiedTime(file, FileTime.from(NOW.minus(written)));
        return file;
    }

    private List<Path> sweep(int days, long megabytes, Set<String> live) throws IOException {
        return StagedRetention.sweep(staged, StagedRetention.Limits.of(days, megabytes), () -> live, NOW);
    }

    @Test
    void shouldDeleteAUsersProgramsNotUsedForTheAgeButNeverOneALiveRankRuns() throws IOException {
        Path unused = program(own(), 'a', 10, Duration.ofDays(20), Duration.ofDays(20));
        Path live = program(own(), 'b', 10, Duration.ofDays(30), Duration.ofDays(30));
        Path runLately = program(own(), 'c', 10, Duration.ofDays(40), Duration.ofDays(1));
        Path stagedLately = program(own(), 'd', 10, Duration.ofDays(2), Duration.ofDays(2));
        Path shared = program(staged, 'e', 10, Duration.ofDays(400), Duration.ofDays(400));

        assertEquals(List.of(unused), sweep(14, 0, Set.of(live.getFileName().toString())));

        assertFalse(Files.exists(unused));
        assertTrue(Files.exists(live), "a live rank's program stays");
        assertTrue(Files.exists(runLately), "run a day ago: its access time counts");
        assertTrue(Files.exists(stagedLately));
        assertTrue(Files.exists(shared), "the shared programs are not swept");
    }

    @Test
    void shouldDeleteAUsersLeastRecentlyUsedProgramsWhileHersTakeMoreThanTheSize() throws IOException {
        Path oldest = program(own(), 'a', 2 * MB, Duration.ofHours(5), Duration.ofHours(5));
        Path live = program(own(), 'b', 2 * MB, Duration.ofHours(4), Duration.ofHours(4));
        Path middle = program(own(), 'c', 2 * MB, Duration.ofHours(3), Duration.ofHours(3));
        Path newest = program(own(), 'd', 2 * MB, Duration.ofHours(9), Duration.ofHours(1));

        assertEquals(List.of(oldest, middle), sweep(0, 5, Set.of(live.getFileName().toString())),
                "8 MB: the least recently used ones go until 4 MB are left");
        assertTrue(Files.exists(live));
        assertTrue(Files.exists(newest));
    }

    @Test
    void shouldRemoveAUsersDirectoryLeftEmptyButNotOneStillHoldingAProgram() throws IOException {
        Path own = own();
        Path unused = program(own, 'a', 10, Duration.ofDays(20), Duration.ofDays(20));

        assertEquals(List.of(unused, own), sweep(14, 0, Set.of()), "her last program, then her directory");
        assertFalse(Files.exists(own));

        Path kept = program(own(), 'b', 10, Duration.ofDays(20), Duration.ofDays(20));
        assertEquals(List.of(), sweep(14, 0, Set.of(kept.getFileName().toString())));
        assertTrue(Files.exists(kept), "a live rank's program keeps its directory");
    }

    @Test
    void shouldRemoveAnEmptyDirectoryWithoutLimitsAndKeepEveryProgram() throws IOException {
        Path old = program(own(), 'a', 10, Duration.ofDays(400), Duration.ofDays(400));
        assertEquals(List.of(), sweep(0, 0, Set.of()));
        assertTrue(Files.exists(old));

        Files.delete(old);
        assertEquals(List.of(own()), sweep(0, 0, Set.of()));
    }

    @Test
    void shouldLeaveADirectoryOthersMayWriteAndOtherNamesAlone() throws IOException {
        Path own = own();
        Path old = program(own, 'a', 10, Duration.ofDays(20), Duration.ofDays(20));
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path notes = Files.createDirectory(staged.resolve("unused"));

        assertEquals(List.of(), sweep(14, 0, Set.of()));
        assertTrue(Files.exists(old), "a directory refused for its user is not touched");
        assertTrue(Files.exists(notes));
    }

    @Test
    void shouldNameTheLiveRanksProgramsOfEveryJob() {
        RankInfo running = new RankInfo(0, 1, "sha256-aa", 10, RankInfo.State.RUNNING, 0, 0, 0, 0, 0);
        RankInfo ended = new RankInfo(1, 1, "sha256-bb", 11, RankInfo.State.EXITED, 0, 0, 0, 0, 0);
        RankInfo failed = new RankInfo(2, 1, "sha256-cc", 12, RankInfo.State.FAILED, 1, 0, 0, 0, 0);

        assertEquals(Set.of("sha256-aa"), StagedRetention.livePrograms(List.of(
                new JobInfo(1, "v2", "a", NOW, List.of(running, ended)),
                new JobInfo(2, "v2", "b", NOW, List.of(failed)))));
    }

    @Test
    void shouldRefuseNegativeLimitsNamingTheKey() {
        assertEquals("stage.user.retention.days=-1 must be >= 0 (0: no age limit)",
                assertThrows(IllegalArgumentException.class, () -> StagedRetention.Limits.of(-1, 0)).getMessage());
        assertEquals("stage.user.retention.megabytes=-2 must be >= 0 (0: no size limit)",
                assertThrows(IllegalArgumentException.class, () -> StagedRetention.Limits.of(0, -2)).getMessage());
    }

    @Test
    void shouldStoreAProgramWhoseDirectoryASweepRemovedWhileItArrived() throws IOException {
        byte[] content = new byte[3000];
        Arrays.fill(content, (byte) 7);
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms s = new StagedPrograms(staged);
        ByteBuffer first = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH + 2000).put(digest).put(content, 0, 2000);
        assertEquals(MpiErrors.SUCCESS, s.onFragment(ME, content.length, 0, 2, 2000, first, 0, first.capacity(), 0)
                .result());
        Path own = StagedFiles.userDirectory(staged, ME.uid());
        assertTrue(Files.isDirectory(own), "made at the first fragment");

        assertEquals(List.of(own), sweep(14, 0, Set.of()), "empty: its program is still a partial file");

        ByteBuffer last = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH + 1000).put(digest).put(content, 2000, 1000);
        StagedPrograms.Outcome o = s.onFragment(ME, content.length, 1, 2, 2000, last, 0, last.capacity(), 0);
        assertEquals(MpiErrors.SUCCESS, o.result(), o.problem());
        assertTrue(o.complete());
        assertTrue(Files.isRegularFile(own.resolve(StagedFiles.name(digest))), "her directory made again");
    }

    @Test
    void shouldKeepAProgramAProbeAskedForSinceItsLauncherSendsItsExecNext() throws IOException {
        byte[] content = {1, 2, 3};
        byte[] digest = StagedPrograms.sha256(content);
        Path file = own().resolve(StagedFiles.name(digest));
        Files.write(file, content);
        Instant longAgo = Instant.now().minus(Duration.ofDays(30));
        Files.setAttribute(file, "lastAccessTime", FileTime.from(longAgo));
        Files.setLastModifiedTime(file, FileTime.from(longAgo));
        ByteBuffer probe = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH).put(digest);
        StagedPrograms.Outcome o = new StagedPrograms(staged).onFragment(ME, content.length, 0, 0, 1448, probe, 0,
                probe.capacity(), 0);
        assertTrue(o.complete(), "the node has it");

        assertEquals(List.of(), StagedRetention.sweep(staged, StagedRetention.Limits.of(14, 0), Set::of,
                Instant.now()), "used a moment ago");
        assertTrue(Files.isRegularFile(file));
    }
}
