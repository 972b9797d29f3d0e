package org.mpiproxy.channel.shm.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.channel.shm.MappedRankChannel;

class MappedFileChannelManagerTest {

    private static final long JOB = 0x00ab_cdef_0123_4567L;

    @TempDir
    Path dir;

    @Test
    void shouldCreateOwnerOnlyDirectoriesAndFiles() throws IOException {
        Path base = dir.resolve("shm").resolve("mpiproxy");
        MappedFileChannelManager manager = new MappedFileChannelManager(config(Map.of(
            "base.directory", base.toString(), "ring.capacity", 4096)));
        assertEquals(base, manager.baseDirectory());
        assertEquals(base.resolve("job-" + manager.uid() + "-00abcdef01234567"), manager.jobDirectory(JOB));
        assertFalse(Files.exists(base), "nothing is created before the first channel");

        try (RankChannel channel = manager.open(JOB, 1)) {
            assertEquals(base.resolve("job-" + manager.uid() + "-00abcdef01234567").resolve("rank-1.chan"), channel.path());
            assertEquals(JOB, channel.jobId());
            assertEquals(1, channel.rankId());
            assertEquals(4096, channel.toRank().capacity());
        }
        assertEquals("rwx------", permissions(base));
        assertEquals("rwx------", permissions(manager.jobDirectory(JOB)));
        assertEquals("rw-------", permissions(manager.jobDirectory(JOB).resolve("rank-1.chan")));
    }

