package org.mpiproxy.launcher.local.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.RankUser;
import org.mpiproxy.process.TestScripts;

class LocalLauncherComponentTest {

    @TempDir
    Path temp;

    /** A Config whose values come from {@code values} (dotted keys), else the annotation defaults. */
    private static LocalLauncherComponent.Config config(Map<String, Object> values) {
        return (LocalLauncherComponent.Config) Proxy.newProxyInstance(
                LocalLauncherComponentTest.class.getClassLoader(), new Class<?>[] {LocalLauncherComponent.Config.class},
                (proxy, method, args) -> {
                    String key = method.getName().replace('_', '.');
                    return values.containsKey(key) ? values.get(key) : method.getDefaultValue();
                });
    }

    private static Map<String, Object> with(Map<String, Object> base, String key, Object value) {
        Map<String, Object> m = new HashMap<>(base);
        m.put(key, value);
        return m;
    }

    private LaunchRequest request(String program) {
        return new LaunchRequest(0x77L, 1, 2, 0, program, List.of(), temp.resolve("rank-1.chan"), Map.of(),
                temp.resolve("logs"));
    }

    /** Runs {@code program} and returns what it printed. */
    private String run(LocalLauncherComponent launcher, String program) throws Exception {
        RankProcess p = launcher.launch(request(program));
        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        return Files.readString(temp.resolve("logs").resolve("rank-1.out"));
    }

    @Test
    void shouldKeepTheLastGoodConfigurationForEveryBadValue() throws Exception {
        Path programs = Files.createDirectories(temp.resolve("programs"));
        TestScripts.write(programs, "where", "echo old\n");
        Map<String, Object> good = Map.of("program.directory", programs.toString());
        LocalLauncherComponent launcher = new LocalLauncherComponent(config(good));
        Path file = Files.writeString(temp.resolve("a-file"), "x");

        Map<Map<String, Object>, String> bad = Map.of(
                with(good, "program.directory", "relative/programs"),
                "program.directory=relative/programs must be an absolute path",
                with(good, "program.directory", file.toString()),
                "program.directory=" + file + " exists and is not a directory",
                with(good, "program.directory", "/bad\0path"),
                "program.directory=/bad\0path is not a valid path",
                with(good, "environment.allowlist", "PATH,A=B"),
                "environment.allowlist=PATH,A=B: 'A=B' is not a variable name (optionally ending in *)",
                with(good, "rank.user", "nobody"),
                "rank.user=nobody must be a numeric <uid>:<gid>");
        for (Map.Entry<Map<String, Object>, String> e : bad.entrySet()) {
            String problem = launcher.reconfigure(config(e.getKey()));
            assertEquals(e.getValue(), problem == null ? null : problem.replaceFirst(": Nul character.*", ""),
                    "the message names key and value");
            assertEquals(programs, launcher.programDirectory(), "the last good directory stays");
        }
        launcher.modified(with(good, "program.directory", "relative/programs"));
        assertEquals(programs, launcher.programDirectory());
        assertEquals("old\n", run(launcher, "where"), "still serving from the last good directory");
    }

    @Test
    void shouldRefuseARankUserUnlessRunningAsRoot() {
        assertEquals("rank.user=1000:1000 needs the proxy to run as root",
                assertThrows(IllegalArgumentException.class, () -> RankUser.parse("1000:1000", false)).getMessage());
        assertEquals(1000L, RankUser.parse("1000:1001", true)[0]);
    }

    @Test
    void shouldApplyANewProgramDirectoryWithoutRestarting() throws Exception {
        Path before = Files.createDirectories(temp.resolve("before"));
        Path after = Files.createDirectories(temp.resolve("after"));
        TestScripts.write(before, "where", "echo before\n");
        TestScripts.write(after, "where", "echo after\n");
        LocalLauncherComponent launcher = new LocalLauncherComponent(config(Map.of("program.directory",
                before.toString())));

        assertNull(launcher.reconfigure(config(Map.of("program.directory", after + "/"))));

        assertEquals(after, launcher.programDirectory());
        assertEquals("after\n", run(launcher, "where"));
    }

    @Test
    void shouldAcceptADirectoryThatDoesNotExistYet() {
        Path missing = temp.resolve("later");
        LocalLauncherComponent launcher = new LocalLauncherComponent(config(Map.of()));
        assertNull(launcher.reconfigure(config(Map.of("program.directory", missing.toString()))));
        assertEquals(missing, launcher.programDirectory(), "the health check reports it until it exists");
    }

    @Test
    void shouldRefuseToActivateWithABadValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new LocalLauncherComponent(config(Map.of("program.directory", "programs"))));
        assertEquals("program.directory=programs must be an absolute path", e.getMessage());
    }

    @Test
    void shouldRunARankAsItsJobsUserRatherThanTheRankUser() throws Exception {
        assumeTrue(RankUser.isRoot(), "needs root");
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path programs = Files.createDirectories(temp.resolve("programs"));
        TestScripts.write(programs, "whoami", "id -u; id -g\n");
        LocalLauncherComponent launcher = new LocalLauncherComponent(config(Map.of(
                "program.directory", programs.toString(), "rank.user", "1:1")));
        Path logs = temp.resolve("logs").resolve("job-0000000000000077");

        RankProcess p = launcher.launch(new LaunchRequest(0x77L, 1, 2, 0, "whoami", List.of(),
                temp.resolve("rank-1.chan"), Map.of(), logs, false, new RankIdentity(65534, 65534)));

        assertEquals(0, p.onExit().get(60, TimeUnit.SECONDS));
        Path out = logs.resolve("rank-1.out");
        assertEquals("65534\n65534\n", Files.readString(out), "the job's user, not rank.user");
        assertEquals(65534, Files.getAttribute(logs, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(logs)));
        assertEquals(65534, Files.getAttribute(out, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(out)));
    }
}
