package org.mpiproxy.launcher.local.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.RankIdentity;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.process.RankUser;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.process.TestScripts;

class LocalProcessLauncherTest {

    private static final String JAVA_HOME = "/opt/test-jdk";

    @TempDir
    Path temp;

    private LocalProcessLauncher launcher() throws Exception {
        return new LocalProcessLauncher(Files.createDirectories(temp.resolve("programs")), JAVA_HOME);
    }

    private LaunchRequest request(String program, int coreId, Map<String, String> env) {
        return new LaunchRequest(0x1234L, 2, 4, coreId, program, List.of("alpha", "two words"),
                temp.resolve("rank-2.chan"), env, temp.resolve("logs"));
    }

    @Test
    void shouldRunProgramWithSlaveArgumentsEnvironmentAndLogFiles() throws Exception {
        LocalProcessLauncher launcher = launcher();
        Path script = TestScripts.write(launcher.programDirectory(), "report",
                "for a in \"$0\" \"$@\"; do printf 'arg=%s\\n' \"$a\"; done > \"$OUT\"\n"
                        + "env | grep -E '^(MPIPROXY_|JAVA_HOME=)' | sort >> \"$OUT\"\n"
                        + "echo hello stdout\n"
                        + "echo hello stderr >&2\n"
                        + "exit 3\n");
        Path out = temp.resolve("report.txt");

        RankProcess process = launcher.launch(request("report", 0, Map.of("OUT", out.toString())));

        assertEquals(3, process.onExit().get(60, TimeUnit.SECONDS));
        assertEquals(0, process.coreId());
        assertEquals(List.of(
                "arg=" + script.toRealPath(),
                "arg=--slave",
                "arg=" + temp.resolve("rank-2.chan"),
                "arg=2",
                "arg=4",
                "arg=alpha",
                "arg=two words",
                "JAVA_HOME=" + JAVA_HOME,
                "MPIPROXY_CHANNEL=" + temp.resolve("rank-2.chan"),
                "MPIPROXY_CORE=0",
                "MPIPROXY_JOB_ID=0000000000001234",
                "MPIPROXY_PROGRAM=report",
                "MPIPROXY_PROXY_PID=" + ProcessHandle.current().pid(),
                "MPIPROXY_PROXY_START=" + org.mpiproxy.process.ProcStat.read(ProcessHandle.current().pid())
                        .orElseThrow().startTime(),
                "MPIPROXY_RANK=2",
                "MPIPROXY_SIZE=4",
                "MPIPROXY_WORLD_SIZE=4"), Files.readAllLines(out));
        assertEquals("hello stdout\n", Files.readString(temp.resolve("logs").resolve("rank-2.out")));
        assertEquals("hello stderr\n", Files.readString(temp.resolve("logs").resolve("rank-2.err")));
    }

    @Test
    void shouldGiveProgramEmptyStandardInput() throws Exception {
        LocalProcessLauncher launcher = launcher();
        TestScripts.write(launcher.programDirectory(), "reader", "if read line; then exit 1; fi\nexit 0\n");

        assertEquals(0, launcher.launch(request("reader", 0, Map.of())).onExit().get(60, TimeUnit.SECONDS));
    }

