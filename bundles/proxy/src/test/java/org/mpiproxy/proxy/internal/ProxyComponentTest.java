package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

class ProxyComponentTest {

    /** The service properties of the local launcher. */
    private static final Map<String, Object> LOCAL = Map.of(org.mpiproxy.api.ProcessLauncher.KIND, "local",
            org.mpiproxy.api.ProcessLauncher.CORES, "0");

    @Test
    void shouldUseContractDefaults() {
        ProxySettings s = ProxyConfigs.settings(TestConfigs.of(ProxyConfig.class, Map.of()));
        assertEquals(1048576, s.holdLimitBytes());
        assertEquals(Duration.ofSeconds(30), s.terminateTimeout());
        assertEquals(Duration.ofSeconds(10), s.stopGrace());
        assertTrue(s.logDirectory().endsWith(Path.of("mpiproxy", "logs")), s.logDirectory().toString());
    }

    @Test
    void shouldDefaultToAbortOnFailureWithoutTimeoutAndFiveMinutesOfHostSilence() {
        SupervisionSettings s = ProxyConfigs.supervision(TestConfigs.of(ProxyConfig.class, Map.of()));
        assertTrue(s.abortOnFailure());
        assertEquals(Duration.ZERO, s.jobTimeout());
        assertEquals(Duration.ofSeconds(300), s.hostSilence());
        s = ProxyConfigs.supervision(TestConfigs.of(ProxyConfig.class,
                Map.of("abort.on.failure", false, "job.timeout.seconds", 60, "host.silence.seconds", 0)));
        assertEquals(new SupervisionSettings(false, Duration.ofSeconds(60), Duration.ZERO), s);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProxyConfigs.supervision(
                TestConfigs.of(ProxyConfig.class, Map.of("job.timeout.seconds", -2))));
        assertTrue(e.getMessage().contains("job.timeout.seconds=-2"), e.getMessage());
    }

    @Test
    void shouldUseConfiguredLogDirectory() {
        ProxySettings s = ProxyConfigs.settings(TestConfigs.of(ProxyConfig.class,
                Map.of("log.directory", "some/dir")));
        assertEquals(Path.of("some/dir"), s.logDirectory());
    }

    @Test
    void shouldRejectNegativeValuesNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProxyConfigs.settings(
                TestConfigs.of(ProxyConfig.class, Map.of("hold.limit.bytes", -1L))));
        assertTrue(e.getMessage().contains("hold.limit.bytes=-1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProxyConfigs.settings(
                TestConfigs.of(ProxyConfig.class, Map.of("terminate.timeout.seconds", -5))));
        assertTrue(e.getMessage().contains("terminate.timeout.seconds=-5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ProxyConfigs.settings(
                TestConfigs.of(ProxyConfig.class, Map.of("stop.grace.seconds", -1))));
        assertTrue(e.getMessage().contains("stop.grace.seconds=-1"), e.getMessage());
    }

    @Test
    void shouldServeThroughComponentAndStopOnDeactivate() {
        FakeChannelManager channels = new FakeChannelManager();
        ProxyComponent component = new ProxyComponent(channels, TestConfigs.of(ProxyConfig.class,
                Map.of("startup.wait.seconds", 0)));
        RecordingTransport transport = new RecordingTransport();
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), new java.net.InetSocketAddress("127.0.0.1", 1),
                transport);
        assertEquals(1, transport.take().size(), "no launcher bound and no start-up wait: MPI_ERR_IO at once");
        assertEquals(0, component.doWork(transport));
        assertEquals(1L, component.counters().get("exec.rejected"));
        assertTrue(component.jobs().isEmpty());
        component.deactivate();
    }

    @Test
    void shouldAnswerNothingUntilTheChannelManagerAndTheLocalLauncherAreBound() {
        ProxyComponent component = new ProxyComponent(TestConfigs.of(ProxyConfig.class, Map.of()));
        RecordingTransport transport = new RecordingTransport();
        java.net.InetSocketAddress host = new java.net.InetSocketAddress("127.0.0.1", 1);
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), host, transport);
        component.bindChannels(new FakeChannelManager());
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), host, transport);
        assertEquals(0, transport.take().size(), "still starting: silence, not a refusal");
        assertEquals(2L, component.counters().get("datagrams.before.ready"));
        assertEquals(0L, component.counters().get("exec.requests"));

        FakeLauncher launcher = new FakeLauncher();
        component.bindLauncher(launcher, LOCAL);
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), host, transport);
        assertEquals(1L, component.counters().get("exec.requests"));
        assertEquals(1, awaitReplies(component, transport).size(), "the launched rank's EXEC reply");
        assertEquals(1L, component.counters().get("exec.started"));

        component.unbindLauncher(launcher);
        component.onDatagram(V1Datagrams.exec(1, 0, 3, "prog"), new java.net.InetSocketAddress("127.0.0.1", 2),
                transport);
        assertEquals(1L, component.counters().get("exec.rejected"), "once serving, a missing launcher is an error");
        assertEquals(2L, component.counters().get("datagrams.before.ready"));
        component.deactivate();
    }

    @Test
    void shouldRefuseANegativeStartupWait() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ProxyComponent(
                TestConfigs.of(ProxyConfig.class, Map.of("startup.wait.seconds", -1))));
        assertEquals("startup.wait.seconds=-1 must be >= 0", e.getMessage());
    }

    @Test
    void shouldNotStartV2WithAKeyFileOthersCanReadButKeepServingV1(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        java.nio.file.Files.writeString(key, "ab".repeat(32));
        java.nio.file.Files.setPosixFilePermissions(key,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(), TestConfigs.of(
                ProxyConfig.class, Map.of("v2.key.files", key.toString(), "startup.wait.seconds", 0)));
        assertEquals("key file " + key + " has mode rw-r-----; it must be rw------- (0600) or r-------- (0400)",
                component.v2Problem());
        RecordingTransport transport = new RecordingTransport();
        component.onDatagram(new V2Datagrams(System.currentTimeMillis()).exec(9, 1, 0, 2, "prog"),
                new java.net.InetSocketAddress("127.0.0.1", 1), transport);
        assertEquals(0, transport.take().size(), "v2 is not served");
        assertEquals(1L, component.counters().get("v2.disabled"));
        component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), new java.net.InetSocketAddress("127.0.0.1", 1),
                transport);
        assertEquals(1, transport.take().size(), "v1 still answers");
        component.deactivate();
    }

    @Test
    void shouldRotateV2KeysWhileAJobRuns(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        byte[] key2 = V2Datagrams.KEY.clone();
        key2[5] ^= 0x3c;
        Path file1 = privateKey(dir.resolve("key1"), V2Datagrams.KEY);
        Path file2 = privateKey(dir.resolve("key2"), key2);
        Map<String, Object> config = new java.util.HashMap<>(Map.of("v2.key.files", "1:" + file1,
                "node.name", V2Datagrams.NODE, "startup.wait.seconds", 0));
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(),
                TestConfigs.of(ProxyConfig.class, config));
        component.bindLauncher(new FakeLauncher(), LOCAL);
        RecordingTransport transport = new RecordingTransport();
        java.net.InetSocketAddress host = new java.net.InetSocketAddress("127.0.0.1", 7);
        V2Datagrams old = new V2Datagrams(System.currentTimeMillis());
        component.onDatagram(old.exec(9, 1, 0, 2, "prog"), host, transport);
        assertEquals(1, awaitReplies(component, transport).size(), "EXEC acknowledged under key 1");

        config.put("v2.key.files", "2:" + file2 + ",1:" + file1);
        assertEquals(null, component.reconfigure(TestConfigs.of(ProxyConfig.class, config)));
        org.mpiproxy.protocol.ClusterKeys both = org.mpiproxy.protocol.ClusterKeys.of(
                Map.of(1, V2Datagrams.KEY, 2, key2), 2);
        V2Datagrams rotated = new V2Datagrams(both, V2Datagrams.NODE, System.currentTimeMillis());
        rotated.keyId = 2;
        component.onDatagram(rotated.status(9, 1, 0), host, transport);
        component.onDatagram(old.status(9, 1, 0), host, transport);
        assertEquals(2, transport.take().size(), "the running job answers under the new key and the old one");

        config.put("v2.key.files", "2:" + file2);
        assertEquals(null, component.reconfigure(TestConfigs.of(ProxyConfig.class, config)));
        component.onDatagram(old.status(9, 1, 0), host, transport);
        java.util.List<RecordingTransport.Sent> refusal = transport.take();
        assertEquals(1, refusal.size());
        assertTrue(org.mpiproxy.protocol.V2RefusalDescriptor.isRefusal(refusal.get(0).bytes, 0,
                refusal.get(0).bytes.limit()), "the removed key is no longer accepted: only a refusal");
        assertEquals(1L, component.counters().get("v2.auth.unknown.key"));
        component.onDatagram(rotated.status(9, 1, 0), host, transport);
        assertEquals(1, transport.take().size());
        assertEquals(1, component.jobs().size(), "the job ran through the rotation");

        Path unreadable = dir.resolve("key3");
        java.nio.file.Files.writeString(unreadable, "ab".repeat(32));
        config.put("v2.key.files", "3:" + unreadable);
        String problem = component.reconfigure(TestConfigs.of(ProxyConfig.class, config));
        assertTrue(problem != null && problem.contains(unreadable.toString()), String.valueOf(problem));
        component.onDatagram(rotated.status(9, 1, 0), host, transport);
        assertEquals(1, transport.take().size(), "a bad key file leaves the keys in force");
        component.deactivate();
    }

    @Test
    void shouldStartV2OnceItsKeyFileIsFixed(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        java.nio.file.Files.writeString(key, java.util.HexFormat.of().formatHex(V2Datagrams.KEY));
        java.nio.file.Files.setPosixFilePermissions(key,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Map<String, Object> config = Map.of("v2.key.files", key.toString(), "node.name", V2Datagrams.NODE,
                "startup.wait.seconds", 0);
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(),
                TestConfigs.of(ProxyConfig.class, config));
        component.bindLauncher(new FakeLauncher(), LOCAL);
        assertTrue(component.v2Problem() != null);
        RecordingTransport transport = new RecordingTransport();
        java.net.InetSocketAddress host = new java.net.InetSocketAddress("127.0.0.1", 7);
        V2Datagrams hostSide = new V2Datagrams(System.currentTimeMillis());
        component.onDatagram(hostSide.exec(9, 1, 0, 2, "prog"), host, transport);
        assertEquals(0, transport.take().size());

        java.nio.file.Files.setPosixFilePermissions(key,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        component.modified(config);
        assertEquals(null, component.v2Problem());
        component.onDatagram(hostSide.exec(9, 1, 0, 2, "prog"), host, transport);
        assertEquals(1, awaitReplies(component, transport).size(), "v2 serves without a restart");

        component.modified(Map.of("v2.key.files", key.toString(), "node.name", V2Datagrams.NODE,
                "v2.enabled", false));
        component.onDatagram(hostSide.status(9, 1, 0), host, transport);
        assertEquals(0, transport.take().size(), "v2 switched off");
        assertEquals(2L, component.counters().get("v2.disabled"), "the EXEC before the fix and this STATUS");
        component.deactivate();
    }

    private static Path privateKey(Path file, byte[] key) throws java.io.IOException {
        java.nio.file.Files.writeString(file, java.util.HexFormat.of().formatHex(key));
        java.nio.file.Files.setPosixFilePermissions(file,
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    /** Lets the component work until a reply is there (a launch completes on another thread). */
    private static java.util.List<?> awaitReplies(ProxyComponent component, RecordingTransport transport) {
        java.util.List<java.util.List<?>> replies = new java.util.ArrayList<>(java.util.List.of(java.util.List.of()));
        Await.until(() -> {
            component.doWork(transport);
            replies.set(0, transport.take());
            return !replies.get(0).isEmpty();
        }, "a reply");
        return replies.get(0);
    }

    @Test
    void shouldStartV2WithAPrivateKeyFile(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(), TestConfigs.of(
                ProxyConfig.class, Map.of("v2.key.files", "3:" + key, "node.name", "node-x")));
        assertEquals(null, component.v2Problem());
        assertEquals(0L, component.counters().get("v2.datagrams.in"));
        component.deactivate();
    }

    @Test
    void shouldKeepTheLastGoodConfigurationForEveryBadValueAndApplyGoodOnesInPlace() {
        Map<String, Object> good = Map.of("hold.limit.bytes", 4096L, "terminate.timeout.seconds", 7,
                "stop.grace.seconds", 3, "job.timeout.seconds", 60, "host.silence.seconds", 30,
                "log.directory", "/var/tmp/mpi-logs");
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(),
                TestConfigs.of(ProxyConfig.class, good));
        Map.Entry<ProxySettings, SupervisionSettings> before = component.settingsInForce();
        int launchThreads = component.launchThreads();
        assertEquals(LaunchPool.threads(0, Runtime.getRuntime().availableProcessors()), launchThreads);
        Map<String, Object[]> bad = new java.util.LinkedHashMap<>();
        bad.put("hold.limit.bytes=-1 must be >= 0", new Object[] {"hold.limit.bytes", -1L});
        bad.put("terminate.timeout.seconds=-5 must be >= 0", new Object[] {"terminate.timeout.seconds", -5});
        bad.put("stop.grace.seconds=-1 must be >= 0", new Object[] {"stop.grace.seconds", -1});
        bad.put("job.timeout.seconds=-2 must be >= 0", new Object[] {"job.timeout.seconds", -2});
        bad.put("host.silence.seconds=-3 must be >= 0", new Object[] {"host.silence.seconds", -3});
        bad.put("launch.threads=-1 must be >= 0 (0: 4 per core)", new Object[] {"launch.threads", -1});
        bad.put("log.directory=/a\0b is not a valid path: Nul character not allowed",
                new Object[] {"log.directory", "/a\0b"});
        for (Map.Entry<String, Object[]> e : bad.entrySet()) {
            Map<String, Object> values = new java.util.HashMap<>(good);
            values.put((String) e.getValue()[0], e.getValue()[1]);
            ProxyConfig config = TestConfigs.of(ProxyConfig.class, values);
            assertEquals(e.getKey(), component.reconfigure(config), "the message names key and value");
            component.modified(values);
            assertEquals(before, component.settingsInForce(), "the last good configuration stays");
            assertEquals(launchThreads, component.launchThreads());
        }

        Map<String, Object> changed = new java.util.HashMap<>(good);
        changed.put("hold.limit.bytes", 8192L);
        changed.put("job.timeout.seconds", 90);
        changed.put("launch.threads", 3);
        assertEquals(null, component.reconfigure(TestConfigs.of(ProxyConfig.class, changed)));
        assertEquals(8192L, component.settingsInForce().getKey().holdLimitBytes(), "a good limit applies at once");
        assertEquals(Duration.ofSeconds(90), component.settingsInForce().getValue().jobTimeout());
        assertEquals(3, component.launchThreads(), "a new number of launch threads applies at once");
        component.deactivate();
    }
}
