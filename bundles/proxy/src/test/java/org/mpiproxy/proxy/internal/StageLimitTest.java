package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.MpiErrors;
import org.mpiproxy.protocol.V2HeaderDescriptor;
import org.mpiproxy.protocol.V2HeaderFlyweight;
import org.mpiproxy.protocol.V2RefusalDescriptor;

/**
 * STAGE sizes that must not stop a node: a program larger than stage.max.bytes (or than the free
 * space) is refused at its first fragment, before anything is kept of it, and the node answers v1
 * and v2 after; what is taken is written to disk as it comes, not held on the heap.
 */
class StageLimitTest {

    private static final long MIB = 1L << 20;
    private static final int CHUNK = 1000;

    @TempDir
    Path dir;

    private String karafData;

    @BeforeEach
    void privateData() {
        karafData = System.getProperty("karaf.data");
        System.setProperty("karaf.data", dir.resolve("data").toString());
    }

    @AfterEach
    void restoreData() {
        if (karafData == null) {
            System.clearProperty("karaf.data");
        } else {
            System.setProperty("karaf.data", karafData);
        }
    }

    private static ByteBuffer fragment(byte[] digest, int length) {
        ByteBuffer b = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH + length);
        b.put(digest);
        for (int i = 0; i < length; i++) {
            b.put((byte) i);
        }
        return b;
    }

    private static long count(long size) {
        return Math.max(1, (size + CHUNK - 1) / CHUNK);
    }

    /** The first fragment of a file of {@code size} bytes. */
    private static StagedPrograms.Outcome first(StagedPrograms s, byte[] digest, long size) {
        ByteBuffer b = fragment(digest, (int) Math.min(CHUNK, size));
        return s.onFragment(size, 0, count(size), CHUNK, b, 0, b.capacity(), 0);
    }

    private static byte[] digest(int seed) {
        byte[] d = new byte[StagedPrograms.DIGEST_LENGTH];
        new Random(seed).nextBytes(d);
        return d;
    }

    private List<Path> partialFiles(Path staged) throws IOException {
        if (!Files.exists(staged)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(staged)) {
            return files.filter(f -> f.getFileName().toString().startsWith(".staging-")).toList();
        }
    }

    @Test
    void shouldRefuseAtTheFirstFragmentAFileAboveTheLimitKeepingNothingOfIt() throws IOException {
        Path staged = dir.resolve("staged");
        StagedPrograms s = new StagedPrograms(staged, () -> MIB, d -> Long.MAX_VALUE);

        StagedPrograms.Outcome o = first(s, digest(1), 256 * MIB);

        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, o.result());
        assertEquals(MIB, o.limit());
        assertTrue(o.problem().endsWith(" of 268435456 bytes, more than stage.max.bytes=1048576"), o.problem());
        assertEquals(List.of(), partialFiles(staged), "nothing kept of it");
    }

    @Test
    void shouldNeverTakeMoreThanTheFreeSpaceLessTheMargin() {
        long free = StagedPrograms.FREE_SPACE_MARGIN + 100 * MIB;
        StagedPrograms s = new StagedPrograms(dir.resolve("staged"), () -> 1L << 40, d -> free);

        StagedPrograms.Outcome tooLarge = first(s, digest(2), 101 * MIB);
        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, tooLarge.result());
        assertEquals(100 * MIB, tooLarge.limit(), "the room there is now");

        assertEquals(MpiErrors.SUCCESS, first(s, digest(3), 60 * MIB).result());
        StagedPrograms.Outcome meanwhile = first(s, digest(4), 60 * MIB);
        assertEquals(MpiErrors.ERR_NO_MEM, meanwhile.result(), "the room is taken by the file arriving: try later");
    }

    @Test
    void shouldWriteFragmentsToDiskAsTheyComeNotHoldThemInMemory() throws IOException {
        Path staged = dir.resolve("staged");
        StagedPrograms s = new StagedPrograms(staged, () -> StagedPrograms.MAX_FILE_BYTES, d -> Long.MAX_VALUE);
        byte[] digest = digest(5);
        ByteBuffer b = fragment(digest, CHUNK);
        long size = 256 * MIB;

        StagedPrograms.Outcome o = s.onFragment(size, 3, count(size), CHUNK, b, 0, b.capacity(), 0);

        assertEquals(MpiErrors.SUCCESS, o.result());
        List<Path> partial = partialFiles(staged);
        assertEquals(1, partial.size(), "one partial file on disk: " + partial);
        byte[] onDisk = Files.readAllBytes(partial.get(0));
        byte[] expected = new byte[CHUNK];
        b.get(StagedPrograms.DIGEST_LENGTH, expected);
        assertEquals(4L * CHUNK, onDisk.length, "the fragment at its place in the file (sparse before it)");
        assertArrayEquals(expected, java.util.Arrays.copyOfRange(onDisk, 3 * CHUNK, 4 * CHUNK));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(partial.get(0))));
        assertEquals("rwx--x--x", PosixFilePermissions.toString(Files.getPosixFilePermissions(staged)),
                "programs are run by name, never listed");
    }

    @Test
    void shouldGoOnWithAPartialFileAfterTheStateWentThroughTheRestartFile() throws IOException {
        Path staged = dir.resolve("staged");
        byte[] content = new byte[5 * CHUNK];
        new Random(9).nextBytes(content);
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms before = new StagedPrograms(staged, () -> MIB, d -> Long.MAX_VALUE);
        for (int i : new int[] {0, 2, 4}) {
            assertFalse(send(before, digest, content, i).complete());
        }

        StateCodec codec = new StateCodec();
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        codec.write(new java.io.DataOutputStream(bytes), before.export(), "staged");
        assertEquals(Set.of(), codec.dropped(), "nothing of a partial file is left out of the restart file");
        Object read = new StateCodec().read(new java.io.DataInputStream(
                new java.io.ByteArrayInputStream(bytes.toByteArray())));
        StagedPrograms after = new StagedPrograms(staged, () -> MIB, d -> Long.MAX_VALUE);
        after.restore(read, 0);

        assertFalse(send(after, digest, content, 1).complete());
        assertTrue(send(after, digest, content, 3).complete(), "the fragments written before count");
        assertArrayEquals(content, Files.readAllBytes(staged.resolve(StagedFiles.name(digest))));
        assertEquals(List.of(), partialFiles(staged));
    }

    private static StagedPrograms.Outcome send(StagedPrograms s, byte[] digest, byte[] content, int index) {
        ByteBuffer b = ByteBuffer.allocate(StagedPrograms.DIGEST_LENGTH + CHUNK);
        b.put(digest).put(content, index * CHUNK, CHUNK);
        return s.onFragment(content.length, index, count(content.length), CHUNK, b, 0, b.capacity(), 0);
    }

    @Test
    void shouldRefuseToStageIntoADirectoryOthersCanWrite() throws IOException {
        Path staged = Files.createDirectory(dir.resolve("staged"));
        Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rwxrwxrwx"));
        StagedPrograms s = new StagedPrograms(staged, () -> MIB, d -> Long.MAX_VALUE);

        StagedPrograms.Outcome o = first(s, digest(6), 10);

        assertEquals(MpiErrors.ERR_IO, o.result());
        assertTrue(o.problem().contains("staged directory " + staged + " can be written by its group or others"),
                o.problem());
        assertEquals(List.of(), partialFiles(staged));
    }

    @Test
    void shouldRefuseA256MiBStageWithASmallLimitAndKeepAnsweringV1AndV2() throws IOException {
        Path key = Files.writeString(dir.resolve("mpiproxy.key"), HexFormat.of().formatHex(V2Datagrams.KEY));
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        Map<String, Object> config = new HashMap<>(Map.of("v2.key.files", key.toString(), "node.name",
                V2Datagrams.NODE, "startup.wait.seconds", 0, "stage.max.bytes", MIB,
                "log.directory", dir.resolve("logs").toString(), "state.directory", dir.resolve("state").toString()));
        ProxyComponent component = new ProxyComponent(new FakeChannelManager(),
                TestConfigs.of(ProxyConfig.class, config));
        try {
            RecordingTransport transport = new RecordingTransport();
            InetSocketAddress host = new InetSocketAddress("127.0.0.1", 7);
            V2Datagrams hostSide = new V2Datagrams(System.currentTimeMillis());

            component.onDatagram(stage(hostSide, digest(7), 256 * MIB), host, transport);

            List<RecordingTransport.Sent> replies = transport.take();
            assertEquals(1, replies.size());
            V2HeaderFlyweight reply = new V2HeaderFlyweight().wrap(replies.get(0).bytes, 0);
            assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, reply.result(), "refused with a reason the host can show");
            assertEquals(MIB, reply.argument(), "the node's limit");
            assertEquals(List.of(), partialFiles(StagedFiles.directory(System::getProperty)));

            component.onDatagram(V1Datagrams.exec(1, 0, 2, "prog"), host, transport);
            assertEquals(1, transport.take().size(), "v1 answers");
            component.onDatagram(hostSide.status(9, 1, 0), host, transport);
            List<RecordingTransport.Sent> status = transport.take();
            assertEquals(1, status.size(), "v2 answers");
            assertFalse(V2RefusalDescriptor.isRefusal(status.get(0).bytes, 0, status.get(0).bytes.limit()));

            config.put("stage.max.bytes", 2 * MIB);
            assertEquals(null, component.reconfigure(TestConfigs.of(ProxyConfig.class, config)));
            component.onDatagram(stage(hostSide, digest(8), MIB + 1), host, transport);
            assertEquals(MpiErrors.SUCCESS, new V2HeaderFlyweight().wrap(transport.take().get(0).bytes, 0).result(),
                    "a new limit applies at once");
        } finally {
            component.deactivate();
        }
    }

    /** The first fragment of a STAGE of a {@code size}-byte file. */
    private static ByteBuffer stage(V2Datagrams hostSide, byte[] digest, long size) {
        ByteBuffer b = V2Datagrams.buffer();
        int length = (int) Math.min(CHUNK, size);
        hostSide.header(b, V2HeaderDescriptor.OP_STAGE, 1, 0).argument(size).tag(CHUNK).sequence(0).ack(count(size))
                .payloadLength(StagedPrograms.DIGEST_LENGTH + length);
        b.put(V2HeaderDescriptor.HEADER_LENGTH, digest);
        return hostSide.finish(b);
    }
}
