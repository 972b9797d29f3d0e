package org.mpiproxy.channel.shm.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.ConfigurationGate;
import org.mpiproxy.api.config.RejectedConfigurationException;
import org.mpiproxy.channel.shm.MappedRankChannel;

/**
 * The shared-memory root on a node many users share: a base directory someone else made (another owner,
 * writable by others, made again while the proxy runs) is refused in one line instead of used, and a
 * symbolic link in the place of a channel file is not followed.
 */
class DirectorySafetyTest {

    private static final long JOB = 0x0000_0000_0000_0c0dL;
    /** A user id other than the proxy's (nobody's on Debian). */
    private static final int OTHER_UID = 65534;

    @TempDir
    Path dir;

    private final List<String> lines = new ArrayList<>();

    private MappedFileChannelManager activate(Path base) {
        return new MappedFileChannelManager(Map.of("base.directory", base.toString(), "ring.capacity", "4096"),
            new CheckedConfiguration<>(MappedFileChannelManager.Config.class), lines::add);
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void shouldMakeAMissingBaseDirectoryOwnerOnlyWhenItStarts() throws IOException {
        Path base = dir.resolve("shm").resolve("mpiproxy");

        activate(base);

        assertEquals("rwx------", mode(base), "made at activation, before any job, so nobody else can make it first");
        assertEquals(List.of(), lines);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rwxrwxrwx", "rwxrwx---", "rwx-w----", "rwx----w-"})
    void shouldNotStartOnAPreMadeBaseDirectoryOthersCanWrite(String permissions) throws IOException {
        Path base = Files.createDirectory(dir.resolve("mpiproxy"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString(permissions));

        assertThrows(RejectedConfigurationException.class, () -> activate(base));

        assertEquals(1, lines.size(), "one line: " + lines);
        assertTrue(lines.get(0).startsWith(MappedFileChannelManager.PID + ": base.directory=" + base
            + " can be written by its group or others (" + permissions + "); refusing to use it"), lines.get(0));
        assertEquals(permissions, mode(base), "left as it is");
        try (var entries = Files.list(base)) {
            assertEquals(0, entries.count(), "nothing put into it");
        }
    }

    @Test
    void shouldNotStartOnAPreMadeBaseDirectoryOfAnotherUser() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a directory to another user needs root");
        Path base = Files.createDirectory(dir.resolve("mpiproxy"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx------"));
        Files.setAttribute(base, "unix:uid", OTHER_UID, LinkOption.NOFOLLOW_LINKS);

        assertThrows(RejectedConfigurationException.class, () -> activate(base));

        assertEquals(1, lines.size(), "one line: " + lines);
        assertTrue(lines.get(0).contains("base.directory=" + base + " is owned by uid " + OTHER_UID
            + ", not by uid 0 that runs the proxy; refusing to use it"), lines.get(0));
        try (var entries = Files.list(base)) {
            assertEquals(0, entries.count(), "nothing put into it");
        }
    }

    @Test
    void shouldKeepTheGateClosedOnARefusedBaseDirectory() throws IOException {
        Path base = Files.createDirectory(dir.resolve("mpiproxy"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));
        ConfigurationGate<MappedFileChannelManager.Config> gate = new ConfigurationGate<>(MappedFileChannelManager.PID,
            MappedFileChannelManager.Config.class, MappedFileChannelManager::usable);
        AtomicBoolean enabled = new AtomicBoolean();

        assertFalse(gate.offer(Map.of("base.directory", base.toString()), lines::add, () -> enabled.set(true)));

        assertFalse(enabled.get(), "the channel manager is not enabled: the node is not ready");
        assertEquals(List.of(MappedFileChannelManager.PID + ": base.directory=" + base + " can be written by its"
            + " group or others (rwxrwxrwx); refusing to use it; no good configuration yet: not started until the"
            + " value is fixed"), lines);
    }

    @Test
    void shouldRefuseTheNextJobWhenTheBaseDirectoryWasMadeAgainByAnotherWhileRunning() throws IOException {
        Path base = dir.resolve("mpiproxy");
        MappedFileChannelManager manager = activate(base);
        manager.open(JOB, 1).close();
        manager.release(JOB);
        Files.delete(base);
        Files.createDirectory(base);
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));

        IOException e = assertThrows(IOException.class, () -> manager.open(JOB + 1, 1));

        assertEquals("base.directory=" + base + " can be written by its group or others (rwxrwxrwx); refusing to use"
            + " it", e.getMessage());
        try (var entries = Files.list(base)) {
            assertEquals(0, entries.count(), "no job directory made in it");
        }
    }

    @Test
    void shouldRefuseAReconfiguredBaseDirectoryOthersCanWriteAndKeepTheLastGood() throws IOException {
        Path good = dir.resolve("good");
        Path bad = Files.createDirectory(dir.resolve("bad"));
        Files.setPosixFilePermissions(bad, PosixFilePermissions.fromString("rwxrwx---"));
        MappedFileChannelManager manager = activate(good);

        String problem = manager.reconfigure(MappedFileChannelManagerTest.config(Map.of("base.directory",
            bad.toString(), "ring.capacity", 4096)));

        assertEquals("base.directory=" + bad + " can be written by its group or others (rwxrwx---); refusing to use"
            + " it", problem);
        assertEquals(good, manager.baseDirectory(), "the last good base directory stays");
    }

    @Test
    void shouldNotFollowASymbolicLinkInThePlaceOfAChannelFile() throws IOException {
        MappedFileChannelManager manager = activate(dir.resolve("mpiproxy"));
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Path target = elsewhere.resolve("rank-1.chan");
        try (MappedRankChannel real = MappedRankChannel.create(target, 4096, JOB, 1)) {
            assertEquals(target, real.path());
            byte[] before = Files.readAllBytes(target);
            Path link = dir.resolve("link.chan");
            Files.createSymbolicLink(link, target);

            IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(link));
            assertTrue(e.getMessage().contains(link.toString()), e.getMessage());

            manager.open(JOB, 2).close();
            Path channelFile = manager.jobDirectory(JOB).resolve("rank-1.chan");
            Files.createSymbolicLink(channelFile, target);
            assertThrows(IOException.class, () -> manager.open(JOB, 1));
            assertThrows(IOException.class, () -> manager.reopen(JOB, 1));
            assertArrayEquals(before, Files.readAllBytes(target), "the link's target is untouched");
            assertTrue(Files.isSymbolicLink(channelFile));
        }
        manager.release(JOB);
        assertTrue(Files.exists(target), "releasing the job removes the link, not its target");
    }

    @Test
    void shouldLeaveAGoodBaseDirectoryAsItIs() throws IOException {
        Path base = Files.createDirectory(dir.resolve("mpiproxy"));
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx------"));

        MappedFileChannelManager manager = activate(base);

        assertEquals(List.of(), lines);
        try (RankChannel channel = manager.open(JOB, 1)) {
            assertEquals(base, channel.path().getParent().getParent());
        }
        assertNull(PrivateDirectories.problem(base, "base"));
    }
}
