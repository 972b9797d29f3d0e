package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankOutputListener;

/** A rank's log files are its owner's to read: owner-only directories and files, or a configured group's read. */
class RankLogModesTest {

    /** A ceiling that only catches a hang. */
    private static final long CEILING_SECONDS = 120;

    @TempDir
    Path temp;

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static int gid(Path path) throws IOException {
        return (Integer) Files.getAttribute(path, "unix:gid", LinkOption.NOFOLLOW_LINKS);
    }

    private SpawnedRankProcess run(Path jobDirectory) throws LaunchException {
        return RankProcessStarter.start("sh", List.of("/bin/sh", "-c", "echo out; echo err >&2"), Map.of(),
                jobDirectory, 1L, 1, 0, OutputSettings.DEFAULT);
    }

    @Test
    void shouldWriteLogsReadableByTheirOwnerOnly() throws Exception {
        Path root = temp.resolve("data").resolve("logs");
        Path job = root.resolve("job-0000000000000001");

        assertEquals(0, run(job).onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));

        assertEquals("rwx------", mode(root));
        assertEquals("rwx------", mode(job));
        assertEquals("rw-------", mode(RankProcessStarter.outputFile(job, 1)));
        assertEquals("rw-------", mode(RankProcessStarter.errorFile(job, 1)));
        assertEquals("out\n", Files.readString(RankProcessStarter.outputFile(job, 1)));
    }

    @Test
    void shouldTakeAwayWhatAnExistingLogFileGaveOthers() throws Exception {
        Path job = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Path out = Files.writeString(RankProcessStarter.outputFile(job, 1), "before\n");
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rw-rw-rw-"));

        assertEquals(0, run(job).onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));

        assertEquals("rw-------", mode(out));
        assertEquals("before\nout\n", Files.readString(out), "appended to");
    }

    @Test
    void shouldTakeAwayWhatAnExistingJobLogDirectoryGaveOthers() throws Exception {
        Path job = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Files.setPosixFilePermissions(job, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path out = Files.writeString(RankProcessStarter.outputFile(job, 1), "before\n");
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rw-r--r--"));

        assertEquals(0, run(job).onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));

        assertEquals("rwx------", mode(job));
        assertEquals("rw-------", mode(out));
        assertEquals("rw-------", mode(RankProcessStarter.errorFile(job, 1)));
    }

    @Test
    void shouldLetTheLogGroupReadWhenTheLogDirectoryIsGivenToIt() throws Exception {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a directory to any group needs root");
        int group = 100;
        Path root = Files.createDirectory(temp.resolve("logs"));
        Files.setPosixFilePermissions(root, RankLogFiles.DIRECTORY_GROUP_READ);
        Files.setAttribute(root, "unix:gid", group, LinkOption.NOFOLLOW_LINKS);
        Path job = root.resolve("job-0000000000000001");

        assertEquals(0, run(job).onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));

        assertEquals("rwxr-x---", mode(job));
        assertEquals(group, gid(job));
        Path out = RankProcessStarter.outputFile(job, 1);
        assertEquals("rw-r-----", mode(out));
        assertEquals(group, gid(out));
    }

    @Test
    void shouldRefuseALogDirectoryOthersCanWrite() throws IOException {
        Path root = Files.createDirectory(temp.resolve("logs"));
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));

        LaunchException e = assertThrows(LaunchException.class, () -> run(root.resolve("job-0000000000000001")));

        assertTrue(e.getMessage().contains("log directory " + root + " can be written by its group or others"
                + " (rwxrwxrwx); refusing to use it"), e.getMessage());
        try (var entries = Files.list(root)) {
            assertEquals(0, entries.count());
        }
    }

    @Test
    void shouldRefuseAJobLogDirectoryOfAnotherUser() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a directory to another user needs root");
        Path job = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Files.setAttribute(job, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);

        LaunchException e = assertThrows(LaunchException.class, () -> run(job));

        assertTrue(e.getMessage().contains("is owned by uid 65534"), e.getMessage());
    }

    @Test
    void shouldNotFollowALinkInThePlaceOfALogFileAndStillDrainTheOutput() throws Exception {
        Path job = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Path victim = Files.writeString(temp.resolve("victim"), "untouched\n");
        Path out = Files.createSymbolicLink(RankProcessStarter.outputFile(job, 1), victim);
        ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        RankOutputListener listener = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                lines.add(text);
            }
        };

        CompletableFuture<Long> done = RankOutput.start(new ByteArrayInputStream("one\ntwo\n".getBytes(
                StandardCharsets.UTF_8)), out, OutputSettings.DEFAULT_CAP_BYTES, false, 1L, 1,
                RankOutputListener.Stream.STDOUT, listener);

        ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(CEILING_SECONDS,
                TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("log file " + out + " is a symbolic link"),
                e.getCause().getMessage());
        assertEquals("untouched\n", Files.readString(victim), "the link's target is not written");
        assertEquals(List.of("one", "two"), List.copyOf(lines), "the output is still read and passed on");
    }
}
