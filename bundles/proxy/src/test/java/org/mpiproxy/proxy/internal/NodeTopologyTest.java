package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.LaunchRequest;
import org.mpiproxy.api.ProcessLauncher;

/**
 * The node's topology is discovered once and handed to every plain rank; again only when the node
 * changed, it is older than allowed, or the operator asks; a missing or failing hwloc is one line
 * and no variables; a rank's own HWLOC_XMLFILE wins; the switch off hands out nothing; every user
 * may read the file; discovery never runs on the thread that asks for the variables.
 */
class NodeTopologyTest {

    private static final String XML = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM"
            + " \"hwloc2.dtd\">\n<topology version=\"2.0\">\n  <object type=\"Machine\" os_index=\"0\"/>\n</topology>\n";

    @TempDir
    Path temp;

    private Path directory;
    private Path runs;
    private final List<String> warnings = new ArrayList<>();
    private final AtomicLong clock = new AtomicLong(System.currentTimeMillis());
    private String cpus = "0-3";
    private long boot = System.currentTimeMillis() - 3_600_000L;
    private final NodeTopology.Node node = new NodeTopology.Node() {
        @Override
        public String onlineCpus() {
            return cpus;
        }

        @Override
        public long bootMillis() {
            return boot;
        }
    };

    @BeforeEach
    void open() throws IOException {
        // as a data directory usually is: others may pass through it
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwxr-xr-x"));
        directory = temp.resolve("mpiproxy").resolve("topology");
        runs = temp.resolve("runs");
    }

    /** A stand-in for lstopo: counts its runs, then prints {@code out} and exits with {@code status}. */
    private List<String> fakeLstopo(String out, String err, int status) throws IOException {
        Path script = temp.resolve("lstopo-no-graphics");
        Files.writeString(script, "#!/bin/sh\necho run >> '" + runs + "'\ncat <<'EOF'\n" + out + "EOF\n"
                + (err.isEmpty() ? "" : "echo '" + err + "' >&2\n") + "exit " + status + "\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return List.of(script.toString(), "--of", "xml", "-");
    }

    private NodeTopology topology(List<String> command, Executor executor) {
        return new NodeTopology(directory, command, node, clock::get, executor, warnings::add);
    }

    private long runs() throws IOException {
        return Files.exists(runs) ? Files.readAllLines(runs).size() : 0;
    }

    @Test
    void shouldDiscoverOnceAndHandTheSameFileToEveryRankAndToTheNextStart() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        Map<String, String> first = topology.variables(Map.of());
        Map<String, String> second = topology.variables(Map.of("OTHER", "x"));
        Path file = directory.resolve(NodeTopology.FILE);
        assertEquals(Map.of(NodeTopology.XML_VARIABLE, file.toString(), NodeTopology.THIS_SYSTEM_VARIABLE, "1"), first);
        assertEquals(first, second);
        assertEquals(XML, Files.readString(file));
        assertEquals(1, runs());

        NodeTopology next = topology(fakeLstopo(XML, "", 0), Runnable::run);
        next.start();
        assertEquals(file, next.file());
        assertEquals(first, next.variables(Map.of()));
        assertEquals(1, runs(), "the next start of the proxy uses the file again");
        assertEquals(List.of(), warnings);
    }

