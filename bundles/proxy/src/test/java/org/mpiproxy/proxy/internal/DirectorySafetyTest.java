package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.RankProcess;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.api.config.ConfigurationGate;
import org.mpiproxy.api.config.RejectedConfigurationException;
import org.mpiproxy.process.ProcStat;
import org.mpiproxy.process.RankProcessStarter;

/**
 * The directories the proxy writes on a node many users share (logs, state, staged programs, and
 * what the health check says of shared memory): one that exists as another user's, or writable by
 * others, is refused in one line and the proxy does not start on it; the log directory is its
 * owner's, or a configured group's to read.
 */
class DirectorySafetyTest {

    @TempDir
    Path dir;

    private final List<String> lines = new ArrayList<>();
    private String karafData;
    private RankProcess orphan;

    @BeforeEach
    void privateData() {
        karafData = System.getProperty("karaf.data");
        System.setProperty("karaf.data", dir.resolve("data").toString());
    }

    @AfterEach
    void restore() {
        if (karafData == null) {
            System.clearProperty("karaf.data");
        } else {
            System.setProperty("karaf.data", karafData);
        }
        if (orphan != null) {
            orphan.stop(Duration.ZERO);
        }
    }

    private Map<String, Object> config() {
        Map<String, Object> m = new HashMap<>();
        m.put("log.directory", dir.resolve("logs").toString());
        m.put("state.directory", dir.resolve("state").toString());
        m.put("v2.enabled", "false");
        m.put("startup.wait.seconds", "0");
        return m;
    }

    private static Path made(Path directory, String mode) throws IOException {
        Files.createDirectories(directory);
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString(mode));
        return directory;
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private void assertNotStarted(Map<String, Object> config, String line) {
        ProxyComponent component = new ProxyComponent(config, new CheckedConfiguration<>(ProxyConfig.class),
                lines::add);
        assertThrows(RejectedConfigurationException.class, component::activate, "the node is not ready");
        assertEquals(List.of(ProxyComponent.PID + ": " + line
                + "; no good configuration yet: not started until the value is fixed"), lines);
    }

    @Test
    void shouldNotStartOnALogDirectoryOthersCanWrite() throws IOException {
        Path logs = made(dir.resolve("logs"), "rwxrwxrwx");
        assertNotStarted(config(), "log.directory=" + logs + " can be written by its group or others (rwxrwxrwx);"
                + " refusing to use it");
        assertEquals("rwxrwxrwx", mode(logs), "left as it is");
    }

    @Test
    void shouldNotStartOnAStateDirectoryOfAnotherUser() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a directory to another user needs root");
        Path state = made(dir.resolve("state"), "rwx------");
        Files.setAttribute(state, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        assertNotStarted(config(), "state.directory=" + state + " is owned by uid 65534, not by uid 0 that runs the"
                + " proxy; refusing to use it (remove it, or give it to uid 0 with mode 700)");
    }

    @Test
    void shouldNotStartOnAStagedDirectoryOthersCanWrite() throws IOException {
        Path staged = made(dir.resolve("data").resolve("mpiproxy").resolve("staged"), "rwxrwx---");
        assertNotStarted(config(), "staged directory " + staged + " can be written by its group or others"
                + " (rwxrwx---); refusing to use it");
    }

    @Test
    void shouldKeepTheGateClosedOnARefusedDirectory() throws IOException {
        made(dir.resolve("logs"), "rwxrwxrwx");
        ConfigurationGate<ProxyConfig> gate = new ConfigurationGate<>(ProxyComponent.PID, ProxyConfig.class,
                ProxyConfigs::validate);
        AtomicBoolean enabled = new AtomicBoolean();

        assertFalse(gate.offer(config(), lines::add, () -> enabled.set(true)));

        assertFalse(enabled.get(), "the proxy is not enabled");
        assertEquals(1, lines.size());
    }

