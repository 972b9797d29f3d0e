package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.RankIdentity;

class RankUserTest {

    @TempDir
    Path temp;

    @Test
    void shouldParseNumericUsers() {
        assertArrayEquals(new long[] {65534, 65533}, RankCommand.parseUser(" 65534:65533 "));
        assertEquals(null, RankCommand.parseUser(""));
        assertThrows(IllegalArgumentException.class, () -> RankCommand.parseUser("nobody"));
        assertEquals(List.of("setpriv", "--reuid=7", "--regid=8", "--clear-groups", "prog"),
                RankCommand.asUser(new long[] {7, 8}, List.of("prog")));
    }

    @Test
    void shouldRunAJobsUserWithItsGroupsWhenTheNodeKnowsItElseWithNone() {
        RankIdentity user = new RankIdentity(1000, 1001);

        assertEquals(List.of("setpriv", "--reuid=1000", "--regid=1001", "--init-groups", "prog"),
                RankCommand.asUser(user, true, List.of("prog")));
        assertEquals(List.of("setpriv", "--reuid=1000", "--regid=1001", "--clear-groups", "prog"),
                RankCommand.asUser(user, false, List.of("prog")));
    }

    @Test
    void shouldFindAUserInTheNodesUserDatabase() {
        assertTrue(RankUser.known(0), "root is in every user database");
        assertFalse(RankUser.known(0xFFFF_FFFEL), "uid 4294967294 is nobody's");
    }

    @Test
    void shouldRunAJobsUserOnlyWhenRootOrTheProxysOwnUser() throws LaunchException {
        RankIdentity user = new RankIdentity(1000, 1000);

        assertEquals(user, RankUser.requested(user, true, new long[] {0, 0}));
        assertNull(RankUser.requested(user, false, new long[] {1000, 1000}), "the proxy's own user: as it is");
        assertNull(RankUser.requested(null, false, new long[] {1000, 1000}));
        LaunchException e = assertThrows(LaunchException.class,
                () -> RankUser.requested(user, false, new long[] {1000, 100}));
        assertEquals("cannot run the rank as 1000:1000: the proxy runs as 1000:100, not as root", e.getMessage());
        e = assertThrows(LaunchException.class, () -> RankUser.requested(user, false, new long[] {2000, 1000}));
        assertEquals("cannot run the rank as 1000:1000: the proxy runs as 2000:1000, not as root", e.getMessage());
    }

    @Test
    void shouldRunTheRankAsTheConfiguredUserKeepingItsPidAndGroup() throws Exception {
        assumeTrue(((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue() == 0,
                "needs root");
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path script = TestScripts.write(temp, "whoami", "echo \"$(id -u):$(id -g) $$\"\n");
        SpawnedRankProcess p = RankProcessStarter.start("whoami",
                RankCommand.asUser(new long[] {65534, 65534}, List.of(script.toString())), Map.of(),
                temp.resolve("logs"), 1, 1, 0, OutputSettings.DEFAULT,
                RankEnvironment.parseAllowlist(RankEnvironment.DEFAULT_ALLOWLIST));
        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        assertEquals("65534:65534 " + p.pid() + "\n",
                Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1)),
                "unprivileged, and setsid and setpriv exec'd in place");
    }
}
