package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
