package org.mpiproxy.channel.shm.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.RankChannel;
import org.mpiproxy.api.RingFaultException;

/**
 * The manager's channels turn a fault of a ring's mapped memory into a {@link RingFaultException}
 * naming the file, the job and the rank. The fault is real: the channel file is cut shorter under
 * its mapping, so touching a ring's page raises the same {@link InternalError} (SIGBUS) as a
 * page a full tmpfs cannot give (synchronously in interpreted code; compiled code may learn of it
 * only after the access).
 */
class GuardedRankChannelTest {

    private static final long JOB = 0x00ab_cdef_0123_4567L;

    @TempDir
    Path dir;

    @Test
    void shouldNameTheFileJobAndRankWhenARingsMappedPageIsGone() throws IOException {
        Path base = dir.resolve("mpiproxy");
        MappedFileChannelManager manager = new MappedFileChannelManager(base, 4096);
        try (RankChannel channel = manager.open(JOB, 2)) {
            ByteBuffer four = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, 42);
            assertTrue(channel.toRank().offer(3, 1, four, 0, 4), "the ring works while its file is whole");
            try (FileChannel file = FileChannel.open(channel.path(), StandardOpenOption.WRITE)) {
                file.truncate(0);
            }

            Throwable thrown = faultOf(() -> channel.toRank().offer(3, 1, four, 0, 4));

            if (thrown instanceof InternalError late) {
                // compiled code learns of the fault after the access, possibly past the guard: the
                // proxy then fails the request's job itself (RequestFailure in the proxy bundle)
                assertTrue(late.getMessage().contains("compiled Java code"), late.toString());
                return;
            }
            RingFaultException e = assertInstanceOf(RingFaultException.class, thrown);
            assertInstanceOf(InternalError.class, e.getCause());
            assertEquals(JOB, e.jobId());
            assertEquals(2, e.rankId());
            assertEquals(channel.path(), e.path());
            assertTrue(e.getMessage().contains("job 00abcdef01234567 rank 2 (ring toRank of " + channel.path() + ")"),
                    e.getMessage());
            assertTrue(e.getMessage().contains(base.toString()), e.getMessage());
        }
    }

    /**
     * @return what {@code access} raised, by the time the thread next checks for a fault it was
     *         told of (a native call: compiled code raises a fault there at the latest)
     */
    private static Throwable faultOf(Runnable access) {
        try {
            access.run();
            Thread.yield();
        } catch (RuntimeException | InternalError e) {
            return e;
        }
        throw new AssertionError("touching a page past the end of the file raised nothing");
    }

    @Test
    void shouldSayTheChannelBaseIsFullOnlyWhenItsFileSystemHasNoRoom() {
        Path file = dir.resolve("rank-1.chan");
        RingFaultException fault = GuardedRankChannel.fault(dir, 7, 1, file, "toRank", new InternalError("fault"));
        long usable = GuardedRankChannel.usableBytes(dir);
        assertEquals(usable >= 0 && usable < GuardedRankChannel.FULL_BELOW_BYTES,
                fault.getMessage().startsWith("no space left in the channel base " + dir + " for job "
                        + "0000000000000007 rank 1"), fault.getMessage());
        assertTrue(fault.getMessage().endsWith("(ring toRank of " + file + ")"), fault.getMessage());
    }
}
