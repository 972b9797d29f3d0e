package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.HealthResult.Status;

/** The directories the node writes into are checked for room, with the free space read by an injected reader. */
class DiskHealthTest {

    static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    @Test
    void shouldWarnBelowTheWarningAndBeCriticalWhenNearlyFullNamingTheDirectory() {
        Path logs = dir.resolve("logs");
        assertEquals(new HealthResult("disk.logs", Status.OK, 600 * MIB + " bytes free for the log directory " + logs
                        + " (warn below " + 512 * MIB + ", critical below " + 64 * MIB + ")"),
                NodeHealth.freeSpace("logs", "log directory", logs, 512 * MIB, 64 * MIB, p -> 600 * MIB));
        HealthResult filling = NodeHealth.freeSpace("logs", "log directory", logs, 512 * MIB, 64 * MIB,
                p -> 100 * MIB);
        assertEquals(Status.WARN, filling.status());
        assertTrue(filling.message().startsWith("filling up: " + 100 * MIB + " bytes free for the log directory "
                + logs), filling.message());
        HealthResult full = NodeHealth.freeSpace("logs", "log directory", logs, 512 * MIB, 64 * MIB, p -> 10 * MIB);
        assertEquals(Status.CRITICAL, full.status());
        assertTrue(full.message().startsWith("nearly full: " + 10 * MIB + " bytes free for the log directory "
                + logs), full.message());
    }

    @Test
    void shouldMeasureTheNearestExistingDirectoryAndSayWhenItCannot() {
        Path notYet = dir.resolve("a/b");
        List<Path> measured = new java.util.ArrayList<>();
        NodeHealth.freeSpace("state", "state directory", notYet, 2, 1, p -> {
            measured.add(p);
            return 5;
        });
        assertEquals(List.of(dir.toAbsolutePath()), measured);
        HealthResult broken = NodeHealth.freeSpace("state", "state directory", notYet, 2, 1, p -> {
            throw new IOException("statvfs failed");
        });
        assertEquals(new HealthResult("disk.state", Status.CRITICAL, "cannot measure the state directory " + notYet
                + ": statvfs failed"), broken);
        assertEquals(Status.WARN, NodeHealth.freeSpace("state", "state directory", null, 2, 1, p -> 5).status());
    }

    @Test
    void shouldCheckTheChannelBaseLogStateAndStagedDirectoriesOfTheRunningProxy() throws Exception {
        Path logs = Files.createDirectories(dir.resolve("logs"));
        Path state = Files.createDirectories(dir.resolve("state"));
        Path shm = Files.createDirectories(dir.resolve("shm"));
        ProxyComponent proxy = new ProxyComponent(new FakeChannelManager(), TestConfigs.of(ProxyConfig.class,
                Map.of("log.directory", logs.toString(), "state.directory", state.toString())));
        try {
            HealthCheckComponent component = new HealthCheckComponent(TestConfigs.of(
                    HealthCheckComponent.Config.class, Map.of("disk.warn.free.bytes", 100L,
                            "disk.min.free.bytes", 10L, "shm.min.free.bytes", 10L)));
            component.proxy = proxy;
            Map<Path, Long> free = new HashMap<>(Map.of(logs, 1000L, state, 50L));
            component.freeSpace = p -> free.getOrDefault(p, 1000L);
            Map<String, HealthResult> byCheck = new HashMap<>();
            component.check().forEach(r -> byCheck.put(r.check(), r));

            assertEquals(Status.OK, byCheck.get("disk.logs").status(), byCheck.get("disk.logs").message());
            assertEquals(Status.WARN, byCheck.get("disk.state").status());
            assertTrue(byCheck.get("disk.state").message().contains("the state directory " + state),
                    byCheck.get("disk.state").message());
            HealthResult channelBase = NodeHealth.sharedMemory(shm, 10L, p -> p.equals(shm) ? 5L : 1000L);
            assertEquals(Status.CRITICAL, channelBase.status(), channelBase.message());
            assertTrue(channelBase.message().startsWith("5 bytes free for " + shm), channelBase.message());
            assertTrue(byCheck.get("disk.staged").message().contains("staged directory"),
                    byCheck.get("disk.staged").message());

            free.put(state, 5L);
            HealthResult full = component.check().stream().filter(r -> r.check().equals("disk.state")).findFirst()
                    .orElseThrow();
            assertEquals(Status.CRITICAL, full.status());
            assertTrue(full.message().startsWith("nearly full: 5 bytes free for the state directory " + state),
                    full.message());
        } finally {
            proxy.deactivate();
        }
    }

    @Test
    void shouldRejectThresholdsThatContradictEachOtherNamingKeysAndValues() {
        assertEquals("disk.warn.free.bytes=5 must be >= disk.min.free.bytes=10", assertThrows(
                IllegalArgumentException.class, () -> HealthCheckComponent.settings(TestConfigs.of(
                        HealthCheckComponent.Config.class, Map.of("disk.warn.free.bytes", 5L,
                                "disk.min.free.bytes", 10L)))).getMessage());
        assertEquals("disk.min.free.bytes=-1 must be >= 0", assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(TestConfigs.of(HealthCheckComponent.Config.class,
                        Map.of("disk.min.free.bytes", -1L, "disk.warn.free.bytes", -1L)))).getMessage());
        assertEquals("serving.stuck.seconds=0 must be >= 1", assertThrows(IllegalArgumentException.class,
                () -> HealthCheckComponent.settings(TestConfigs.of(HealthCheckComponent.Config.class,
                        Map.of("serving.stuck.seconds", 0)))).getMessage());
    }
}
