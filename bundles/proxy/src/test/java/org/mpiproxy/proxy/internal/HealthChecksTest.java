package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.HealthResult.Status;

class HealthChecksTest {

    @TempDir
    Path dir;

    @Test
    void shouldReportListeningOnlyWithATransport() {
        assertEquals(Status.CRITICAL, NodeHealth.listening(null).status());
        HealthResult ok = NodeHealth.listening(new InetSocketAddress("127.0.0.1", 6660));
        assertEquals(Status.OK, ok.status());
        assertEquals("listening on 127.0.0.1:6660", ok.message());
    }

    @Test
    void shouldReportAProgramDirectoryThatIsMissingEmptyOrWithoutExecutables() throws Exception {
        assertEquals(Status.CRITICAL, NodeHealth.programs("local", null).status());
        HealthResult missing = NodeHealth.programs("local", dir.resolve("nope"));
        assertEquals(Status.CRITICAL, missing.status());
        assertEquals("programs.local", missing.check());
        assertEquals(dir.resolve("nope") + " is not a directory", missing.message());
        assertEquals(dir + " holds no executable program", NodeHealth.programs("local", dir).message());
        Files.writeString(dir.resolve("data.txt"), "x");
        assertEquals(Status.CRITICAL, NodeHealth.programs("local", dir).status());
        Path program = Files.writeString(dir.resolve("mpiping"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
        HealthResult ok = NodeHealth.programs("local", dir);
        assertEquals(Status.OK, ok.status(), ok.message());
        assertEquals("1 programs in " + dir, ok.message());
    }

    @Test
    void shouldCountExecutablesForTheLocalLauncherAndImagesForTheCoreLauncher() throws Exception {
        assertEquals(dir + " holds no program image (<name>.lz4)", NodeHealth.programs("core", dir).message());
        for (String name : List.of("mpiping", "mpiping.lz4", "hello", "hello.lz4")) {
            Path f = Files.writeString(dir.resolve(name), "x");
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        assertEquals("2 programs in " + dir, NodeHealth.programs("local", dir).message());
        assertEquals("2 program images in " + dir, NodeHealth.programs("core", dir).message());
    }

    @Test
    void shouldCompareFreeSpaceOfTheNearestExistingDirectoryWithTheMinimum() {
        Path notYet = dir.resolve("a/b/c");
        assertEquals(Status.OK, NodeHealth.sharedMemory(notYet, 0).status());
        HealthResult full = NodeHealth.sharedMemory(notYet, Long.MAX_VALUE);
        assertEquals(Status.CRITICAL, full.status());
        assertTrue(full.message().contains("(minimum " + Long.MAX_VALUE + ")"), full.message());
        assertEquals(Status.CRITICAL, NodeHealth.sharedMemory(null, 0).status());
    }

    @Test
    void shouldCheckTheKeyFilesTheProxyServesV2With() throws Exception {
        Path key = dir.resolve("mpiproxy.key");
        org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key);
        ProxyComponent proxy = new ProxyComponent(new FakeChannelManager(), TestConfigs.of(ProxyConfig.class,
                Map.of("v2.key.files", key.toString(), "node.name", "node-x")));
        try {
            HealthCheckComponent component = new HealthCheckComponent(config(Map.of()));
            component.proxy = proxy;
            HealthResult result = component.check().get(3);
            assertEquals(new HealthResult("v2.key", Status.OK, key + " is readable by its owner only and holds a strong key"), result);
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
            assertEquals(Status.WARN, component.check().get(3).status());
        } finally {
            proxy.deactivate();
        }
        assertEquals(new HealthResult("v2.key", Status.OK, "v2 is disabled (v1 only): no key needed"),
                NodeHealth.key(null, new NodeHealth.V2Keys(false, null, List.of())));
        assertEquals(new HealthResult("v2.key", Status.CRITICAL, "v2 is not started: bad key"),
                NodeHealth.key(null, new NodeHealth.V2Keys(true, "bad key", List.of())));
        assertEquals(Status.WARN, NodeHealth.key(null, null).status());
        assertEquals(Status.CRITICAL, NodeHealth.key(dir.resolve("missing.key"),
                new NodeHealth.V2Keys(true, null, List.of(key))).status(), "a configured key file is checked");
    }

    @Test
    void shouldCheckTheKeyOnlyWhenConfigured() throws Exception {
        assertEquals(Status.CRITICAL, NodeHealth.key(dir.resolve("missing.key")).status());
        Path key = Files.writeString(dir.resolve("node.key"), "secret");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(Status.WARN, NodeHealth.key(key).status());
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        assertEquals(Status.CRITICAL, NodeHealth.key(key).status(), "not a key: " + NodeHealth.key(key).message());
        Files.writeString(key, "00".repeat(32));
        assertEquals(new HealthResult("v2.key", Status.CRITICAL, key + " holds a weak key: it is all zero"),
                NodeHealth.key(key));
        Files.delete(key);
        assertTrue(org.mpiproxy.protocol.ClusterKeys.generateIfMissing(key));
        assertEquals(Status.OK, NodeHealth.key(key).status(), NodeHealth.key(key).message());
    }

    @Test
    void shouldReportTheWorstStatus() {
        assertEquals(Status.OK, HealthResult.worst(List.of()));
        assertEquals(Status.CRITICAL, HealthResult.worst(List.of(new HealthResult("a", Status.WARN, ""),
                new HealthResult("b", Status.CRITICAL, ""), new HealthResult("c", Status.OK, ""))));
    }

    private static HealthCheckComponent.Config config(Map<String, Object> values) {
        return TestConfigs.of(HealthCheckComponent.Config.class, values);
    }

    @Test
    void shouldRejectANegativeMinimumNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(config(Map.of("shm.min.free.bytes", -1L))));
        assertEquals("shm.min.free.bytes=-1 must be >= 0", e.getMessage());
    }

