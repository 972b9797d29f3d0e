package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankOutputListener;

/**
 * A rank of a job started by a user (docs/protocol-v2.md 4.1) runs as that user, and its files are
 * that user's alone: log directory and files, channel and its job directory, FIFOs. Nothing in
 * their places that is a link or another file's second name is followed or given away.
 */
class JobUserTest {

    /** A ceiling that only catches a hang. */
    private static final long CEILING_SECONDS = 120;
    private static final RankIdentity NOBODY = new RankIdentity(65534, 65534);

    @TempDir
    Path temp;

    @BeforeEach
    void needsRoot() throws IOException {
        assumeTrue(RankUser.isRoot(), "running a rank as another user needs root");
        assumeTrue(UserFiles.available(), "giving files away through their descriptors needs JNA and glibc");
        // the rank's user reaches its program
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterEach
    void cleanUp() {
        System.clearProperty(RankProcessStarter.FIFO_PROPERTY);
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static String owner(Path path) throws IOException {
        Map<String, Object> a = Files.readAttributes(path, "unix:uid,gid", LinkOption.NOFOLLOW_LINKS);
        return a.get("uid") + ":" + a.get("gid");
    }

    private SpawnedRankProcess start(Path script, Map<String, String> environment, Path logs, long[] rankUser,
                                     RankIdentity user) throws LaunchException {
        return RankProcessStarter.start("whoami", List.of(script.toString()), environment, logs, 1L, 1, 0,
                OutputSettings.DEFAULT, RankEnvironment.parseAllowlist(RankEnvironment.DEFAULT_ALLOWLIST), -1,
                rankUser, user);
    }

    @Test
    void shouldRunTheRankAsTheJobsUserWithLogsOnlyItReads() throws Exception {
        Path script = TestScripts.write(temp, "whoami", "id -u; id -g; echo err >&2\n");
        Path logs = temp.resolve("logs").resolve("job-0000000000000001");

        SpawnedRankProcess p = start(script, Map.of(), logs, null, NOBODY);

        assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        Path out = RankProcessStarter.outputFile(logs, 1);
        Path err = RankProcessStarter.errorFile(logs, 1);
        assertEquals("65534\n65534\n", Files.readString(out));
        assertEquals("65534:65534", owner(logs));
        assertEquals("rwx------", mode(logs));
        for (Path file : List.of(out, err)) {
            assertEquals("65534:65534", owner(file), file.toString());
            assertEquals("rw-------", mode(file), file.toString());
        }
        assertEquals("rwx------", mode(logs.getParent()), "the log directory stays the proxy's");
    }

    @Test
    void shouldPreferTheJobsUserToTheRankUser() throws Exception {
        Path script = TestScripts.write(temp, "whoami", "echo \"$(id -u):$(id -g)\"\n");
        Path logs = temp.resolve("logs").resolve("job-0000000000000001");

        SpawnedRankProcess p = start(script, Map.of(), logs, new long[] {1, 1}, NOBODY);

        assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals("65534:65534\n", Files.readString(RankProcessStarter.outputFile(logs, 1)));
    }

    @Test
    void shouldGiveTheChannelItsJobDirectoryAndFifosToTheJobsUser() throws Exception {
        assumeTrue(RankFifos.available(), "FIFOs need JNA and glibc");
        System.setProperty(RankProcessStarter.FIFO_PROPERTY, "true");
        Path base = Files.createDirectory(temp.resolve("shm"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path job = Files.createDirectory(base.resolve("job-0-0000000000000001"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path channel = Files.writeString(job.resolve("rank-1.chan"), "ring");
        Files.setPosixFilePermissions(channel, PosixFilePermissions.fromString("rw-------"));
        // the rank itself says what it can reach: its channel, and who owns its FIFO
        Path script = TestScripts.write(temp, "whoami", "cat \"$MPIPROXY_CHANNEL\"; echo;"
                + " stat -c '%u:%g %A' \"$(dirname \"$MPIPROXY_CHANNEL\")/rank-1.out.fifo\"\n");
        Path logs = temp.resolve("logs").resolve("job-0000000000000001");

        SpawnedRankProcess p = start(script, Map.of(RankCommand.ENV_CHANNEL, channel.toString()), logs, null,
                NOBODY);

        assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals("ring\n65534:65534 prw-------\n", Files.readString(RankProcessStarter.outputFile(logs, 1)));
        assertEquals("65534:65534", owner(job));
        assertEquals("rwx------", mode(job));
        assertEquals("65534:65534", owner(channel));
        assertEquals("rw-------", mode(channel));
        assertEquals("0:0", owner(base), "the base directory stays the proxy's");
        assertEquals("rwx--x--x", mode(base), "searchable, not listable");
    }

    @Test
    void shouldNotFollowALinkInThePlaceOfTheChannel() throws Exception {
        Path victim = Files.writeString(temp.resolve("victim"), "untouched");
        Path job = Files.createDirectories(temp.resolve("shm").resolve("job-0-0000000000000001"));
        Path channel = Files.createSymbolicLink(job.resolve("rank-1.chan"), victim);
        Path script = TestScripts.write(temp, "whoami", "id -u\n");

        LaunchException e = assertThrows(LaunchException.class, () -> start(script,
                Map.of(RankCommand.ENV_CHANNEL, channel.toString()), temp.resolve("logs").resolve("job-1"), null,
                NOBODY));

        assertEquals("cannot give the channel of program 'whoami' to 65534:65534: channel file " + channel
                + " is a symbolic link; refusing to use it", e.getMessage());
        assertEquals("0:0", owner(victim), "the link's target is not given away");
        assertEquals("untouched", Files.readString(victim));
    }

    @Test
    void shouldGiveAwayNoChannelOutsideAJobsDirectory() throws Exception {
        Path directory = Files.createDirectory(temp.resolve("shm"));
        Path channel = Files.writeString(directory.resolve("rank-1.chan"), "ring");
        Path script = TestScripts.write(temp, "whoami", "id -u\n");

        LaunchException e = assertThrows(LaunchException.class, () -> start(script,
                Map.of(RankCommand.ENV_CHANNEL, channel.toString()), temp.resolve("logs").resolve("job-1"), null,
                NOBODY));

        assertEquals("cannot give the channel of program 'whoami' to 65534:65534: channel file " + channel
                + " is not in a job's directory (job-...); refusing to give it away", e.getMessage());
        assertEquals("0:0", owner(directory));
        assertEquals("0:0", owner(channel));
    }

    @Test
    void shouldNotFollowALinkInThePlaceOfALogFileAndStillPassTheOutputOn() throws Exception {
        Path victim = Files.writeString(temp.resolve("victim"), "untouched\n");
        Path logs = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Files.setPosixFilePermissions(logs, PosixFilePermissions.fromString("rwx------"));
        Path out = Files.createSymbolicLink(RankProcessStarter.outputFile(logs, 1), victim);
        Path script = TestScripts.write(temp, "whoami", "id -u\n");
        List<String> lines = new CopyOnWriteArrayList<>();
        RankOutputListener listener = new RankOutputListener() {
            @Override
            public void onOutput(long jobId, int rankId, Stream stream, String text, boolean partial) {
                lines.add(text);
            }
        };

        SpawnedRankProcess p = RankProcessStarter.start("whoami", List.of(script.toString()), Map.of(), logs, 1L, 1,
                0, new OutputSettings(listener, OutputSettings.DEFAULT_CAP_BYTES, false), null, -1, null, NOBODY);

        assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals(List.of("65534"), lines, "the output is read and passed on (the exit waits for it)");
        assertTrue(Files.isSymbolicLink(out));
        assertEquals("untouched\n", Files.readString(victim));
        assertEquals("0:0", owner(victim), "the link's target is not given away");
        assertEquals("65534:65534", owner(logs));
    }

    @Test
    void shouldNotWriteOrGiveAwayAnotherFileLinkedInThePlaceOfALogFile() throws Exception {
        Path victim = Files.writeString(temp.resolve("victim"), "untouched\n");
        Path logs = RankLogFiles.directory(temp.resolve("logs").resolve("job-0000000000000001"), NOBODY);
        Path out = Files.createLink(RankProcessStarter.outputFile(logs, 1), victim);

        IOException e = assertThrows(IOException.class, () -> RankLogFiles.append(out));

        assertEquals("log file " + out + " has 2 names (a hard link); refusing to use it", e.getMessage());
        assertEquals("untouched\n", Files.readString(victim));
        assertEquals("0:0", owner(victim));
    }

    @Test
    void shouldLetEveryRankOfAJobStartingAtOnceUseTheUsersNewLogDirectory() throws Exception {
        int ranks = 8;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(ranks);
        try {
            for (int round = 0; round < 40; round++) {
                Path job = temp.resolve("logs").resolve("job-" + round);
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(ranks);
                List<java.util.concurrent.Future<Path>> made = new java.util.ArrayList<>();
                for (int r = 0; r < ranks; r++) {
                    made.add(pool.submit(() -> {
                        together.await(CEILING_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
                        return RankLogFiles.directory(job, NOBODY);
                    }));
                }
                for (java.util.concurrent.Future<Path> f : made) {
                    assertEquals(job, f.get(CEILING_SECONDS, java.util.concurrent.TimeUnit.SECONDS),
                            "round " + round);
                }
                assertEquals("65534:65534", owner(job));
                assertEquals("rwx------", mode(job));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void shouldGiveANewLogFileInTheUsersDirectoryToTheUser() throws Exception {
        Path logs = RankLogFiles.directory(temp.resolve("logs").resolve("job-0000000000000001"), NOBODY);
        Path out = RankProcessStarter.outputFile(logs, 1);

        try (var stream = RankLogFiles.append(out)) {
            stream.write('x');
        }

        assertEquals("65534:65534", owner(out));
        assertEquals("rw-------", mode(out));
        assertEquals("x", Files.readString(out));
    }

    @Test
    void shouldReplaceALinkInThePlaceOfAFifoWithoutTouchingItsTarget() throws Exception {
        assumeTrue(RankFifos.available(), "FIFOs need JNA and glibc");
        System.setProperty(RankProcessStarter.FIFO_PROPERTY, "true");
        Path victim = Files.writeString(temp.resolve("victim"), "untouched");
        Path logs = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Files.setPosixFilePermissions(logs, PosixFilePermissions.fromString("rwx------"));
        Files.createSymbolicLink(RankFifos.path(logs, 1, RankOutputListener.Stream.STDOUT), victim);
        Path script = TestScripts.write(temp, "whoami", "id -u\n");

        SpawnedRankProcess p = start(script, Map.of(), logs, null, NOBODY);

        assertEquals(0, p.onExit().get(CEILING_SECONDS, TimeUnit.SECONDS));
        assertEquals("65534\n", Files.readString(RankProcessStarter.outputFile(logs, 1)));
        assertEquals("untouched", Files.readString(victim));
        assertEquals("0:0", owner(victim));
    }

    @Test
    void shouldRefuseAJobLogDirectoryOfAThirdUser() throws Exception {
        Path logs = Files.createDirectories(temp.resolve("logs").resolve("job-0000000000000001"));
        Files.setAttribute(logs, "unix:uid", 1, LinkOption.NOFOLLOW_LINKS);
        Path script = TestScripts.write(temp, "whoami", "id -u\n");

        LaunchException e = assertThrows(LaunchException.class, () -> start(script, Map.of(), logs, null, NOBODY));

        assertTrue(e.getMessage().endsWith("log directory " + logs + " is owned by uid 1, not by uid 0 that runs the"
                + " proxy or uid 65534 the ranks run as; refusing to use it"), e.getMessage());
        assertEquals("1:0", owner(logs));
    }
}
