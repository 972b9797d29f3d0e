package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MappedRankChannelTest {

    private static final int INT = MappedMessageRingTest.INT;

    @TempDir
    Path dir;

    @Test
    void shouldCreateAnOwnerOnlyFileWithTheDocumentedHeader() throws IOException {
        Path file = dir.resolve("rank-3.chan");
        try (MappedRankChannel channel = MappedRankChannel.create(file, 8192, 0x1234_5678_9abc_def0L, 3)) {
            assertEquals(0x1234_5678_9abc_def0L, channel.jobId());
            assertEquals(3, channel.rankId());
            assertEquals(8192, channel.ringCapacity());
            assertEquals(file, channel.path());
            assertEquals(ChannelDescriptor.VERSION, channel.version());
            assertEquals(8192, channel.toRank().capacity());
            assertEquals(8192, channel.fromRank().capacity());
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals(ChannelDescriptor.fileLength(8192), Files.size(file));
        assertEquals(128 + 2 * (256 + 8192), Files.size(file));

        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        assertEquals(ChannelDescriptor.MAGIC, bytes.getLong(0));
        if (ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN) {
            assertEquals("MPX_CHAN", new String(Files.readAllBytes(file), 0, 8, java.nio.charset.StandardCharsets.US_ASCII));
        }
        assertEquals(2 << 16 | 1, bytes.getInt(8));
        assertEquals(128, bytes.getInt(12));
        assertEquals(0x1234_5678_9abc_def0L, bytes.getLong(16));
        assertEquals(3, bytes.getInt(24));
        assertEquals(8192, bytes.getInt(28));
        assertEquals(128, bytes.getLong(32));
        assertEquals(128 + 256 + 8192, bytes.getLong(40));
        assertEquals(256, bytes.getInt(48));
        assertEquals(Files.size(file), bytes.getLong(56));
    }

    @Test
    void shouldPlaceRecordsWhereTheDescriptorSays() throws IOException {
        Path file = dir.resolve("rank-1.chan");
        try (MappedRankChannel channel = MappedRankChannel.create(file, 4096, 1L, 1)) {
            ByteBuffer src = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 0x01020304).putInt(4, -1);
            assertTrue(channel.fromRank().offer(INT, 2, src, 0, 8));
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.nativeOrder());
        int ring = (int) ChannelDescriptor.fromRankOffset(4096);
        assertEquals(24, bytes.getLong(ring + RingDescriptor.TAIL_POSITION_OFFSET));
        assertEquals(0, bytes.getLong(ring + RingDescriptor.BYTES_WRITTEN_OFFSET), "unused since 2.0");
        assertEquals(0, bytes.getLong(ring + RingDescriptor.HEAD_POSITION_OFFSET));
        assertEquals(24, bytes.getInt(ring + RingDescriptor.lengthOffset(0)));
        assertEquals(INT, bytes.getInt(ring + RingDescriptor.datatypeOffset(0)));
        assertEquals(2, bytes.getInt(ring + RingDescriptor.countOffset(0)));
        int elements = ring + RingDescriptor.elementsOffset(0);
        assertEquals(0x04, bytes.get(elements)); // little-endian elements
        assertEquals(0x01, bytes.get(elements + 3));
        assertEquals(0L, bytes.getLong((int) ChannelDescriptor.toRankOffset(4096) + RingDescriptor.TAIL_POSITION_OFFSET));
    }

    @Test
    void shouldNeverOverwriteAnExistingFile() throws IOException {
        Path file = dir.resolve("rank-1.chan");
        Files.write(file, new byte[] {1, 2, 3});
        assertThrows(FileAlreadyExistsException.class, () -> MappedRankChannel.create(file, 4096, 1L, 1));
        assertEquals(3, Files.size(file));
    }

    @Test
    void shouldRejectInvalidCapacityOnCreate() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> MappedRankChannel.create(dir.resolve("rank-1.chan"), 5000, 1L, 1));
        assertTrue(e.getMessage().contains("ringCapacity=5000"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MappedRankChannel.create(dir.resolve("rank-1.chan"), 2048, 1L, 1));
        assertFalse(Files.exists(dir.resolve("rank-1.chan")));
    }

    @Test
    void shouldExchangeRecordsBetweenTheCreatorAndAMapping() throws IOException {
        Path file = dir.resolve("rank-2.chan");
        ByteBuffer buf = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        try (MappedRankChannel proxySide = MappedRankChannel.create(file, 4096, 99L, 2);
             MappedRankChannel rankSide = MappedRankChannel.map(file)) {
            assertEquals(99L, rankSide.jobId());
            assertEquals(2, rankSide.rankId());
            assertEquals(4096, rankSide.ringCapacity());

            buf.putInt(0, 11).putInt(4, 12);
            assertTrue(proxySide.toRank().offer(INT, 2, buf, 0, 8));
            assertEquals(2, rankSide.toRank().poll(INT, buf, 8, 10));
            assertEquals(12, buf.getInt(12));

            buf.putInt(0, 21);
            assertTrue(rankSide.fromRank().offer(INT, 1, buf, 0, 4));
            assertEquals(1, proxySide.fromRank().availableElements(INT));
            assertEquals(1, proxySide.fromRank().poll(INT, buf, 16, 10));
            assertEquals(21, buf.getInt(16));
            assertTrue(proxySide.toRank().isEmpty());
            assertEquals(24, proxySide.toRank().bytesRead());
        }
    }

    @Test
    void shouldContinueInsideAPartlyReadRecordAfterANewMapping() throws IOException {
        Path file = dir.resolve("rank-1.chan");
        ByteBuffer buf = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 10; i++) {
            buf.putInt(4 * i, 100 + i);
        }
        try (MappedRankChannel first = MappedRankChannel.create(file, 4096, 5L, 1)) {
            assertTrue(first.fromRank().offer(INT, 10, buf, 0, 40));
            assertTrue(first.fromRank().offer(INT, 2, buf, 0, 8));
            assertEquals(4, first.fromRank().poll(INT, buf, 100, 4));
            assertEquals(103, buf.getInt(112));
        }
        try (MappedRankChannel second = MappedRankChannel.map(file)) {
            assertEquals(16, second.fromRank().headRecordOffset());
            assertEquals(16, second.fromRank().bytesRead()); // head 0 plus 16 bytes taken
            assertEquals(8, second.fromRank().availableElements(INT));
            assertEquals(8, second.fromRank().poll(INT, buf, 100, 100));
            for (int i = 0; i < 6; i++) {
                assertEquals(104 + i, buf.getInt(100 + 4 * i));
            }
            assertEquals(100, buf.getInt(124));
            assertEquals(101, buf.getInt(128));
            assertTrue(second.fromRank().isEmpty());
        }
    }

    @Test
    void shouldRefuseRingsAfterClose() throws IOException {
        MappedRankChannel channel = MappedRankChannel.create(dir.resolve("rank-1.chan"), 4096, 1L, 1);
        channel.close();
        assertTrue(channel.isClosed());
        assertThrows(IllegalStateException.class, channel::toRank);
        assertThrows(IllegalStateException.class, channel::fromRank);
    }

    @Test
    void shouldRejectAFileWithBadMagic() throws IOException {
        Path file = createClosed();
        patchLong(file, ChannelDescriptor.MAGIC_OFFSET, 0x1122334455667788L);
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("is not a channel file: magic 0x1122334455667788"), e.getMessage());
    }

    @Test
    void shouldRejectAFileWithAnotherMajorVersion() throws IOException {
        Path file = createClosed();
        patchInt(file, ChannelDescriptor.VERSION_OFFSET, ChannelDescriptor.version(3, 0));
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("layout version 3.0"), e.getMessage());
        // 1.x consumers zeroed what they read; a 2.0 producer relies on its end marks instead
        patchInt(file, ChannelDescriptor.VERSION_OFFSET, ChannelDescriptor.version(1, 1));
        IOException old = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(old.getMessage().contains("layout version 1.1"), old.getMessage());
    }

    @Test
    void shouldAcceptANewerMinorVersion() throws IOException {
        Path file = createClosed();
        patchInt(file, ChannelDescriptor.VERSION_OFFSET, ChannelDescriptor.version(2, 7));
        try (MappedRankChannel channel = MappedRankChannel.map(file)) {
            assertEquals(7, ChannelDescriptor.minorVersion(channel.version()));
        }
    }

    @Test
    void shouldRejectAnUninitialisedFile() throws IOException {
        Path file = createClosed();
        patchInt(file, ChannelDescriptor.VERSION_OFFSET, 0);
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("not initialised"), e.getMessage());
    }

    @Test
    void shouldRejectATruncatedFile() throws IOException {
        Path file = createClosed();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(ChannelDescriptor.fileLength(4096) - 8);
        }
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("is truncated: " + (ChannelDescriptor.fileLength(4096) - 8) + " bytes"),
            e.getMessage());
    }

    @Test
    void shouldRejectAFileShorterThanTheHeader() throws IOException {
        Path file = dir.resolve("short.chan");
        Files.write(file, new byte[20]);
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("shorter than the 128-byte header"), e.getMessage());
    }

    @Test
    void shouldRejectAnInconsistentHeader() throws IOException {
        Path file = createClosed();
        patchInt(file, ChannelDescriptor.RING_CAPACITY_OFFSET, 8192);
        IOException e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("inconsistent header"), e.getMessage());
        patchInt(file, ChannelDescriptor.RING_CAPACITY_OFFSET, 3000);
        e = assertThrows(IOException.class, () -> MappedRankChannel.map(file));
        assertTrue(e.getMessage().contains("invalid ring capacity 3000"), e.getMessage());
    }

    @Test
    void shouldReportAMissingFile() {
        assertThrows(NoSuchFileException.class, () -> MappedRankChannel.map(dir.resolve("missing.chan")));
    }

    private Path createClosed() throws IOException {
        Path file = dir.resolve("rank-1.chan");
        MappedRankChannel.create(file, 4096, 1L, 1).close();
        return file;
    }

    private static void patchInt(Path file, int offset, int value) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, value), offset);
        }
    }

    private static void patchLong(Path file, int offset, long value) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        }
    }
}