    @Test
    void shouldRejectARelativeKeyFileNamingKeyAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(config(Map.of("key.file", "etc/node.key"))));
        assertEquals("key.file=etc/node.key must be an absolute path", e.getMessage());
    }

    @Test
    void shouldKeepTheLastGoodConfigurationWhenANewOneIsBad() {
        HealthCheckComponent component = new HealthCheckComponent(config(Map.of("shm.min.free.bytes", 5L)));
        component.modified(Map.of("shm.min.free.bytes", -7L));
        assertEquals(5L, component.settings().shmMinFreeBytes());
        component.modified(Map.of("shm.min.free.bytes", 9L));
        assertEquals(9L, component.settings().shmMinFreeBytes());
    }

    @Test
    void shouldRunEveryCheckInAFixedOrder() throws Exception {
        HealthCheckComponent component = new HealthCheckComponent(config(Map.of()));
        component.reports = new org.mpiproxy.api.config.ConfigurationReports();
        FakeLauncher local = new FakeLauncher();
        component.addLauncher(local, Map.of("mpiproxy.launcher", "local", "program.directory",
                dir.resolve("missing").toString()));
        List<HealthResult> results = component.check();
        assertEquals(List.of("udp.listening", "programs.local", "programs.core", "v2.key", "identity", "shm.free",
                "udp.serving", "disk.logs", "disk.state", "disk.staged", "heap", "config"),
                results.stream().map(HealthResult::check).toList());
        assertEquals(dir.resolve("missing") + " is not a directory", results.get(1).message());
        assertEquals("the core launcher is not running", results.get(2).message());
        component.removeLauncher(local, Map.of("mpiproxy.launcher", "local"));
        assertEquals("the local launcher is not running", component.check().get(1).message());
    }

    @Test
    void shouldWarnAboveTheWarningShareOfTheHeapAfterACollectionAndBeCriticalAboveTheMaximumShare() {
        long mib = 1L << 20;
        HealthResult ok = NodeHealth.heap(new NodeHealth.Heap(850 * mib, 1000 * mib, "after the last collection"),
                85, 95);
        assertEquals(new HealthResult("heap", Status.OK, "850 MiB of 1000 MiB used after the last collection (85%;"
                + " warn above 85%, critical above 95%)"), ok);
        HealthResult warn = NodeHealth.heap(new NodeHealth.Heap(850 * mib + 1, 1000 * mib, "after the last collection"),
                85, 95);
        assertEquals(Status.WARN, warn.status());
        assertTrue(warn.message().startsWith("filling up: 850 MiB of 1000 MiB used"), warn.message());
        assertEquals(Status.WARN, NodeHealth.heap(new NodeHealth.Heap(950 * mib, 1000 * mib, "now"), 85, 95).status());
        HealthResult critical = NodeHealth.heap(new NodeHealth.Heap(951 * mib, 1000 * mib, "now (no collection yet)"),
                85, 95);
        assertEquals(new HealthResult("heap", Status.CRITICAL, "nearly full: 951 MiB of 1000 MiB used now (no"
                + " collection yet) (95%; warn above 85%, critical above 95%)"), critical);
        assertEquals(Status.OK, NodeHealth.heap(new NodeHealth.Heap(999 * mib, -1, "now"), 85, 95).status(),
                "no maximum");
        assertEquals(Status.WARN, NodeHealth.heap(null, 85, 95).status());
    }

    @Test
    void shouldCheckTheHeapWithTheConfiguredThresholds() {
        HealthCheckComponent component = new HealthCheckComponent(config(Map.of("heap.warn.percent", 50,
                "heap.critical.percent", 60)));
        component.heap = () -> new NodeHealth.Heap(55, 100, "after the last collection");
        assertEquals(Status.WARN, heapCheck(component).status());
        component.heap = () -> new NodeHealth.Heap(61, 100, "after the last collection");
        assertEquals(Status.CRITICAL, heapCheck(component).status());
        component.modified(Map.of("heap.warn.percent", 70, "heap.critical.percent", 80));
        assertEquals(Status.OK, heapCheck(component).status(), heapCheck(component).message());
        component.heap = () -> {
            throw new IllegalStateException("no bean");
        };
        assertEquals(new HealthResult("heap", Status.WARN, "cannot read the heap's usage"), heapCheck(component));
        component.heap = NodeHealth.JVM_HEAP;
        assertTrue(heapCheck(component).message().contains(" MiB used "), heapCheck(component).message());

        assertEquals("heap.warn.percent=0 must be in 1..100", assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(config(Map.of("heap.warn.percent", 0)))).getMessage());
        assertEquals("heap.critical.percent=80 must be in heap.warn.percent=90..100",
                assertThrows(IllegalArgumentException.class, () -> HealthCheckComponent.settings(config(Map.of(
                        "heap.warn.percent", 90, "heap.critical.percent", 80)))).getMessage());
        HealthCheckComponent.Settings defaults = HealthCheckComponent.settings(config(Map.of()));
        assertEquals(85, defaults.heapWarnPercent());
        assertEquals(95, defaults.heapCriticalPercent());
    }

    private static HealthResult heapCheck(HealthCheckComponent component) {
        return component.check().stream().filter(r -> r.check().equals("heap")).findFirst().orElseThrow();
    }

    @Test
    void shouldNameTheKeyAndValueOfEveryBadSetting() {
        assertEquals("shm.min.free.bytes=-1 must be >= 0", assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(config(Map.of("shm.min.free.bytes", -1L)))).getMessage());
        assertEquals("key.file=etc/key must be an absolute path", assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(config(Map.of("key.file", "etc/key")))).getMessage());
        HealthCheckComponent component = new HealthCheckComponent(config(Map.of("key.file", "/k")));
        component.modified(Map.of("key.file", "k"));
        assertEquals(Path.of("/k"), component.settings().keyFile(), "the last good key file stays");
    }

    @Test
    void shouldCheckTheDirectoryALauncherUsesNowNotTheOneItsPropertiesName() throws Exception {
        Path programs = Files.createDirectories(dir.resolve("programs"));
        Path program = Files.writeString(programs.resolve("p"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwx------"));
        java.util.concurrent.atomic.AtomicReference<Path> now = new java.util.concurrent.atomic.AtomicReference<>(
                programs);
        org.mpiproxy.api.ProcessLauncher launcher = new org.mpiproxy.api.ProcessLauncher() {
            @Override
            public org.mpiproxy.api.RankProcess launch(org.mpiproxy.api.LaunchRequest request) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Path programDirectory() {
                return now.get();
            }
        };
        HealthCheckComponent component = new HealthCheckComponent(config(Map.of()));
        // a bad value the launcher refused is still in its service properties
        component.addLauncher(launcher, Map.of("mpiproxy.launcher", "local", "program.directory", "relative"));

        assertEquals("1 programs in " + programs, component.check().get(1).message());
        now.set(dir.resolve("moved"));
        assertEquals(dir.resolve("moved") + " is not a directory", component.check().get(1).message(),
                "a directory changed in place is seen without a new binding");
        assertEquals(Map.of("local", dir.resolve("moved")), component.programDirectories());
    }

    @Test
    void shouldSayWhetherMungeWorksWithTheLocalSocketAndWarnOnlyWhereItIsRequired() {
        LocalSocketComponent.State open = new LocalSocketComponent.State(Path.of("/run/p.sock"), null);
        assertEquals(new HealthResult("identity", Status.OK, "local socket /run/p.sock; munge: ok"),
                NodeHealth.identity(open, null, true));
        assertEquals(new HealthResult("identity", Status.WARN, "local socket /run/p.sock; munge: not available"
                + " (munge: Failed to access socket)"), NodeHealth.identity(open, "munge: Failed to access socket",
                true));
        assertEquals(new HealthResult("identity", Status.OK, "local socket /run/p.sock; munge: not available"
                + " (munge: Failed to access socket)"), NodeHealth.identity(open, "munge: Failed to access socket",
                false));
        assertEquals(Status.WARN, NodeHealth.identity(new LocalSocketComponent.State(Path.of("/run/p.sock"), "no"),
                null, false).status(), "the socket's problem stays a warning");
    }
}
