package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.JobInfo;
import org.mpiproxy.api.ProxyStatus;
import org.mpiproxy.api.RankInfo;
import org.mpiproxy.transport.udp.internal.UdpTransport;
import org.mpiproxy.transport.udp.internal.UdpTransportSettings;

/** The operator actions: signals to real processes, output files, console jobs over a real socket. */
class OperatorControlTest {

    @TempDir
    Path dir;

    private Process sleeper;
    private ProxyControlComponent control;

    @AfterEach
    void tearDown() {
        if (sleeper != null) {
            sleeper.destroyForcibly();
        }
        if (control != null) {
            control.deactivate();
        }
    }

    private static ProxyStatus status(List<JobInfo> jobs) {
        return new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return jobs;
            }

            @Override
            public Map<String, Long> counters() {
                return Map.of();
            }
        };
    }

    private static HealthCheckComponent health() {
        return new HealthCheckComponent(TestConfigs.of(HealthCheckComponent.Config.class, Map.of()));
    }

    private static void await(BooleanSupplier condition, String what) {
        Await.until(condition, what);
    }

    @Test
    void shouldSendTheChosenSignalToARunningRank() throws Exception {
        // SIGINT as the default whatever this JVM inherited (a background job ignores it, and so would sleep)
        sleeper = new ProcessBuilder("env", "--default-signal=INT", "sleep", "600").start();
        // until env has reset SIGINT and become sleep, the signal could still meet the inherited disposition
        java.nio.file.Path comm = java.nio.file.Path.of("/proc", Long.toString(sleeper.pid()), "comm");
        await(() -> {
            try {
                return java.nio.file.Files.readString(comm).trim().equals("sleep");
            } catch (java.io.IOException e) {
                return false;
            }
        }, "env became sleep");
        JobInfo job = new JobInfo(7, "v1", "127.0.0.1:1", Instant.EPOCH, List.of(
                new RankInfo(1, 0, "sleep", sleeper.pid(), RankInfo.State.RUNNING, -1, 0, 0, 0, 0),
                new RankInfo(2, 0, "sleep", 1, RankInfo.State.EXITED, 0, 0, 0, 0, 0)));
        control = new ProxyControlComponent(status(List.of(job)), health(), new RankSignals(), dir);

        assertEquals(List.of(1), control.signal(7, 0, "sigint"));
        assertTrue(sleeper.waitFor(Await.CEILING.toSeconds(), TimeUnit.SECONDS), "sleep still runs after SIGINT");
        assertEquals(128 + 2, sleeper.exitValue(), "exit status of a process ended by SIGINT");
        assertEquals(List.of(), control.signal(7, 2, "KILL"), "an exited rank is not signalled");
    }

    @Test
    void shouldRefuseUnknownJobsRanksAndSignals() {
        JobInfo job = new JobInfo(7, "v1", "127.0.0.1:1", Instant.EPOCH, List.of(
                new RankInfo(1, 0, "p", 99999999, RankInfo.State.RUNNING, -1, 0, 0, 0, 0)));
        control = new ProxyControlComponent(status(List.of(job)), health(), new RankSignals(), dir);
        assertEquals("no job 0000000000000008",
                assertThrows(IllegalArgumentException.class, () -> control.signal(8, 0, "TERM")).getMessage());
        assertEquals("job 0000000000000007 has no rank 3",
                assertThrows(IllegalArgumentException.class, () -> control.signal(7, 3, "TERM")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> control.signal(7, 1, "SEGV")).getMessage()
                .startsWith("signal 'SEGV' is not one of TERM, KILL"));
        assertEquals(List.of(), control.signal(7, 1, "TERM"), "a pid that is gone is not signalled");
    }

    @Test
    void shouldFindRankOutputBelowTheLogDirectory() {
        JobInfo job = new JobInfo(0xabL, "v1", "127.0.0.1:1", Instant.EPOCH, List.of(
                new RankInfo(2, 0, "p", 1, RankInfo.State.EXITED, 0, 0, 0, 0, 0)));
        control = new ProxyControlComponent(status(List.of(job)), health(), new RankSignals(), dir);
        assertEquals(dir.resolve("job-00000000000000ab/rank-2.out"), control.outputFile(0xab, 2, false));
        assertEquals(dir.resolve("job-00000000000000ab/rank-2.err"), control.outputFile(0xab, 2, true));
        assertThrows(IllegalArgumentException.class, () -> control.outputFile(0xab, 1, false));
    }

    @Test
    void shouldRunAConsoleJobOverLoopbackAndTerminateItWhenItsRanksEnd() throws Exception {
        FakeChannelManager channels = new FakeChannelManager();
        FakeLauncher launcher = new FakeLauncher();
        ExecutorService launches = Executors.newFixedThreadPool(2);
        AtomicReference<UdpTransport> transportRef = new AtomicReference<>();
        V1Dispatcher dispatcher = new V1Dispatcher(channels,
                new ProxySettings(dir, 1 << 20, Duration.ofSeconds(30), Duration.ofSeconds(1)),
                coreId -> launcher, () -> transportRef.get().wakeup(), launches, new ScheduledThreadPoolExecutor(1));
        UdpTransport transport = new UdpTransport(UdpTransportSettings.of("127.0.0.1", 0, 1 << 16, 1 << 16, 65507),
                () -> dispatcher);
        transportRef.set(transport);
        ProxyStatus status = new ProxyStatus() {
            @Override
            public List<JobInfo> jobs() {
                return dispatcher.jobs();
            }

            @Override
            public Map<String, Long> counters() {
                return dispatcher.counters();
            }
        };
        try {
            control = new ProxyControlComponent(status, health(), new RankSignals(), dir);
            control.transport = transport;

            JobInfo job = control.exec("mpiping", List.of("7"), List.of(0, 0));

            assertEquals(2, job.ranks().size(), job.toString());
            assertEquals(RankInfo.State.RUNNING, job.ranks().get(0).state());
            assertEquals(List.of("7"), launcher.requests.get(0).args());
            assertEquals(3, launcher.requests.get(0).worldSize());
            assertEquals(List.of(job.jobId()), control.consoleJobIds());

            launcher.processes.forEach(p -> p.exitWith(0));
            await(() -> control.consoleJobIds().isEmpty(), "the console job to be terminated");
            await(() -> dispatcher.counters().get("jobs.finished") == 1, "the job to finish");
            assertEquals(2, dispatcher.counters().get("terminate.requests"));
            assertFalse(dispatcher.jobs().isEmpty(), "the finished job stays in the history");
        } finally {
            transport.close();
            dispatcher.close();
            launches.shutdownNow();
        }
    }

    @Test
    void shouldRefuseBadConsoleJobsBeforeSendingAnything() {
        control = new ProxyControlComponent(status(List.of()), health(), new RankSignals(), dir);
        assertThrows(IllegalArgumentException.class, () -> control.exec("../bin/sh", List.of(), List.of(0)));
        assertEquals("a job needs at least one rank",
                assertThrows(IllegalArgumentException.class, () -> control.exec("p", List.of(), List.of()))
                        .getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> control.exec("p", List.of("a b"), List.of(0)))
                .getMessage().contains("contains a space"));
        assertEquals("the proxy is not listening: no UDP transport runs",
                assertThrows(IllegalStateException.class, () -> control.exec("p", List.of(), List.of(0)))
                        .getMessage());
    }

    @Test
    void shouldListExecutableProgramsOfTheLaunchers() throws Exception {
        Path programs = Files.createDirectories(dir.resolve("programs"));
        Files.writeString(programs.resolve("hello"), "#!/bin/sh\n");
        programs.resolve("hello").toFile().setExecutable(true);
        Files.writeString(programs.resolve("notes.txt"), "x");
        HealthCheckComponent health = health();
        health.addLauncher(new FakeLauncher(), Map.of("mpiproxy.launcher", "local",
                "program.directory", programs.toString()));
        control = new ProxyControlComponent(status(List.of()), health, new RankSignals(), dir);
        assertEquals(List.of("hello"), control.programs());
    }

    @Test
    void shouldOfferAnImageAsItsProgramNeverAsItself() throws Exception {
        Path programs = Files.createDirectories(dir.resolve("programs"));
        for (String name : List.of("hello", "hello.lz4", "remote.lz4")) {
            Files.writeString(programs.resolve(name), "#!/bin/sh\n");
            programs.resolve(name).toFile().setExecutable(true);
        }
        HealthCheckComponent health = health();
        health.addLauncher(new FakeLauncher(), Map.of("mpiproxy.launcher", "local",
                "program.directory", programs.toString()));
        control = new ProxyControlComponent(status(List.of()), health, new RankSignals(), dir);
        assertEquals(List.of("hello", "remote"), control.programs());
        assertEquals("'hello.lz4' is the LZ4 image of program 'hello' for remote cores, not a program: name 'hello'",
                assertThrows(IllegalArgumentException.class,
                        () -> control.exec("hello.lz4", List.of(), List.of(0))).getMessage());
    }
}