    @Test
    void shouldMapAnExistingChannelWithItsData() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        ByteBuffer buf = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 77);
        try (RankChannel first = manager.open(JOB, 2)) {
            assertTrue(first.toRank().offer(3, 1, buf, 0, 4));
        }
        try (RankChannel again = manager.open(JOB, 2)) {
            assertEquals(1, again.toRank().poll(3, buf, 4, 1));
            assertEquals(77, buf.getInt(4));
        }
    }

    @Test
    void shouldReopenTheChannelsOfARunningJobThatAnotherManagerCreated() throws IOException {
        MappedFileChannelManager before = new MappedFileChannelManager(dir, 4096);
        ByteBuffer buf = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 77);
        RankChannel first = before.open(JOB, 1);
        assertTrue(first.fromRank().offer(3, 1, buf, 0, 4));
        first.fromRank().consumerMark(5);

        MappedFileChannelManager after = new MappedFileChannelManager(dir, 4096);
        IOException refused = assertThrows(IOException.class, () -> after.open(JOB, 1));
        assertTrue(refused.getMessage().contains("exists already"), refused.getMessage());
        try (RankChannel again = after.reopen(JOB, 1)) {
            assertEquals(5, again.fromRank().consumerMark());
            assertEquals(1, again.fromRank().poll(3, buf, 4, 1));
            assertEquals(77, buf.getInt(4));
        }
        first.close();
        after.release(JOB);
        assertFalse(Files.exists(after.jobDirectory(JOB)), "the reopened job's directory is the new manager's to remove");
        IOException gone = assertThrows(IOException.class, () -> after.reopen(JOB, 1));
        assertTrue(gone.getMessage().contains("is gone"), gone.getMessage());
    }

    @Test
    void shouldRefuseAnExistingFileOfAnotherRank() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        manager.open(JOB, 1).close();
        MappedRankChannel.create(manager.jobDirectory(JOB).resolve("rank-3.chan"), 4096, JOB, 4).close();
        IOException e = assertThrows(IOException.class, () -> manager.open(JOB, 3));
        assertTrue(e.getMessage().contains("belongs to job"), e.getMessage());
    }

    @Test
    void shouldNameJobDirectoriesWithTheOwnersUid() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        long uid = ((Number) Files.getAttribute(dir, "unix:uid")).longValue();
        assertEquals(uid, manager.uid(), "this test's files belong to the running user");
        assertEquals("job-" + uid + "-00abcdef01234567", manager.jobDirectory(JOB).getFileName().toString());
    }

    @Test
    void shouldTakeAnyJobIdButZeroAndNameItsDirectoryUnsigned() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        long highBit = 0xf123_4567_89ab_cdefL;
        try (RankChannel channel = manager.open(highBit, 1)) {
            assertEquals(highBit, channel.jobId(), "a v2 job id need not be positive as an int64");
        }
        assertTrue(manager.jobDirectory(highBit).getFileName().toString().endsWith("-f123456789abcdef"));
    }

    @Test
    void shouldRefuseAJobDirectoryThatExistsAlready() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        Files.createDirectories(manager.jobDirectory(JOB));
        IOException e = assertThrows(IOException.class, () -> manager.open(JOB, 1));
        assertTrue(e.getMessage().contains("exists already"), e.getMessage());
        assertFalse(Files.exists(manager.jobDirectory(JOB).resolve("rank-1.chan")), "nothing created in it");
    }

    @Test
    void shouldCreateTheJobDirectoryAgainAfterRelease() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        manager.open(JOB, 1).close();
        manager.open(JOB, 2).close();
        manager.release(JOB);
        manager.open(JOB, 1).close();
        assertTrue(Files.exists(manager.jobDirectory(JOB).resolve("rank-1.chan")));
    }

    @Test
    void shouldLeaveNothingAfterRemoveAndRelease() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir.resolve("base"), 4096);
        manager.open(JOB, 1).close();
        manager.open(JOB, 2).close();
        manager.open(JOB + 1, 1).close();

        manager.remove(JOB, 1);
        assertFalse(Files.exists(manager.jobDirectory(JOB).resolve("rank-1.chan")));
        assertTrue(Files.exists(manager.jobDirectory(JOB).resolve("rank-2.chan")));
        manager.remove(JOB, 1);

        manager.release(JOB);
        assertFalse(Files.exists(manager.jobDirectory(JOB)));
        manager.release(JOB);
        manager.remove(JOB + 1, 1);
        manager.release(JOB + 1);
        try (var entries = Files.list(manager.baseDirectory())) {
            assertEquals(0, entries.count());
        }
    }

    @Test
    void shouldRefuseABaseDirectoryThatIsASymbolicLink() throws IOException {
        Path target = Files.createDirectory(dir.resolve("target"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        MappedFileChannelManager manager = new MappedFileChannelManager(link, 4096);
        IOException e = assertThrows(IOException.class, () -> manager.open(JOB, 1));
        assertTrue(e.getMessage().contains("base.directory=" + link + " is a symbolic link"), e.getMessage());
        try (var entries = Files.list(target)) {
            assertEquals(0, entries.count());
        }
    }

    @Test
    void shouldRefuseABaseDirectoryThatIsAFile() throws IOException {
        Path file = Files.createFile(dir.resolve("file"));
        MappedFileChannelManager manager = new MappedFileChannelManager(file, 4096);
        IOException e = assertThrows(IOException.class, () -> manager.open(JOB, 1));
        assertTrue(e.getMessage().contains("is not a directory"), e.getMessage());
    }

    @Test
    void shouldRefuseAJobDirectoryThatIsASymbolicLink() throws IOException {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
        Files.createSymbolicLink(manager.jobDirectory(JOB), elsewhere);
        assertThrows(IOException.class, () -> manager.open(JOB, 1));
        manager.release(JOB);
        assertFalse(Files.exists(manager.jobDirectory(JOB), java.nio.file.LinkOption.NOFOLLOW_LINKS));
        assertTrue(Files.isDirectory(elsewhere), "release removes the link, not its target");
    }

    @Test
    void shouldRejectRankIdsBelowOne() {
        MappedFileChannelManager manager = new MappedFileChannelManager(dir, 4096);
        assertThrows(IllegalArgumentException.class, () -> manager.open(JOB, 0));
    }

    @Test
    void shouldUseTheDocumentedDefaults() {
        MappedFileChannelManager manager = new MappedFileChannelManager(config(Map.of()));
        assertEquals(Path.of("/dev/shm/mpiproxy"), manager.baseDirectory());
        assertEquals(2097152, manager.ringCapacity());
    }

    @Test
    void shouldRejectARingCapacityThatIsNotAPowerOfTwoInRange() {
        for (int capacity : new int[] {1000, 0, -4096, 2048, 1 << 31 >>> 1 | 1, 6144}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new MappedFileChannelManager(config(Map.of("ring.capacity", capacity))));
            assertEquals("ring.capacity=" + capacity + " must be a power of two between 4096 and 1073741824",
                e.getMessage());
        }
        assertNotNull(new MappedFileChannelManager(config(Map.of("ring.capacity", 1 << 30))));
    }

    @Test
    void shouldRejectAnEmptyBaseDirectory() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new MappedFileChannelManager(config(Map.of("base.directory", " "))));
        assertTrue(e.getMessage().startsWith("base.directory="), e.getMessage());
    }

    @Test
    void shouldResolveARelativeBaseDirectoryAgainstKarafData() {
        String old = System.getProperty("karaf.data");
        System.setProperty("karaf.data", dir.toString());
        try {
            assertEquals(dir.resolve("shm"), MappedFileChannelManager.resolveBaseDirectory("shm"));
        } finally {
            if (old == null) {
                System.clearProperty("karaf.data");
            } else {
                System.setProperty("karaf.data", old);
            }
        }
    }

    @Test
    void shouldKeepTheLastGoodConfigurationForEveryBadValue() throws IOException {
        Path base = dir.resolve("base");
        Map<String, Object> good = Map.of("base.directory", base.toString(), "ring.capacity", 4096);
        MappedFileChannelManager manager = new MappedFileChannelManager(config(good));
        Map<String, String> bad = new java.util.LinkedHashMap<>();
        bad.put("base.directory= ", "base.directory=  must not be empty");
        bad.put("base.directory=/a\0b", "base.directory=/a\0b is not a valid path: Nul character not allowed: /a\0b");
        bad.put("ring.capacity=5000", "ring.capacity=5000 must be a power of two between 4096 and 1073741824");
        bad.put("owner.user=nobody", "owner.user=nobody must be a numeric <uid>:<gid>");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            String[] kv = e.getKey().split("=", 2);
            Map<String, Object> values = new java.util.HashMap<>(good);
            values.put(kv[0], kv[0].equals("ring.capacity") ? (Object) Integer.parseInt(kv[1]) : kv[1]);
            assertEquals(e.getValue(), manager.reconfigure(config(values)), "the message names key and value");
            manager.modified(values);
            assertEquals(base, manager.baseDirectory(), "the last good base directory stays");
            assertEquals(4096, manager.ringCapacity());
        }
        try (RankChannel channel = manager.open(JOB, 1)) {
            assertEquals(base, channel.path().getParent().getParent(), "still serving with the last good values");
        }
    }

    @Test
    void shouldMoveNewJobsToANewBaseDirectoryWhileRunningJobsKeepTheirs() throws IOException {
        Path before = dir.resolve("before");
        Path after = dir.resolve("after");
        MappedFileChannelManager manager = new MappedFileChannelManager(config(Map.of(
            "base.directory", before.toString(), "ring.capacity", 4096)));
        RankChannel running = manager.open(JOB, 1);
        Path runningDirectory = manager.jobDirectory(JOB);

        assertEquals(null, manager.reconfigure(config(Map.of("base.directory", after.toString(),
            "ring.capacity", 8192))));

        assertEquals(after, manager.baseDirectory());
        assertEquals(runningDirectory, manager.jobDirectory(JOB), "a running job keeps its directory");
        try (RankChannel second = manager.open(JOB, 2)) {
            assertEquals(runningDirectory.resolve("rank-2.chan"), second.path());
            assertEquals(8192, second.toRank().capacity(), "new channels get the new capacity");
        }
        try (RankChannel other = manager.open(JOB + 1, 1)) {
            assertEquals(after, other.path().getParent().getParent(), "a new job goes to the new base directory");
        }
        running.close();
        manager.release(JOB);
        assertFalse(Files.exists(runningDirectory), "the running job's directory is removed where it is");
        manager.release(JOB + 1);
        assertFalse(Files.exists(manager.jobDirectory(JOB + 1)));
    }

    private static String permissions(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }

    /** A Config as DS builds it: dotted keys, annotation defaults for the missing ones. */
    static MappedFileChannelManager.Config config(Map<String, Object> properties) {
        return (MappedFileChannelManager.Config) Proxy.newProxyInstance(MappedFileChannelManager.Config.class.getClassLoader(),
            new Class<?>[] {MappedFileChannelManager.Config.class}, (proxy, method, args) -> {
                String key = method.getName().replace('_', '.');
                Object value = properties.get(key);
                if (value != null) {
                    return value;
                }
                if (method.getDefaultValue() != null) {
                    return method.getDefaultValue();
                }
                if (method.getName().equals("annotationType")) {
                    return MappedFileChannelManager.Config.class;
                }
                throw new UnsupportedOperationException(method.getName());
            });
    }
}