    @Test
    void shouldRejectMissingProgramWithIoError() throws Exception {
        LocalProcessLauncher launcher = launcher();

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("x", 0, Map.of())));

        assertEquals("no program 'x' in " + launcher.programDirectory().toRealPath(), e.getMessage());
    }

    @Test
    void shouldRejectNonExecutableProgram() throws Exception {
        LocalProcessLauncher launcher = launcher();
        Files.writeString(launcher.programDirectory().resolve("plain"), "#!/bin/sh\n");

        LaunchException e = assertThrows(LaunchException.class,
                () -> launcher.launch(request("plain", 0, Map.of())));

        assertEquals("program 'plain' is not executable", e.getMessage());
    }

    @Test
    void shouldRejectOtherCores() throws Exception {
        LocalProcessLauncher launcher = launcher();
        TestScripts.write(launcher.programDirectory(), "p", "exit 0\n");

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("p", 1, Map.of())));

        assertTrue(e.getMessage().contains("core 1"), e.getMessage());
        assertTrue(Files.notExists(temp.resolve("logs")));
    }

    @Test
    void shouldRunAPlainRequestAsGivenFromTheProgramPathOnly() throws Exception {
        Path programs = Files.createDirectories(temp.resolve("programs"));
        Path system = Files.createDirectories(temp.resolve("system-bin"));
        LocalProcessLauncher launcher = new LocalProcessLauncher(programs, JAVA_HOME, null, null, null,
                List.of(system));
        Path script = TestScripts.write(system, "plain",
                "for a in \"$0\" \"$@\"; do printf 'arg=%s\\n' \"$a\"; done > \"$OUT\"\n"
                        + "printf 'rank=%s size=%s pmi=%s/%s\\n' \"$MPIPROXY_RANK\" \"$MPIPROXY_SIZE\" \"$PMI_RANK\""
                        + " \"$PMI_SIZE\" >> \"$OUT\"\n");
        Path out = temp.resolve("plain.txt");
        LaunchRequest plain = new LaunchRequest(0x1234L, 2, 4, 0, "plain", List.of("alpha", "two words"),
                temp.resolve("rank-2.chan"), Map.of("OUT", out.toString()), temp.resolve("logs"), true);

        assertEquals(0, launcher.launch(plain).onExit().get(60, TimeUnit.SECONDS));
        assertEquals(List.of("arg=" + script.toRealPath(), "arg=alpha", "arg=two words",
                "rank=2 size=4 pmi=2/4"), Files.readAllLines(out));

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("plain", 0,
                Map.of("OUT", out.toString()))));
        assertTrue(e.getMessage().contains("no program 'plain' in " + programs.toRealPath()), e.getMessage());
        LaunchException missing = assertThrows(LaunchException.class, () -> launcher.launch(
                new LaunchRequest(1, 1, 2, 0, "absent", List.of(), temp.resolve("r.chan"), Map.of(),
                        temp.resolve("logs"), true)));
        assertEquals("no program 'absent' in " + programs + ", " + system, missing.getMessage());
    }

    /** Runs a plain staged program as {@code user} ({@code null}: a key holder's job); @return its standard output */
    private String runStaged(LocalProcessLauncher launcher, String program, RankIdentity user, String logs)
            throws Exception {
        LaunchRequest request = new LaunchRequest(0x1234L, 2, 4, 0, program, List.of(), temp.resolve("rank-2.chan"),
                Map.of(), temp.resolve(logs), true, user);
        assertEquals(0, launcher.launch(request).onExit().get(60, TimeUnit.SECONDS));
        return Files.readString(temp.resolve(logs).resolve("rank-2.out"));
    }

    /** A staged program as the proxy leaves it: in {@code directory}, {@code mode}, owned by {@code owner}. */
    private static String staged(Path directory, String hex, String body, String mode, RankIdentity owner)
            throws Exception {
        String name = StagedFiles.PREFIX + hex.repeat(32);
        Path file = TestScripts.write(directory, name, body);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        Files.setAttribute(file, "unix:gid", (int) owner.gid());
        Files.setAttribute(file, "unix:uid", (int) owner.uid());
        return name;
    }

    @Test
    void shouldRunAUsersStagedProgramForHerJobsOnlyAndTheSharedOnesForEveryone() throws Exception {
        assumeTrue(RankUser.isRoot(), "running ranks as their jobs' users needs root");
        RankIdentity nobody = new RankIdentity(65534, 65534);
        RankIdentity daemon = new RankIdentity(1, 1);
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path staged = Files.createDirectories(temp.resolve("data").resolve("mpiproxy").resolve("staged"));
        Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rwx--x--x"));
        Path own = Files.createDirectory(StagedFiles.userDirectory(staged, nobody.uid()));
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwx------"));
        Files.setAttribute(own, "unix:gid", 65534);
        Files.setAttribute(own, "unix:uid", 65534);
        String hers = staged(own, "aa", "echo \"hers $(id -u)\"\n", "r-x------", nobody);
        String shared = staged(staged, "bb", "echo \"shared $(id -u)\"\n", "rwxr-xr-x", new RankIdentity(0, 0));
        LocalProcessLauncher launcher = launcher();
        String karafData = System.getProperty("karaf.data");
        System.setProperty("karaf.data", temp.resolve("data").toString());
        try {
            assertEquals("hers 65534\n", runStaged(launcher, hers, nobody, "logs-1"));
            assertEquals("shared 1\n", runStaged(launcher, shared, daemon, "logs-2"), "an operator's, for a user");
            assertEquals("shared 65534\n", runStaged(launcher, shared, nobody, "logs-3"));

            LaunchException notHers = assertThrows(LaunchException.class,
                    () -> runStaged(launcher, hers, daemon, "logs-4"));
            assertEquals("no program '" + hers + "' in " + launcher.programDirectory() + ", "
                    + staged.resolve("u1") + ", " + staged, notHers.getMessage());
            LaunchException keyHolder = assertThrows(LaunchException.class,
                    () -> runStaged(launcher, hers, null, "logs-5"));
            assertEquals("no program '" + hers + "' in " + launcher.programDirectory() + ", " + staged,
                    keyHolder.getMessage(), "a key holder's job sees the shared ones only");

            Path link = Files.createSymbolicLink(staged.resolve("u1"), own);
            LaunchException linked = assertThrows(LaunchException.class,
                    () -> runStaged(launcher, hers, daemon, "logs-6"));
            assertEquals("staged directory " + link + " is a symbolic link; refusing to use it", linked.getMessage());
        } finally {
            if (karafData == null) {
                System.clearProperty("karaf.data");
            } else {
                System.setProperty("karaf.data", karafData);
            }
        }
    }
}
