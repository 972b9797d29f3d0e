package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchException;

/**
 * The rank's supervision guarantees through the native spawn path (one exec): its own session
 * and process group, pinning without taskset, the exit status, the lifeline variables, nothing
 * of the JVM inherited but the three standard descriptors, default signal dispositions.
 */
class NativeSpawnTest {

    /** Longest wait for a process event: only catches a hang. */
    private static final long TIMEOUT_SECONDS = 60;

    @TempDir
    Path temp;

    private SpawnedRankProcess process;

    @BeforeEach
    void nativeSpawnOnLinux() {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        System.setProperty(NativeSpawn.ENABLE_PROPERTY, "true");
        // glibc 2.34 or later and JNA on the class path, as on a Debian 12 node
        assertNull(NativeSpawn.instance().unavailableReason(), "native spawn is not available");
    }

    @AfterEach
    void killLeftovers() {
        System.clearProperty(NativeSpawn.ENABLE_PROPERTY);
        if (process != null && process.isAlive()) {
            process.stop(Duration.ZERO);
        }
    }

    private SpawnedRankProcess start(Path script, Map<String, String> env, int cpu) throws LaunchException {
        process = RankProcessStarter.start(script.getFileName().toString(), List.of(script.toString()), env,
                temp.resolve("logs"), 1, 1, 0, OutputSettings.DEFAULT, null, cpu, null);
        return process;
    }

