package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.RankProcess;

class PinnedCoreLauncherTest {

    /** Longest wait for a process event: only catches a hang. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path temp;

    private RankProcess process;

    @AfterEach
    void killLeftovers() {
        if (process != null && process.isAlive()) {
            process.stop(Duration.ZERO);
        }
    }

    private Path programs() throws Exception {
        return Files.createDirectories(temp.resolve("programs"));
    }

    private PinnedCoreLauncher launcher(AllowedCpus cpus) throws Exception {
        return new PinnedCoreLauncher(programs(), new ImageCache(temp.resolve("cache"), 1 << 20), cpus, "/opt/test-jdk");
    }

    private LaunchRequest request(String program, int coreId, Map<String, String> env) {
        return new LaunchRequest(0x42L, 1, 2, coreId, program, List.of("x"), temp.resolve("rank-1.chan"), env,
                temp.resolve("logs"));
    }

    @Test
    void shouldBuildTasksetCommandLine() {
        assertEquals(List.of("taskset", "-c", "3", "/cache/p-00", "--slave", "c", "1", "2"),
                org.mpiproxy.process.RankCommand.pinned(3, List.of("/cache/p-00", "--slave", "c", "1", "2")));
    }

    @Test
    void shouldRunImagePinnedToCoreOne() throws Exception {
        assumeTrue(CpuList.parse(AllowedCpus.ofThisProcess().list()).get(1), "needs CPU 1 among the allowed CPUs");
        PinnedCoreLauncher launcher = launcher(AllowedCpus.ofThisProcess());
        TestImages.writeImage(programs(), "pinned", TestImages.script(
                "printf '%s\\n' \"$0\" \"$@\" \"$MPIPROXY_CORE\" \"$MPIPROXY_PROGRAM\" \"$JAVA_HOME\" > \"$OUT\"\n"
                        + "echo up > \"$READY\"\n"
                        + "read line < \"$GO\"\n"
                        + "echo pinned-out\n"
                        + "exit 5\n"));
        Path out = temp.resolve("out.txt");
        Path ready = temp.resolve("ready");
        Path go = temp.resolve("go");
        CompletableFuture<String> readiness = org.mpiproxy.process.TestScripts.readFifo(ready);
        assertTrue(new ProcessBuilder("mkfifo", go.toString()).start().waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS));

        process = launcher.launch(request("pinned", 1,
                Map.of("OUT", out.toString(), "READY", ready.toString(), "GO", go.toString())));
        org.mpiproxy.process.TestScripts.await(ready, readiness, TIMEOUT);
        String allowed = CpuList.allowedList(Path.of("/proc", Long.toString(process.pid()), "status"));
        Files.writeString(go, "go\n");

        assertEquals(5, process.onExit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertEquals("1", allowed);
        assertEquals(1, process.coreId());
        List<String> lines = Files.readAllLines(out);
        Path cached = Path.of(lines.get(0));
        assertEquals(temp.resolve("cache"), cached.getParent());
        assertTrue(cached.getFileName().toString().startsWith("pinned-"), lines.get(0));
        assertEquals(List.of("--slave", temp.resolve("rank-1.chan").toString(), "1", "2", "x", "1", "pinned",
                "/opt/test-jdk"), lines.subList(1, lines.size()));
        assertEquals("pinned-out\n", Files.readString(temp.resolve("logs").resolve("rank-1.out")));
    }

    @Test
    void shouldRunAStagedProgramPinnedWithoutAnImage() throws Exception {
        assumeTrue(CpuList.parse(AllowedCpus.ofThisProcess().list()).get(1), "needs CPU 1 among the allowed CPUs");
        Path staged = Files.createDirectories(temp.resolve("staged"));
        String name = org.mpiproxy.process.StagedFiles.PREFIX + "ab".repeat(32);
        Path program = staged.resolve(name);
        Files.writeString(program, "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$OUT\"\n"
                + "grep Cpus_allowed_list /proc/self/status | tr -d ' \\t' >> \"$OUT\"\n");
        assertTrue(program.toFile().setExecutable(true));
        PinnedCoreLauncher launcher = new PinnedCoreLauncher(programs(), new ImageCache(temp.resolve("cache"), 1 << 20),
                AllowedCpus.ofThisProcess(), "/opt/test-jdk", null, null, null, staged);
        Path out = temp.resolve("out.txt");

        process = launcher.launch(new LaunchRequest(0x42L, 1, 2, 1, name, List.of("a b", "c"),
                temp.resolve("rank-1.chan"), Map.of("OUT", out.toString()), temp.resolve("logs"), true));

        assertEquals(0, process.onExit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(List.of("a b", "c", "Cpus_allowed_list:1"), Files.readAllLines(out),
                "the plain command line, on core 1");
        LaunchException missing = assertThrows(LaunchException.class, () -> launcher.launch(new LaunchRequest(0x42L,
                2, 3, 1, org.mpiproxy.process.StagedFiles.PREFIX + "cd".repeat(32), List.of(),
                temp.resolve("rank-2.chan"), Map.of(), temp.resolve("logs"), true)));
        assertTrue(missing.getMessage().startsWith("no program 'sha256-cdcd"), missing.getMessage());
    }

    @Test
    void shouldRunAUsersStagedProgramPinnedForHerJobsOnly() throws Exception {
        assumeTrue(org.mpiproxy.process.RankUser.isRoot(), "running ranks as their jobs' users needs root");
        assumeTrue(CpuList.parse(AllowedCpus.ofThisProcess().list()).get(1), "needs CPU 1 among the allowed CPUs");
        Files.setPosixFilePermissions(temp, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        Path staged = Files.createDirectories(temp.resolve("staged"));
        // as the proxy leaves a user's program: her directory and file, owner-only
        Path own = Files.createDirectory(org.mpiproxy.process.StagedFiles.userDirectory(staged, 65534));
        String name = org.mpiproxy.process.StagedFiles.PREFIX + "ef".repeat(32);
        Path program = own.resolve(name);
        Files.writeString(program, "#!/bin/sh\nid -u\ngrep Cpus_allowed_list /proc/self/status | tr -d ' \\t'\n");
        Files.setPosixFilePermissions(program, java.nio.file.attribute.PosixFilePermissions.fromString("r-x------"));
        Files.setPosixFilePermissions(own, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        for (Path p : List.of(program, own)) {
            Files.setAttribute(p, "unix:gid", 65534);
            Files.setAttribute(p, "unix:uid", 65534);
        }
        PinnedCoreLauncher launcher = new PinnedCoreLauncher(programs(), new ImageCache(temp.resolve("cache"), 1 << 20),
                AllowedCpus.ofThisProcess(), "/opt/test-jdk", null, null, null, staged);

        process = launcher.launch(new LaunchRequest(0x42L, 1, 2, 1, name, List.of(), temp.resolve("rank-1.chan"),
                Map.of(), temp.resolve("logs-1"), true, new org.mpiproxy.api.RankIdentity(65534, 65534)));

        assertEquals(0, process.onExit().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(List.of("65534", "Cpus_allowed_list:1"),
                Files.readAllLines(temp.resolve("logs-1").resolve("rank-1.out")), "hers, as her, on core 1");
        LaunchException notHers = assertThrows(LaunchException.class, () -> launcher.launch(new LaunchRequest(0x43L,
                1, 2, 1, name, List.of(), temp.resolve("rank-1.chan"), Map.of(), temp.resolve("logs-2"), true,
                new org.mpiproxy.api.RankIdentity(1, 1))));
        assertEquals("no program '" + name + "' in " + staged.resolve("u1") + ", " + staged, notHers.getMessage());
    }

    @Test
    void shouldRejectCoreOutsideAllowedCpus() throws Exception {
        PinnedCoreLauncher launcher = launcher(() -> "0-1\n");
        TestImages.writeImage(programs(), "p", TestImages.script("exit 0\n"));

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("p", 2, Map.of())));

        assertEquals("core 2 does not exist on this node (cores 0-1)", e.getMessage());
        assertTrue(Files.notExists(temp.resolve("cache")));
    }

    @Test
    void shouldRejectCoreMissingOnThisMachine() throws Exception {
        PinnedCoreLauncher launcher = launcher(AllowedCpus.ofThisProcess());

        LaunchException e = assertThrows(LaunchException.class,
                () -> launcher.launch(request("p", CpuList.MAX_CPU + 1, Map.of())));

        assertTrue(e.getMessage().startsWith("core 65536 does not exist on this node (cores "), e.getMessage());
    }

    @Test
    void shouldRejectCoreZero() throws Exception {
        LaunchException e = assertThrows(LaunchException.class,
                () -> launcher(() -> "0-1").launch(request("p", 0, Map.of())));

        assertTrue(e.getMessage().contains("not core 0"), e.getMessage());
    }

    @Test
    void shouldFailClearlyWhenAllowedCpusAreUnreadable() throws Exception {
        LaunchException e = assertThrows(LaunchException.class,
                () -> launcher(() -> "garbage").launch(request("p", 1, Map.of())));

        assertTrue(e.getMessage().startsWith("cannot tell which cores exist on this node"), e.getMessage());
    }

    @Test
    void shouldRejectMissingImageNamingIt() throws Exception {
        PinnedCoreLauncher launcher = launcher(() -> "0-1");

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("absent", 1, Map.of())));

        assertEquals("no program 'absent.lz4' in " + programs().toRealPath(), e.getMessage());
    }

    @Test
    void shouldRejectInvalidProgramNames() throws Exception {
        PinnedCoreLauncher launcher = launcher(() -> "0-1");

        for (String name : List.of("", "../p", "a/b", "a\tb")) {
            LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request(name, 1, Map.of())));
        }
    }

    @Test
    void shouldRejectImageSymlinkEscapingProgramDirectory() throws Exception {
        PinnedCoreLauncher launcher = launcher(() -> "0-1");
        Path outside = TestImages.writeImage(temp, "outside", TestImages.script("exit 0\n"));
        Files.createSymbolicLink(programs().resolve("escape.lz4"), outside);

        LaunchException e = assertThrows(LaunchException.class, () -> launcher.launch(request("escape", 1, Map.of())));

        assertTrue(e.getMessage().contains("resolves outside"), e.getMessage());
    }
}
