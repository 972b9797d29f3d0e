package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.HealthResult;
import org.mpiproxy.api.HealthResult.Status;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.JobCredential;
import org.mpiproxy.protocol.NodeIds;

/**
 * The local socket as the proxy's configuration sets it: its keys, node name and lifetime, a
 * changed path, off, a directory it refuses (the health check {@code identity}), a key file made
 * after the start, and the values the proxy refuses.
 */
class LocalSocketComponentTest {

    private static final long NOW = 1_796_688_000_000L;

    @TempDir
    Path dir;

    private Path key;
    private LocalSocketComponent component;

    @BeforeEach
    void key() throws IOException {
        assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "Linux only");
        key = dir.resolve("etc/mpiproxy.key");
        ClusterKeys.generateIfMissing(key);
    }

    @AfterEach
    void deactivate() {
        if (component != null) {
            component.deactivate();
        }
    }

    private Map<String, Object> config(Path socket) {
        Map<String, Object> m = new HashMap<>();
        m.put("log.directory", dir.resolve("logs").toString());
        m.put("state.directory", dir.resolve("state").toString());
        m.put("v2.key.files", key.toString());
        m.put("node.name", "node-a");
        m.put("local.socket", socket == null ? "" : socket.toString());
        m.put("identity.credential.seconds", "120");
        return m;
    }

    private LocalSocketComponent start(Map<String, Object> config) {
        component = new LocalSocketComponent(config, new CheckedConfiguration<>(ProxyConfig.class), () -> NOW,
                () -> 0L);
        component.activate();
        return component;
    }

    private static String ask(Path socket) {
        return assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                c.connect(UnixDomainSocketAddress.of(socket));
                c.write(ByteBuffer.wrap("CREDENTIAL\n".getBytes(StandardCharsets.US_ASCII)));
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                ByteBuffer buffer = ByteBuffer.allocate(512);
                while (c.read(buffer.clear()) >= 0) {
                    all.write(buffer.array(), 0, buffer.position());
                }
                return all.toString(StandardCharsets.UTF_8);
            }
        });
    }

    private JobCredential credential(String reply) {
        assertTrue(reply.startsWith("OK "), reply);
        return JobCredential.decode(ClusterKeys.load(Map.of(1, key)), HexFormat.of().parseHex(reply.split(" ")[2]));
    }

    private HealthResult health() {
        return NodeHealth.identity(component.state());
    }

    @Test
    void shouldIssueCredentialsWithTheProxysKeyNodeNameAndLifetime() {
        Path socket = dir.resolve("run/proxy.sock");
        start(config(socket));

        JobCredential credential = credential(ask(socket));

        assertEquals(NodeIds.of("node-a"), credential.issuerNodeId());
        assertEquals(NOW, credential.issuedMillis());
        assertEquals(NOW + 120_000, credential.expiresMillis());
        assertEquals(new HealthResult("identity", Status.OK, "local socket " + socket), health());
        component.deactivate();
        assertFalse(Files.exists(socket, LinkOption.NOFOLLOW_LINKS), "removed at deactivation");
    }

    @Test
    void shouldFollowChangesOfPathAndValuesAndIgnoreRefusedOnes() {
        Path first = dir.resolve("run/proxy.sock");
        start(config(first));
        Path second = dir.resolve("run2/proxy.sock");
        Map<String, Object> changed = config(second);
        changed.put("node.name", "node-b");
        changed.put("identity.credential.seconds", "60");

        component.modified(changed);

        assertFalse(Files.exists(first, LinkOption.NOFOLLOW_LINKS), "the old socket is closed and removed");
        JobCredential credential = credential(ask(second));
        assertEquals(NodeIds.of("node-b"), credential.issuerNodeId());
        assertEquals(NOW + 60_000, credential.expiresMillis());

        for (Map.Entry<String, Object> bad : List.<Map.Entry<String, Object>>of(
                Map.entry("identity.credential.seconds", "0"),
                Map.entry("identity.credential.seconds", "604801"), Map.entry("local.socket", "relative/proxy.sock"),
                Map.entry("local.socket", "/" + "x".repeat(120)), Map.entry("identity.credential.seconds", "ten"))) {
            Map<String, Object> refused = config(dir.resolve("run3/proxy.sock"));
            refused.put(bad.getKey(), bad.getValue());
            component.modified(refused);
            assertEquals(new HealthResult("identity", Status.OK, "local socket " + second), health(), bad.toString());
            assertEquals(NOW + 60_000, credential(ask(second)).expiresMillis(), bad.toString());
        }
        assertFalse(Files.exists(dir.resolve("run3")));
    }

    @Test
    void shouldTurnTheSocketOffWhenEmpty() {
        Path socket = dir.resolve("run/proxy.sock");
        start(config(socket));

        component.modified(config(null));

        assertFalse(Files.exists(socket, LinkOption.NOFOLLOW_LINKS));
        assertEquals(new HealthResult("identity", Status.OK, "local socket off"), health());
    }

    @Test
    void shouldWarnWhenTheSocketCannotBeOpenedAndOpenItOnceTheConfigurationChanges() throws IOException {
        Path open = Files.createDirectory(dir.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path socket = open.resolve("proxy.sock");
        start(config(socket));

        HealthResult warn = health();
        assertEquals(Status.WARN, warn.status());
        assertEquals("the directory of the local socket " + socket + " can be written by its group or others"
                + " (rwxrwxrwx); make it 755", warn.message());

        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
        component.modified(config(socket));
        assertEquals(Status.OK, health().status(), health().message());
        credential(ask(socket));
    }

    @Test
    void shouldAnswerWithTheReasonWhileNoKeyIsReadableAndServeOnceItIs() throws IOException {
        Files.delete(key);
        Path socket = dir.resolve("run/proxy.sock");
        start(config(socket));

        assertEquals("ERR no usable cluster key: key file " + key + " does not exist\n", ask(socket));
        assertEquals(Status.OK, health().status(), "the socket is open");

        ClusterKeys.generateIfMissing(key);
        credential(ask(socket));
    }

    @Test
    void shouldKeepTheKeysInForceWhenAChangedKeyFileIsRefused() throws IOException {
        Path socket = dir.resolve("run/proxy.sock");
        start(config(socket));
        Path weak = Files.writeString(dir.resolve("etc/weak.key"), "00".repeat(32));
        Files.setPosixFilePermissions(weak, PosixFilePermissions.fromString("rw-------"));
        Map<String, Object> changed = config(socket);
        changed.put("v2.key.files", weak.toString());
        changed.put("identity.credential.seconds", "30");

        component.modified(changed);

        JobCredential credential = credential(ask(socket));
        assertEquals(NOW + 30_000, credential.expiresMillis(), "the other values apply");
        assertNull(component.state().problem());
    }
}