    @Test
    void shouldDiscoverAgainWhenTheCpusOnlineChangeAfterABootOrBeyondTheAge() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.settings(new NodeTopology.Settings(true, Duration.ofHours(24)));
        topology.start();
        assertEquals(1, runs());
        cpus = "0-2";
        topology.variables(Map.of());
        assertEquals(2, runs(), "a CPU went offline");
        topology.variables(Map.of());
        assertEquals(2, runs());
        // the next start after a boot: the file of the previous one is older
        Path file = directory.resolve(NodeTopology.FILE);
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(boot - 60_000L));
        topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        assertEquals(3, runs(), "the file is older than the boot");
        clock.addAndGet(Duration.ofHours(25).toMillis());
        topology.variables(Map.of());
        assertEquals(4, runs(), "the file is older than topology.max.age.hours");
        topology.refresh();
        assertEquals(5, runs(), "asked");
        assertNotNull(topology.file());
    }

    @Test
    void shouldWarnOnceAndHandNothingWhenHwlocIsMissing() {
        NodeTopology topology = topology(List.of(temp.resolve("no-such-lstopo").toString(), "--of", "xml", "-"),
                Runnable::run);
        topology.start();
        for (int i = 0; i < 3; i++) {
            assertEquals(Map.of(), topology.variables(Map.of()));
        }
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).startsWith("node topology not discovered (Cannot run program"), warnings.get(0));
        assertTrue(warnings.get(0).contains("MPICH ranks start without HWLOC_XMLFILE"), warnings.get(0));
        assertNull(topology.file());
    }

    @Test
    void shouldWarnWithHwlocsOwnLineWhenItFailsAndKeepNoFile() throws IOException {
        NodeTopology failing = topology(fakeLstopo("", "hwloc: cannot open /sys", 3), Runnable::run);
        failing.start();
        assertEquals(Map.of(), failing.variables(Map.of()));
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains("exited with status 3: hwloc: cannot open /sys"), warnings.get(0));

        NodeTopology garbled = topology(fakeLstopo("not a topology\n", "", 0), Runnable::run);
        garbled.start();
        assertEquals(Map.of(), garbled.variables(Map.of()));
        assertEquals(2, warnings.size(), warnings.toString());
        assertTrue(warnings.get(1).contains("wrote no XML topology"), warnings.get(1));
        assertFalse(Files.exists(directory.resolve(NodeTopology.FILE)));
        try (var left = Files.list(directory)) {
            assertEquals(0, left.count(), "no partial files are left");
        }
    }

    @Test
    void shouldLeaveTheRanksOwnXmlFile() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        assertEquals(Map.of(), topology.variables(Map.of(NodeTopology.XML_VARIABLE, "/home/ada/mine.xml")));
    }

    @Test
    void shouldHandNothingAndRunNothingWhenSwitchedOff() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.settings(new NodeTopology.Settings(false, Duration.ofHours(24)));
        topology.start();
        topology.refresh();
        assertEquals(Map.of(), topology.variables(Map.of()));
        assertEquals(0, runs());
        topology.settings(NodeTopology.Settings.DEFAULT);
        topology.refresh();
        assertEquals(1, runs());
        assertEquals(2, topology.variables(Map.of()).size());
    }

    @Test
    void shouldReadTheSwitchAndRefuseANegativeAge() {
        assertFalse(NodeTopology.Settings.of(TestConfigs.of(ProxyConfig.class,
                Map.of("topology.handover", false))).handover());
        assertEquals(NodeTopology.Settings.DEFAULT, NodeTopology.Settings.of(TestConfigs.of(ProxyConfig.class,
                Map.of())));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NodeTopology.Settings.of(
                TestConfigs.of(ProxyConfig.class, Map.of("topology.max.age.hours", -1))));
        assertEquals("topology.max.age.hours=-1 must be >= 0", e.getMessage());
    }

    @Test
    void shouldMakeTheFileReadableByEveryRanksUser() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        assertEquals("rw-r--r--", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(directory.resolve(NodeTopology.FILE))));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)));
        assertNull(NodeTopology.closedAncestor(directory));
        assertEquals(List.of(), warnings);
    }

    @Test
    void shouldWarnWhenOtherUsersCannotReachTheFile() throws IOException {
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwx------"));
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(temp + " cannot be searched by others"), warnings.get(0));
    }

    @Test
    void shouldNeverDiscoverOnTheAskingThread() throws IOException {
        Queue<Runnable> later = new ArrayDeque<>();
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), later::add);
        topology.start();
        assertEquals(Map.of(), topology.variables(Map.of()), "no topology yet: the rank starts without it");
        topology.variables(Map.of());
        assertEquals(0, runs());
        assertEquals(2, later.size(), "the start and one check, however many launches asked");
        while (!later.isEmpty()) {
            later.poll().run();
        }
        assertEquals(1, runs());
        assertEquals(2, topology.variables(Map.of()).size());
    }

    @Test
    void shouldGivePlainRanksTheTopologyBesideTheirProcessManager() throws IOException {
        NodeTopology topology = topology(fakeLstopo(XML, "", 0), Runnable::run);
        topology.start();
        V2NodeServices services = new V2NodeServices(null, (job, rank, line) -> true, clock::get, () -> 0,
                org.slf4j.LoggerFactory.getLogger(NodeTopologyTest.class));
        services.topology(() -> topology);
        ProcessLauncher launcher = (LaunchRequest request) -> {
            throw new UnsupportedOperationException();
        };
        try {
            Map<String, String> env = new LinkedHashMap<>(Map.of("GREETING", "hello"));
            Map<String, String> given = services.plainLaunch(1L, 1, 2, env, launcher).environment();
            assertEquals(directory.resolve(NodeTopology.FILE).toString(), given.get(NodeTopology.XML_VARIABLE));
            assertEquals("1", given.get(NodeTopology.THIS_SYSTEM_VARIABLE));
            assertNotNull(given.get("PMI_PORT"));
            assertEquals("hello", given.get("GREETING"));

            env.put(NodeTopology.XML_VARIABLE, "/home/ada/mine.xml");
            given = services.plainLaunch(1L, 2, 2, env, launcher).environment();
            assertEquals("/home/ada/mine.xml", given.get(NodeTopology.XML_VARIABLE));
            assertNull(given.get(NodeTopology.THIS_SYSTEM_VARIABLE));

            services.topology(() -> null);
            given = services.plainLaunch(2L, 1, 1, Map.of(), launcher).environment();
            assertNull(given.get(NodeTopology.XML_VARIABLE), "no active topology: nothing");
        } finally {
            services.close();
        }
    }
}
