package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mpiproxy.itests.TestCluster.Run;

/**
 * Users who hold no cluster key run jobs, as themselves (docs/protocol-v2.md 4.1, 4.2): the
 * launcher, run as an unprivileged user, gets a job credential from the local proxy's socket
 * (the kernel names the user), and every node runs that job's ranks as that uid/gid, their logs
 * that user's only; two users at once each see their own ids; a root job is refused as shipped;
 * one user can neither stop nor list another's job; a user with neither key nor local socket (as
 * on a login node) runs her job through MUNGE (4.3; munged started for the test when none runs). Real Karaf nodes run as root here, as a system
 * service would; the users are the system's {@code nobody} (65534) and {@code daemon} (1).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class IdentityIT {

    private static final long NOBODY = 65534;
    private static final long DAEMON = 1;

    private TestCluster cluster;
    private Path cli;
    private Path shared;

    @BeforeAll
    void startNodes() throws Exception {
        Assumptions.assumeTrue(isRoot(), "ranks as other users need the nodes to run as root, as a system service");
        cli = Paths.get(System.getProperty("mpiproxy.itest.cli"));
        cluster = TestCluster.start("identity-nodes", "i", 91, 2, node -> { });
        shared = cluster.work.resolve("shared");
        Files.createDirectories(shared);
        // a directory every user may write (job files), as /tmp is
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
    }

    @AfterAll
    void stopNodes() throws InterruptedException {
        if (cluster != null) {
            cluster.stop();
        }
    }

    @Test
    void shouldRunEveryRankAsItsLaunchingUserWhileTwoUsersRunAtOnce() throws Exception {
        String report = "echo \"rank=$PMI_RANK uid=$(id -u) gid=$(id -g)\"";
        List<Path> before = rankLogs();
        CompletableFuture<Run> nobody = CompletableFuture.supplyAsync(() -> runAs(NOBODY, 120, "run", "--hosts",
                "i1:2,i2:2", "sh", "-c", report));
        CompletableFuture<Run> daemon = CompletableFuture.supplyAsync(() -> runAs(DAEMON, 120, "run", "--hosts",
                "i1:2,i2:2", "sh", "-c", report));
        for (Map.Entry<Long, Run> each : Map.of(NOBODY, nobody.get(), DAEMON, daemon.get()).entrySet()) {
            Run run = each.getValue();
            assertEquals(0, run.exit(), run.err());
            List<String> ranks = run.out().stream().filter(l -> l.contains("rank=")).sorted().toList();
            assertEquals(4, ranks.size(), run.out() + run.err());
            for (String line : ranks) {
                assertTrue(line.endsWith("uid=" + each.getKey() + " gid=" + each.getKey()), line + " of " + ranks);
            }
        }
        // the logs the nodes kept of those ranks are their users' own, readable by nobody else
        List<Path> logs = new ArrayList<>(rankLogs());
        logs.removeAll(before);
        assertEquals(6, logs.size(), "ranks 1..3 of two jobs: " + logs);
        for (Path log : logs) {
            long owner = ((Number) Files.getAttribute(log, "unix:uid")).longValue();
            assertTrue(owner == NOBODY || owner == DAEMON, log + " is uid " + owner + "'s");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(log)), log.toString());
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(log.getParent())),
                    log.getParent().toString());
        }
    }

    @Test
    void shouldStageAUsersProgramIntoHerOwnDirectoryOnEveryNode() throws Exception {
        Path script = shared.resolve("whoami.sh");
        Files.writeString(script, "#!/bin/sh\necho \"staged rank=$PMI_RANK uid=$(id -u)\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        Run run = runAs(NOBODY, 120, "run", "--stage", "--hosts", "i1:2,i2:2", script.toString());
        assertEquals(0, run.exit(), run.out() + run.err());
        List<String> ranks = run.out().stream().filter(l -> l.contains("staged rank=")).toList();
        assertEquals(4, ranks.size(), run.out().toString());
        assertTrue(ranks.stream().allMatch(l -> l.endsWith("uid=" + NOBODY)), ranks.toString());
        for (KarafNode node : cluster.nodes) {
            Path mine = node.home.resolve("data/mpiproxy/staged/u" + NOBODY);
            assertEquals(NOBODY, ((Number) Files.getAttribute(mine, "unix:uid")).longValue(), mine.toString());
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(mine)));
            try (Stream<Path> files = Files.list(mine)) {
                List<Path> programs = files.toList();
                assertEquals(1, programs.size(), programs.toString());
                assertEquals("r-x------", PosixFilePermissions.toString(Files.getPosixFilePermissions(programs.get(0))));
            }
        }
    }

    @Test
    void shouldRunAUsersJobFromAMachineWithoutAProxyThroughMunge() throws Exception {
        Path run = cluster.work.resolve("munge-run");
        Path up = Paths.get(System.getProperty("mpiproxy.itest.slurm")).resolve("munge-up.sh");
        ProcessBuilder starter = new ProcessBuilder("bash", up.toString()).redirectErrorStream(true)
                .redirectOutput(cluster.work.resolve("munge-up.out").toFile());
        starter.environment().put("RUN", run.toString());
        starter.environment().put("LOG", run.toString());
        Process munge = starter.start();
        assertTrue(munge.waitFor(120, TimeUnit.SECONDS), "munge-up.sh did not end");
        Assumptions.assumeTrue(munge.exitValue() == 0, "no munged: " + Files.readString(
                cluster.work.resolve("munge-up.out")));
        try {
            // no key, no local socket here: the launcher asks node i1 with a MUNGE credential
            Run job = runAs(NOBODY, cluster.work.resolve("no-proxy-here.sock"), 120, "run", "--hosts", "i1:2,i2:2",
                    "sh", "-c", "echo \"munge rank=$PMI_RANK uid=$(id -u) gid=$(id -g)\"");
            assertEquals(0, job.exit(), job.out() + job.err());
            List<String> ranks = job.out().stream().filter(l -> l.contains("munge rank=")).toList();
            assertEquals(4, ranks.size(), job.out() + job.err());
            assertTrue(ranks.stream().allMatch(l -> l.endsWith("uid=" + NOBODY + " gid=" + NOBODY)), ranks.toString());
        } finally {
            Path pid = run.resolve("pid.munged");
            if (Files.exists(pid)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroy);
            }
        }
    }

    @Test
    void shouldRefuseARootJobAsShipped() {
        Run run = runAs(0, 120, "run", "--hosts", "i1:2,i2:1", "id");
        assertNotEquals(0, run.exit(), run.out() + run.err());
        assertTrue(run.err().contains("uid 0") && run.err().contains("rank.root.allowed"), run.err());
        assertTrue(cluster.ranks().stream().noneMatch(r -> r.info().user().orElse("root").equals("root")),
                "no rank runs as root: " + cluster.ranks());
    }

    @Test
    void shouldNotLetOneUserStopOrListAnothersJob() throws Exception {
        Path jobFile = shared.resolve("nobody.job");
        Files.deleteIfExists(jobFile);
        CompletableFuture<Run> job = CompletableFuture.supplyAsync(() -> runAs(NOBODY, 300, "run", "--job-file",
                jobFile.toString(), "--hosts", "i1:2,i2:2", "sleep", "240"));
        List<ProcessHandle> ranks = awaitRanks(3);
        for (ProcessHandle rank : ranks) {
            assertEquals("nobody", rank.info().user().orElse("?"), rank.info().toString());
        }
        String jobId = environment(ranks.get(0), "MPIPROXY_JOB_ID");

        Run status = runAs(DAEMON, 120, "status", "--job", jobId, "--hosts", "i1,i2");
        assertNotEquals(0, status.exit(), status.out() + status.err());
        assertTrue(status.out().stream().noneMatch(l -> l.contains("running")), status.out().toString());
        assertTrue(status.err().contains("another user's"), status.err());

        Run kill = runAs(DAEMON, 120, "kill", "--job-file", jobFile.toString(), "--wait", "10");
        assertNotEquals(0, kill.exit(), kill.out() + kill.err());
        assertTrue(kill.err().contains("the job is not yours"), kill.err());
        assertTrue(ranks.stream().allMatch(ProcessHandle::isAlive), "another user's kill stopped nobody's ranks");
        assertTrue(!job.isDone(), "another user's kill ended nobody's job: " + (job.isDone() ? job.get() : ""));

        Run own = runAs(NOBODY, 120, "kill", "--job-file", jobFile.toString());
        assertEquals(0, own.exit(), own.out() + own.err());
        Run ended = job.get(120, TimeUnit.SECONDS);
        assertNotEquals(0, ended.exit(), ended.err());
        for (ProcessHandle rank : ranks) {
            assertTrue(rank.onExit().get(60, TimeUnit.SECONDS) != null);
        }
    }

    /** @return the rank-N.out logs the nodes keep */
    private List<Path> rankLogs() throws IOException {
        List<Path> logs = new ArrayList<>();
        for (KarafNode node : cluster.nodes) {
            Path root = node.home.resolve("data/mpiproxy/logs");
            if (Files.isDirectory(root)) {
                try (Stream<Path> files = Files.walk(root)) {
                    files.filter(p -> p.getFileName().toString().matches("rank-\\d+\\.out")).forEach(logs::add);
                }
            }
        }
        return logs;
    }

    /** Runs the launcher as {@code uid} (group the same number) with no key but the local socket of node i1. */
    private Run runAs(long uid, long timeoutSeconds, String... args) {
        return runAs(uid, cluster.nodes.get(0).home.resolve("run/proxy.sock"), timeoutSeconds, args);
    }

    /** As {@link #runAs(long, long, String...)}, with the local socket at {@code socket}. */
    private Run runAs(long uid, Path socket, long timeoutSeconds, String... args) {
        try {
            Path home = Files.createDirectories(cluster.work.resolve("home-" + uid));
            Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxrwxrwx"));
            List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid,
                    "--clear-groups", Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                    cli.toString()));
            command.addAll(List.of(args));
            if (args[0].equals("run") || args[0].equals("status")) {
                command.addAll(command.indexOf(args[0]) + 1, List.of("--node-map", cluster.nodeMap.toString()));
            }
            Map<String, String> environment = new java.util.HashMap<>();
            environment.put("HOME", home.toString());
            environment.put("MPIPROXY_SOCKET", socket.toString());
            environment.put("MPIPROXY_KEY_FILE", null);
            return TestCluster.run(command, environment, home,
                    cluster.work.resolve("launcher-" + uid + "-" + System.nanoTime() + ".err"), timeoutSeconds);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits (a ceiling that only catches a hang) until the nodes run {@code count} ranks. */
    private List<ProcessHandle> awaitRanks(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        List<ProcessHandle> ranks = cluster.ranks();
        while (ranks.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(100);
            ranks = cluster.ranks();
        }
        assertEquals(count, ranks.size(), "ranks on the nodes: " + ranks);
        return ranks;
    }

    private static String environment(ProcessHandle process, String name) throws IOException {
        String env = Files.readString(Path.of("/proc", Long.toString(process.pid()), "environ"),
                StandardCharsets.ISO_8859_1);
        for (String entry : env.split("\0")) {
            if (entry.startsWith(name + "=")) {
                return entry.substring(name.length() + 1);
            }
        }
        throw new IllegalStateException(process.pid() + " has no " + name);
    }

    private static boolean isRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }
}
