package org.mpiproxy.channel.shm.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankChannel;

/**
 * Done item 6 of rank supervision: ranks of jobs owned by different users cannot open each
 * other's rings. Needs root (to give files away and to switch users, as the proxy does).
 */
class RingIsolationTest {

    private static final long[] USER_A = {65534, 65534};
    private static final long[] USER_B = {65533, 65533};

    @TempDir
    Path temp;

    /** @return exit status of a shell, running as {@code user}, that opens {@code file} read-write */
    private static int openAs(long[] user, Path file) throws Exception {
        Process p = new ProcessBuilder("setpriv", "--reuid=" + user[0], "--regid=" + user[1], "--clear-groups",
                "/bin/sh", "-c", "exec 3<>\"$0\"", file.toString()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("setpriv hangs");
        }
        return p.exitValue();
    }

    @Test
    void shouldKeepEachUsersRanksOutOfTheOtherUsersRings() throws Exception {
        assumeTrue(MappedFileChannelManager.currentUid() == 0, "needs root");
        // ranks must be able to walk down to their own directory
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwx--x--x"));
        Path base = temp.resolve("shm");
        MappedFileChannelManager jobsOfA = new MappedFileChannelManager(base, 4096, USER_A);
        MappedFileChannelManager jobsOfB = new MappedFileChannelManager(base, 4096, USER_B);
        try (RankChannel a = jobsOfA.open(0x1L, 1); RankChannel b = jobsOfB.open(0x2L, 1)) {
            assertEquals("job-65534-0000000000000001", a.path().getParent().getFileName().toString());
            assertEquals(65534, ((Number) Files.getAttribute(a.path(), "unix:uid")).intValue());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(a.path())));

            assertEquals(0, openAs(USER_A, a.path()), "a rank opens its own ring");
            assertEquals(0, openAs(USER_B, b.path()), "a rank opens its own ring");
            assertNotEquals(0, openAs(USER_B, a.path()), "B cannot open A's ring");
            assertNotEquals(0, openAs(USER_A, b.path()), "A cannot open B's ring");
        }
    }

    @Test
    void shouldRefuseMalformedOwners() {
        assertEquals(null, MappedFileChannelManager.parseOwner(""));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MappedFileChannelManager.parseOwner("nobody"));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> MappedFileChannelManager.parseOwner("1:-2"));
    }
}