    @Test
    void shouldRefuseAChangeToADirectoryOthersCanWriteAndKeepTheLastGood() throws IOException {
        ProxyComponent component = new ProxyComponent(config(), new CheckedConfiguration<>(ProxyConfig.class),
                lines::add);
        try {
            Path open = made(dir.resolve("open-logs"), "rwxrwx---");
            Map<String, Object> next = config();
            next.put("log.directory", open.toString());

            component.modified(next);

            assertEquals(List.of(ProxyComponent.PID + ": log.directory=" + open + " can be written by its group or"
                    + " others (rwxrwx---); refusing to use it; keeping the last good configuration"), lines);
            assertEquals(dir.resolve("logs"), component.settingsInForce().getKey().logDirectory());
        } finally {
            component.deactivate();
        }
    }

    @Test
    void shouldTakeAwayWhatAnExistingLogDirectoryGaveOthers() throws IOException {
        Path logs = made(dir.resolve("logs"), "rwxr-xr-x");

        ProxyComponent component = new ProxyComponent(config(), new CheckedConfiguration<>(ProxyConfig.class),
                lines::add);
        component.deactivate();

        assertEquals("rwx------", mode(logs));
        assertEquals(List.of(), lines);
    }

    @Test
    void shouldLetTheLogGroupReadTheLogDirectory() throws IOException {
        Map<String, Object> config = config();
        config.put("log.group", "100");

        ProxyComponent component = new ProxyComponent(config, new CheckedConfiguration<>(ProxyConfig.class),
                lines::add);
        component.deactivate();

        Path logs = dir.resolve("logs");
        assertEquals("rwxr-x---", mode(logs));
        assertEquals(100, (Integer) Files.getAttribute(logs, "unix:gid", LinkOption.NOFOLLOW_LINKS));
        assertEquals(List.of(), lines);
    }

    @Test
    void shouldRefuseAnUnknownLogGroup() {
        Map<String, Object> config = config();
        config.put("log.group", "no-such-group-here");
        assertNotStarted(config, "log.group=no-such-group-here is not a group of this node");
    }

    @Test
    void shouldNotKillWhatRecordsInAStateDirectoryOthersCanWriteName() throws Exception {
        Path state = made(dir.resolve("state"), "rwx------");
        Path script = dir.resolve("sleeper");
        Files.writeString(script, "#!/bin/sh\nexec sleep 600\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        orphan = RankProcessStarter.start("sleeper", List.of(script.toString()), Map.of(), dir.resolve("logs")
                .resolve("job-1"), 1, 0);
        long start = ProcStat.read(orphan.pid()).orElseThrow().startTime();
        Files.writeString(state.resolve("job-0000000000000001.ranks"), "1 " + orphan.pid() + " " + start + "\n");
        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertEquals(new RankLedger.Sweep(0, 0), new RankLedger(state).sweep(new FakeChannelManager(), Set.of()));
        assertTrue(ProcStat.isRunning(orphan.pid(), start), "records anyone could have written kill nothing");

        Files.setPosixFilePermissions(state, PosixFilePermissions.fromString("rwx------"));
        assertEquals(new RankLedger.Sweep(1, 1), new RankLedger(state).sweep(new FakeChannelManager(), Set.of()),
                "the same record in the proxy's own directory is acted on");
    }

    @Test
    void shouldWriteTheRestartStateOnlyIntoAPrivateDirectory() throws IOException {
        Path state = made(dir.resolve("state"), "rwxrwxrwx");

        IOException e = assertThrows(IOException.class, () -> NodeRestart.write(Map.of(), state));

        assertEquals("state.directory=" + state + " can be written by its group or others (rwxrwxrwx); refusing to"
                + " use it", e.getMessage());
        assertFalse(Files.exists(state.resolve(NodeRestart.FILE)));
    }

    @Test
    void shouldSayInTheHealthCheckWhyASharedMemoryDirectoryIsRefused() throws IOException {
        Path base = made(dir.resolve("shm").resolve("mpiproxy"), "rwxrwxrwx");

        HealthResult result = NodeHealth.sharedMemory(base, 0);

        assertEquals(HealthResult.Status.CRITICAL, result.status());
        assertEquals(base + " can be written by its group or others (rwxrwxrwx); refusing to use it",
                result.message());
    }
}
