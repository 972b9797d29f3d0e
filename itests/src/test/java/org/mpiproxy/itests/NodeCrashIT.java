package org.mpiproxy.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Done item 3 of node hygiene: {@code kill -9} of the whole Karaf mid-job, then a restart. The
 * distribution is unpacked and run as users run it ({@code bin/start}), with its own ports and
 * shared-memory base directory, so it never meets another Karaf of the build.
 */
class NodeCrashIT {

    private static final Duration BOOT = Duration.ofSeconds(300);
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The restart window of the second test, short so that the test sees it end. */
    private static final long SURVIVE_SECONDS = 4;
    /** Ceiling from the kill to the end of the kept processes: the window and the grace, with room for a busy machine. */
    private static final Duration STOPPED_WITHIN = Duration.ofSeconds(120);
    /** What the node keeper says when the window has passed and it stops the processes it keeps. */
    private static final String KEEPER_STOPS = "kept process(es) over; stopping them";

    private Path work;
    private Path home;
    private Path shm;
    private int udpPort;
    private final List<long[]> processes = new ArrayList<>();

    @BeforeEach
    void unpack() throws Exception {
        Path target = Paths.get(System.getProperty("mpiproxy.itest.target"));
        work = Files.createTempDirectory(target, "node-crash-");
        run(List.of("tar", "-xzf", System.getProperty("mpiproxy.itest.distribution"), "-C", work.toString()),
                work);
        try (Stream<Path> top = Files.list(work)) {
            home = top.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        shm = work.resolve("shm");
        udpPort = Ports.freeUdpPort("127.0.0.1");
        set("org.mpiproxy.transport.udp.cfg", "port", Integer.toString(udpPort));
        set("org.mpiproxy.channel.shm.cfg", "base.directory", shm.toString());
        set("org.apache.karaf.shell.cfg", "sshPort", "0");
        // shipped off; this node's jobs come from a FreeNOS host
        set("org.mpiproxy.proxy.cfg", "v1.enabled", "true");
        set("org.apache.karaf.management.cfg", "rmiRegistryPort", Integer.toString(Ports.freeTcpPort()));
        set("org.apache.karaf.management.cfg", "rmiServerPort", Integer.toString(Ports.freeTcpPort()));
        // a rank that records itself and a grandchild, then waits forever
        program("waiter", "echo \"$$\" > \"$0.rank-$MPIPROXY_RANK\"\n"
                + "( sleep 1000 & echo \"$!\" > \"$0.child-$MPIPROXY_RANK\" )\n"
                + "while :; do sleep 1; done\n");
        program("quick", "exit 5\n");
    }

    @AfterEach
    void cleanUp() throws Exception {
        long karaf = karafPid();
        if (karaf > 0) {
            new ProcessBuilder("kill", "-KILL", Long.toString(karaf)).start().waitFor(10, TimeUnit.SECONDS);
        }
        for (long[] p : processes) {
            if (isRunning(p[0], p[1])) {
                new ProcessBuilder("kill", "-KILL", Long.toString(p[0])).start().waitFor(10, TimeUnit.SECONDS);
            }
        }
        killKeepers();
        if (!Boolean.getBoolean("mpiproxy.itest.keep") && work != null) {
            try (Stream<Path> all = Files.walk(work)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void shouldLeaveNoRankAndNoJobDirectoryOfACrashedRunAndRunNewJobs() throws Exception {
        startKaraf();
        try (FreeNosHost host = new FreeNosHost(udpPort, 1000)) {
            awaitExec(host, 1, 3, "waiter", home);
            awaitExec(host, 2, 3, "waiter", home);
        }
        String bootLog = Files.readString(home.resolve("data/log/karaf.log"));
        assertFalse(bootLog.contains("Stopping bundles:"), "first boot refreshed bundles:\n" + bootLog);
        for (int rank = 1; rank <= 2; rank++) {
            processes.add(await(home.resolve("programs/waiter.rank-" + rank)));
            processes.add(await(home.resolve("programs/waiter.child-" + rank)));
        }
        assertEquals(1, jobDirectories().size(), "the job's shared memory: " + jobDirectories());
        long karaf = karafPid();
        assertTrue(karaf > 0, "karaf.pid");

        run(List.of("kill", "-KILL", Long.toString(karaf)), home);
        awaitGone(karaf);
        for (long[] p : processes) {
            assertTrue(isRunning(p[0], p[1]), "pid " + p[0] + " outlives the crash (nothing else stops it)");
        }
        Files.deleteIfExists(home.resolve("karaf.pid"));

        startKaraf();
        try (FreeNosHost host = new FreeNosHost(udpPort, 1000)) {
            // the proxy answers only once its start-up clean-up is done
            awaitExec(host, 1, 2, "quick", home);
            for (long[] p : processes) {
                assertFalse(isRunning(p[0], p[1]), "pid " + p[0] + " of the crashed run is gone");
            }
            List<Path> left = jobDirectories();
            assertEquals(1, left.size(), "only the new job's directory remains: " + left);
            FreeNosHost.Reply terminate = terminate(host, 1);
            assertEquals(0, terminate.result, terminate.toString());
            assertEquals(5, terminate.datacount, "the new job ran: exit status of its rank");
        }
        assertTrue(jobDirectories().isEmpty(), "the new job's directory is removed: " + jobDirectories());
    }

    /**
     * Issue 14, Done 4: after {@code kill -9} of Karaf's JVM the ranks are kept by the node keeper
     * for {@code restart.survive.seconds}, then stopped with their whole process groups when no
     * proxy took them over; the keeper ends with them, and the next start cleans up as before.
     * The keeper says both moments on its standard error: every kept process runs until it says it
     * stops them, and that is no earlier than the window after the kill.
     */
    @Test
    void shouldStopRanksNobodyTookOverWhenTheRestartWindowEnds() throws Exception {
        set("org.mpiproxy.proxy.cfg", "restart.survive.seconds", Long.toString(SURVIVE_SECONDS));
        set("org.mpiproxy.proxy.cfg", "stop.grace.seconds", "2");
        startKaraf();
        try (FreeNosHost host = new FreeNosHost(udpPort, 1000)) {
            awaitExec(host, 1, 3, "waiter", home);
            awaitExec(host, 2, 3, "waiter", home);
        }
        for (int rank = 1; rank <= 2; rank++) {
            processes.add(await(home.resolve("programs/waiter.rank-" + rank)));
            processes.add(await(home.resolve("programs/waiter.child-" + rank)));
        }
        long karaf = karafPid();
        assertTrue(karaf > 0, "karaf.pid");
        long keeper = keeperOf(karaf);
        assertTrue(keeper > 0, "bin/start runs Karaf under the node keeper");

        // taken before the kill: the keeper's window starts when it reaps the JVM, later than this
        long killed = System.nanoTime();
        run(List.of("kill", "-KILL", Long.toString(karaf)), home);
        awaitGone(karaf);
        long deadline = killed + STOPPED_WITHIN.toNanos();
        long gone;
        while (true) {
            // processes first, then what the keeper said: a process seen ended before the keeper said
            // it stops them ended before it stopped them
            int running = 0;
            for (long[] p : processes) {
                running += isRunning(p[0], p[1]) ? 1 : 0;
            }
            long looked = System.nanoTime();
            String said = keeperSaid();
            if (!said.contains(KEEPER_STOPS)) {
                assertEquals(processes.size(), running, "every kept process runs until the keeper stops them;"
                        + " the keeper said:\n" + said);
            }
            if (running == 0) {
                gone = looked;
                break;
            }
            assertTrue(looked - deadline < 0, running + " process(es) still run " + STOPPED_WITHIN
                    + " after the kill; the keeper said:\n" + said);
            Thread.sleep(50);
        }
        String said = keeperSaid();
        assertTrue(said.contains("process(es) kept for up to " + SURVIVE_SECONDS + " s for a proxy to take them over"),
                "the keeper kept the ranks for the configured window: " + said);
        assertTrue(said.contains(KEEPER_STOPS), "the keeper stopped them: " + said);
        // both ends lean the keeper's way (the kill is timed before it is sent, the end after it is
        // seen): a busy machine only lengthens what is measured here, never shortens it
        assertTrue(gone - killed >= TimeUnit.SECONDS.toNanos(SURVIVE_SECONDS), "the ranks were kept for the window,"
                + " not stopped early: all gone " + TimeUnit.NANOSECONDS.toMillis(gone - killed) + " ms after the kill");
        while (ProcessHandle.of(keeper).map(ProcessHandle::isAlive).orElse(false)) {
            assertTrue(System.nanoTime() - deadline < 0, "the keeper ends once its last orphan is gone");
            Thread.sleep(50);
        }
        assertEquals(1, jobDirectories().size(), "the crashed job's shared memory waits for the next start");
        Files.deleteIfExists(home.resolve("karaf.pid"));

        startKaraf();
        try (FreeNosHost host = new FreeNosHost(udpPort, 1000)) {
            awaitExec(host, 1, 2, "quick", home);
            List<Path> left = jobDirectories();
            assertEquals(1, left.size(), "only the new job's directory remains: " + left);
            FreeNosHost.Reply terminate = terminate(host, 1);
            assertEquals(0, terminate.result, terminate.toString());
            assertEquals(5, terminate.datacount, "the new job ran: exit status of its rank");
        }
        assertTrue(jobDirectories().isEmpty(), "the new job's directory is removed: " + jobDirectories());
    }

    /** @return what Karaf and its node keeper wrote to their standard output and error so far */
    private String keeperSaid() throws IOException {
        Path out = work.resolve("karaf.out");
        return Files.exists(out) ? Files.readString(out) : "";
    }

    /** @return the pid of the node keeper among the ancestors of {@code pid}, or -1 */
    private static long keeperOf(long pid) {
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        while (p.isPresent()) {
            p = p.get().parent();
            if (p.isPresent() && p.get().info().commandLine().map(c -> c.contains("NodeKeeper")).orElse(false)) {
                return p.get().pid();
            }
        }
        return -1;
    }

    /** Kills the node keepers of this node (a test that failed may leave one waiting). */
    private void killKeepers() {
        String marker = home == null ? null : home.toString();
        ProcessHandle.allProcesses()
                .filter(p -> marker != null && p.info().commandLine()
                        .map(c -> c.contains("NodeKeeper") && c.contains(marker)).orElse(false))
                .forEach(ProcessHandle::destroyForcibly);
    }

    private void startKaraf() throws Exception {
        ProcessBuilder start = new ProcessBuilder(home.resolve("bin/start").toString()).directory(home.toFile())
                .redirectErrorStream(true).redirectOutput(work.resolve("start.log").toFile());
        start.environment().put("JAVA_HOME", System.getProperty("java.home"));
        start.environment().put("EXTRA_JAVA_OPTS", "-Xms32m -Xmx128m");
        // the node keeper's lines (standard error) are the test's record of when it keeps and stops ranks
        start.environment().put("KARAF_REDIRECT", work.resolve("karaf.out").toString());
        Process p = start.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "bin/start returned");
        assertEquals(0, p.exitValue(), "bin/start: " + Files.readString(work.resolve("start.log")));
    }

    /** EXEC until the proxy answers (it boots meanwhile); the reply must be a success. */
    private static void awaitExec(FreeNosHost host, int rank, int world, String program, Path home)
            throws IOException {
        long deadline = System.nanoTime() + BOOT.toNanos();
        while (System.nanoTime() < deadline) {
            host.sendRaw(execDatagram(rank, world, program));
            FreeNosHost.Reply reply;
            try {
                reply = host.receiveOrNull();
            } catch (java.net.PortUnreachableException e) {
                reply = null;
            }
            if (reply != null) {
                assertEquals(FreeNosHost.EXEC, reply.op, reply.toString());
                if (reply.result != 0) {
                    fail("EXEC " + program + ": " + reply + " " + reply.text() + "; end of karaf.log:\n" + logTail(home));
                }
                return;
            }
        }
        fail("the proxy did not answer within " + BOOT + "; end of karaf.log:\n" + logTail(home));
    }

    private static String logTail(Path home) throws IOException {
        Path log = home.resolve("data/log/karaf.log");
        List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of("(no karaf.log)");
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }

    /** TERMINATE, skipping late replies to the EXECs sent while the proxy booted. */
    private static FreeNosHost.Reply terminate(FreeNosHost host, int rank) throws IOException {
        host.sendRaw(FreeNosHost.header(FreeNosHost.TERMINATE, 0, rank, 0, 0, 0, 0));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            FreeNosHost.Reply reply = host.receiveOrNull();
            if (reply != null && reply.op == FreeNosHost.TERMINATE) {
                return reply;
            }
        }
        throw new AssertionError("no TERMINATE reply within " + WAIT);
    }

    private static byte[] execDatagram(int rank, int world, String program) {
        byte[] text = program.getBytes(StandardCharsets.US_ASCII);
        byte[] d = FreeNosHost.header(FreeNosHost.EXEC, 0, rank, 0, world, 0, text.length);
        System.arraycopy(text, 0, d, FreeNosHost.HEADER, text.length);
        return d;
    }

    private List<Path> jobDirectories() throws IOException {
        if (!Files.isDirectory(shm)) {
            return List.of();
        }
        try (Stream<Path> dirs = Files.list(shm)) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("job-")).toList();
        }
    }

