package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.PrivateDirectories;
import org.mpiproxy.api.config.CheckedConfiguration;
import org.mpiproxy.protocol.ClusterKeys;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * Keys are checked at every change of v2.key.files, not only at start: a weak, short, empty, open
 * or foreign key file is refused in one line, the keys in force stay, and requests signed with the
 * refused key are not served.
 */
class KeyChangeTest {

    private static final InetSocketAddress HOST = new InetSocketAddress("127.0.0.1", 7);

    @TempDir
    Path dir;

    private final List<String> lines = new ArrayList<>();
    private final RecordingTransport transport = new RecordingTransport();
    private final Map<String, Object> config = new HashMap<>();
    private final Map<String, V2Datagrams> signers = new HashMap<>();
    private ProxyComponent component;
    private Path goodFile;

    @BeforeEach
    void start() throws IOException {
        goodFile = keyFile("good.key", HexFormat.of().formatHex(V2Datagrams.KEY), "rw-------");
        config.put("v2.key.files", "1:" + goodFile);
        config.put("node.name", V2Datagrams.NODE);
        config.put("startup.wait.seconds", "0");
        config.put("log.directory", dir.resolve("logs").toString());
        config.put("state.directory", dir.resolve("state").toString());
        component = new ProxyComponent(config, new CheckedConfiguration<>(ProxyConfig.class), lines::add);
        component.bindChannels(new FakeChannelManager());
        assertEquals(null, component.v2Problem());
        assertTrue(served(V2Datagrams.KEY), "served under the good key");
    }

    @AfterEach
    void stop() {
        component.deactivate();
    }

    private Path keyFile(String name, String hex, String mode) throws IOException {
        Path file = Files.writeString(dir.resolve(name), hex + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    /** @return whether a STATUS signed with {@code key} (as key id 1) gets an answer rather than a refusal */
    private boolean served(byte[] key) {
        // one signer per key: its nonces go on, so that the replay cache never refuses a request here
        V2Datagrams signer = signers.computeIfAbsent(HexFormat.of().formatHex(key), k -> new V2Datagrams(
                ClusterKeys.of(Map.of(1, key), 1), V2Datagrams.NODE, System.currentTimeMillis()));
        component.onDatagram(signer.status(9, 1, 0), HOST, transport);
        List<RecordingTransport.Sent> replies = transport.take();
        return replies.size() == 1
                && !V2RefusalDescriptor.isRefusal(replies.get(0).bytes, 0, replies.get(0).bytes.limit());
    }

    /** Changes v2.key.files to {@code file} as key 1 and checks what a refused change must leave. */
    private void assertRefused(Path file, byte[] refusedKey, String why) {
        config.put("v2.key.files", "1:" + file);

        component.modified(config);

        assertEquals(1, lines.size(), "one line: " + lines);
        String line = lines.get(0);
        assertTrue(line.startsWith(ProxyComponent.PID + ": key file " + file + " "), line);
        assertTrue(line.contains(why), line);
        assertTrue(line.endsWith("; keeping the last good configuration"), line);
        assertEquals(List.of(goodFile), component.v2Keys().files(), "the last good keys stay in force");
        assertTrue(served(V2Datagrams.KEY), "the good key is still served");
        if (refusedKey != null) {
            assertFalse(served(refusedKey), "a request signed with the refused key is not served");
        }
    }

    @Test
    void shouldRefuseAnAllZeroKeyAtRunTime() throws IOException {
        assertRefused(keyFile("zero.key", "00".repeat(32), "rw-------"), new byte[32], "holds a weak key: it is all zero");
    }

    @Test
    void shouldRefuseARepeatedPatternAtRunTime() throws IOException {
        byte[] pattern = HexFormat.of().parseHex("c0ffee42".repeat(8));
        assertRefused(keyFile("pattern.key", "c0ffee42".repeat(8), "r--------"), pattern,
                "holds a weak key: it repeats the 4-byte pattern c0ffee42");
    }

    @Test
    void shouldRefuseAKeyOfFewDistinctBytesAtRunTime() throws IOException {
        byte[] few = new byte[32];
        Random values = new Random(3);
        for (int i = 0; i < few.length; i++) {
            few[i] = (byte) (i < 4 ? i : values.nextInt(4));
        }
        assertRefused(keyFile("few.key", HexFormat.of().formatHex(few), "rw-------"), few,
                "holds only 4 different byte values");
    }

    @Test
    void shouldRefuseAnEmptyKeyFileAtRunTime() throws IOException {
        assertRefused(keyFile("empty.key", "", "rw-------"), null, "must hold an even number of hexadecimal digits");
    }

    @Test
    void shouldRefuseAShortKeyAtRunTime() throws IOException {
        byte[] shortKey = new byte[16];
        new Random(4).nextBytes(shortKey);
        assertRefused(keyFile("short.key", HexFormat.of().formatHex(shortKey), "rw-------"), null,
                "holds a 128-bit key");
    }

    @Test
    void shouldRefuseAKeyFileOthersCanReadAtRunTime() throws IOException {
        byte[] other = random(5);
        assertRefused(keyFile("open.key", HexFormat.of().formatHex(other), "rw-r--r--"), other,
                "has mode rw-r--r--");
    }

    @Test
    void shouldRefuseAKeyFileOfAnotherOwnerAtRunTime() throws IOException {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a file to another user needs root");
        byte[] other = random(6);
        Path file = keyFile("foreign.key", HexFormat.of().formatHex(other), "rw-------");
        Files.setAttribute(file, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        assertRefused(file, other, "is owned by");
    }

    @Test
    void shouldTakeAStrongKeyAtRunTime() throws IOException {
        byte[] next = random(7);
        Path file = keyFile("next.key", HexFormat.of().formatHex(next), "rw-------");
        config.put("v2.key.files", "1:" + file);

        component.modified(config);

        assertEquals(List.of(), lines);
        assertTrue(served(next));
        assertFalse(served(V2Datagrams.KEY), "the key replaced is no longer served");
    }

    private static byte[] random(long seed) {
        byte[] key = new byte[32];
        new Random(seed).nextBytes(key);
        return key;
    }
}