    private int exit(SpawnedRankProcess p) throws Exception {
        return p.onExit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private String output(SpawnedRankProcess p) throws Exception {
        exit(p);
        return Files.readString(RankProcessStarter.outputFile(temp.resolve("logs"), 1));
    }

    @Test
    void shouldStartTheProgramItselfLeadingItsOwnSessionAndGroup() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), -1);
        ProcStat stat = ProcStat.read(p.pid()).orElseThrow();
        assertEquals(p.pid(), stat.pgrp(), "process group");
        assertEquals(p.pid(), stat.session(), "session");
        assertEquals(ProcessHandle.current().pid(), stat.ppid(), "spawned by the JVM itself, no setsid in between");
        Path cmdline = Path.of("/proc", Long.toString(p.pid()), "cmdline");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        // empty for a moment while the kernel sets up the new program
        while (Files.readString(cmdline).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        String first = Files.readString(cmdline);
        assertTrue(first.startsWith("/bin/sh") || first.startsWith("sleep"), "the script itself, not a helper: " + first);
    }

    @Test
    void shouldPinTheRankToItsCpuWithoutTaskset() throws Exception {
        BitSet allowed = cpus(Files.readString(Path.of("/proc/self/status")));
        int cpu = allowed.length() - 1;
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), cpu);
        BitSet rank = cpus(Files.readString(Path.of("/proc", Long.toString(p.pid()), "status")));
        assertEquals(1, rank.cardinality(), "one CPU: " + rank);
        assertTrue(rank.get(cpu), "CPU " + cpu + ": " + rank);
        assertEquals(allowed, cpus(Files.readString(Path.of("/proc/thread-self/status"))),
                "the spawning thread runs where it did before");
    }

    @Test
    void shouldRefuseACpuTheProxyMayNotRunOn() {
        LaunchException e = assertThrows(LaunchException.class,
                () -> start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), 1000));
        assertTrue(e.getMessage().contains("CPU 1000"), e.getMessage());
    }

    @Test
    void shouldReportTheExitCodeAndTheSignal() throws Exception {
        assertEquals(7, exit(start(TestScripts.write(temp, "seven", "exit 7\n"), Map.of(), -1)));
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), -1);
        assertTrue(NativeSpawn.instance().signal(p.pid(), NativeSpawn.SIGKILL));
        assertEquals(137, exit(p));
        assertFalse(p.isAlive());
    }

    @Test
    void shouldPassTheRanksVariablesAndNothingButTheStandardDescriptors() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "inspect", String.join("\n",
                "echo \"var=$MPIPROXY_PROXY_PID\"",
                "echo \"stdin=$(readlink /proc/$$/fd/0)\"",
                // grep's own masks, which the shell passes on; the shell's own are all blocked while it forks
                "grep '^SigIgn\\|^SigBlk' /proc/self/status",
                // the descriptors ls has: the three standard ones and the directory it reads
                "exec ls /proc/self/fd", "")),
                Map.of("MPIPROXY_PROXY_PID", "4242"), -1);
        String out = output(p);
        assertTrue(out.contains("var=4242"), out);
        assertTrue(out.contains("stdin=/dev/null"), out);
        assertEquals(List.of("0", "1", "2", "3"), out.lines().filter(l -> l.matches("\\d+")).toList(),
                "no descriptor of the JVM: " + out);
        // glibc keeps signals 32 and 33 for itself (sigfillset leaves them out): the rest are default
        long ignored = Long.parseUnsignedLong(field(out, "SigIgn"), 16) & ~(3L << 31);
        assertEquals(0, ignored, "no signal ignored: " + out);
        assertEquals(0, Long.parseUnsignedLong(field(out, "SigBlk"), 16), "no signal blocked: " + out);
    }

    @Test
    void shouldStopTheWholeGroupWithKill() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "forker", "sleep 30 &\nsleep 30 &\nwait\n"), Map.of(), -1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (ProcessHandle.of(p.pid()).map(h -> h.children().count()).orElse(0L) < 2) {
            assertTrue(System.nanoTime() < deadline, "both children started");
            Thread.sleep(10);
        }
        assertTrue(ProcessGroup.hasMembers(p.pid()));
        assertTrue(ProcessGroup.signal(p.pid(), ProcessGroup.Signal.KILL));
        assertEquals(137, exit(p));
        assertFalse(ProcessGroup.hasMembers(p.pid()), "every member of the group ended");
    }

    @Test
    void shouldSeeTheGroupOfAnEndedRankWithoutChildrenAsEmpty() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "quick", "exit 0\n"), Map.of(), -1);
        assertEquals(0, exit(p));
        assertTrue(NativeSpawn.instance().groupEmpty(p.pid()), "the rank was reaped, nothing else was in its group");
        assertTrue(ProcessGroup.kill(p.pid(), Duration.ofSeconds(1)));
    }

    @Test
    void shouldSeeAGroupWithAMemberAsNotEmpty() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), -1);
        assertFalse(NativeSpawn.instance().groupEmpty(p.pid()));
        assertTrue(ProcessGroup.kill(p.pid(), Duration.ofSeconds(TIMEOUT_SECONDS)));
        assertEquals(137, exit(p));
    }

    @Test
    void shouldSendANamedSignalToTheGroupWithoutSpawningKill() throws Exception {
        SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), -1);
        assertEquals(java.util.Optional.of(true), ProcessGroup.send(-p.pid(), "STOP"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (ProcStat.read(p.pid()).orElseThrow().state() != 'T' && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals('T', ProcStat.read(p.pid()).orElseThrow().state(), "stopped");
        assertEquals(java.util.Optional.of(true), ProcessGroup.send(-p.pid(), "CONT"));
        assertEquals(java.util.Optional.empty(), ProcessGroup.send(-p.pid(), "WINCH"), "a name it does not map");
        assertEquals(java.util.Optional.empty(), ProcessGroup.send(-1, "KILL"), "never every process");
        assertEquals(java.util.Optional.of(true), ProcessGroup.send(-p.pid(), "TERM"));
        assertEquals(143, exit(p));
    }

    @Test
    void shouldSpawnThroughProcessBuilderWhenAsked() throws Exception {
        System.setProperty(NativeSpawn.ENABLE_PROPERTY, "false");
        try {
            assertFalse(NativeSpawn.instance().available());
            SpawnedRankProcess p = start(TestScripts.write(temp, "sleeper", "exec sleep 30\n"), Map.of(), -1);
            Path cmdline = Path.of("/proc", Long.toString(p.pid()), "cmdline");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
            // setsid and the script exec in place, one after the other
            while (!Files.readString(cmdline).startsWith("sleep")) {
                assertTrue(System.nanoTime() < deadline, "the script runs");
                Thread.sleep(5);
            }
            ProcStat stat = ProcStat.read(p.pid()).orElseThrow();
            assertEquals(p.pid(), stat.session(), "setsid still makes the session");
        } finally {
            System.setProperty(NativeSpawn.ENABLE_PROPERTY, "true");
        }
    }

    @Test
    void shouldDecodeWaitStatusesAsJavaDoes() {
        assertEquals(0, NativeSpawn.exitValue(0));
        assertEquals(3, NativeSpawn.exitValue(3 << 8));
        assertEquals(255, NativeSpawn.exitValue(255 << 8));
        assertEquals(143, NativeSpawn.exitValue(15));
        assertEquals(137, NativeSpawn.exitValue(9 | 0x80), "with a core dump");
    }

    private static String field(String status, String name) {
        return status.lines().filter(l -> l.startsWith(name + ":")).findFirst().orElseThrow()
                .substring(name.length() + 1).trim();
    }

    /** @return the CPUs of a status file's Cpus_allowed_list */
    private static BitSet cpus(String status) {
        String list = status.lines().filter(l -> l.startsWith("Cpus_allowed_list:")).findFirst().orElseThrow()
                .substring("Cpus_allowed_list:".length()).trim();
        BitSet set = new BitSet();
        for (String part : list.split(",")) {
            String[] range = part.split("-");
            int from = Integer.parseInt(range[0]);
            int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
            set.set(from, to + 1);
        }
        return set;
    }
}