    private long karafPid() {
        try {
            Path file = home.resolve("karaf.pid");
            return Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** Waits for a pid file written by a rank; returns {pid, start time}. */
    private static long[] await(Path pidFile) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(pidFile)) {
                String text = Files.readString(pidFile);
                if (text.endsWith("\n")) {
                    long pid = Long.parseLong(text.trim());
                    return new long[] {pid, startTime(pid)};
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError(pidFile + " not written within " + WAIT);
    }

    private static void awaitGone(long pid) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            assertTrue(System.nanoTime() < deadline, "Karaf (pid " + pid + ") still alive after SIGKILL");
            Thread.sleep(20);
        }
    }

    /** Field 22 of /proc/<pid>/stat, or -1. */
    private static long startTime(long pid) throws IOException {
        Path stat = Paths.get("/proc", Long.toString(pid), "stat");
        if (!Files.exists(stat)) {
            return -1;
        }
        String line = Files.readString(stat);
        String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[19]);
    }

    private static boolean isRunning(long pid, long start) throws IOException {
        Path stat = Paths.get("/proc", Long.toString(pid), "stat");
        try {
            String line = Files.readString(stat);
            String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
            return !fields[0].equals("Z") && Long.parseLong(fields[19]) == start;
        } catch (java.nio.file.NoSuchFileException e) {
            return false;
        }
    }

    private void program(String name, String body) throws IOException {
        Path file = home.resolve("programs").resolve(name);
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private void set(String cfg, String key, String value) throws IOException {
        Path file = home.resolve("etc").resolve(cfg);
        String text = Files.readString(file);
        String replaced = text.replaceAll("(?m)^\\s*" + java.util.regex.Pattern.quote(key) + "\\s*=.*$",
                java.util.regex.Matcher.quoteReplacement(key + " = " + value));
        if (replaced.equals(text)) {
            replaced = text + "\n" + key + " = " + value + "\n";
        }
        Files.writeString(file, replaced);
    }

    private static void run(List<String> command, Path directory) throws Exception {
        Process p = new ProcessBuilder(command).directory(directory.toFile()).inheritIO().start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), command + " finished");
        assertEquals(0, p.exitValue(), command + " exit status");
    }


}
