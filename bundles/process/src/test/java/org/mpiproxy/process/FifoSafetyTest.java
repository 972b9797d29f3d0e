package org.mpiproxy.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.api.PrivateDirectories;

/**
 * A rank's output FIFOs are opened without following links and checked once open: a link, a
 * regular file, another user's FIFO or a FIFO swapped in after it was made is refused, never read
 * or handed to a rank.
 */
class FifoSafetyTest {

    @TempDir
    Path temp;

    @BeforeEach
    void needsFifos() {
        assumeTrue(RankFifos.available(), "FIFOs need JNA and glibc");
    }

    private static Path mkfifo(Path path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", "-m", "600", path.toString()).inheritIO().start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo " + path);
        return path;
    }

    @Test
    void shouldNotFollowALinkInThePlaceOfAFifo() throws Exception {
        Path real = mkfifo(temp.resolve("real.fifo"));
        Path link = Files.createSymbolicLink(temp.resolve("rank-1.out.fifo"), real);

        IOException e = assertThrows(IOException.class, () -> RankFifos.openExisting(link));

        assertEquals("FIFO " + link + " is a symbolic link; refusing to follow it", e.getMessage());
    }

    @Test
    void shouldRefuseARegularFileInThePlaceOfAFifo() throws IOException {
        Path file = Files.writeString(temp.resolve("rank-1.out.fifo"), "not a pipe");

        IOException e = assertThrows(IOException.class, () -> RankFifos.openExisting(file));

        assertEquals(file + " is not a FIFO; refusing to use it", e.getMessage());
    }

    @Test
    void shouldRefuseAFifoOfAnotherUser() throws Exception {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a FIFO to another user needs root");
        Path fifo = mkfifo(temp.resolve("rank-1.out.fifo"));
        Files.setAttribute(fifo, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);

        IOException e = assertThrows(IOException.class, () -> RankFifos.openExisting(fifo));

        assertTrue(e.getMessage().contains("is owned by uid 65534, not by uid 0"), e.getMessage());
    }

    @Test
    void shouldOpenAFifoOfTheUserItsDirectoryWasGivenToAndNoOtherUsers() throws Exception {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a FIFO to another user needs root");
        Path job = Files.createDirectory(temp.resolve("job"));
        Files.setAttribute(job, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        Path fifo = mkfifo(job.resolve("rank-1.out.fifo"));
        Files.setAttribute(fifo, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS);
        Path other = mkfifo(job.resolve("rank-2.out.fifo"));
        Files.setAttribute(other, "unix:uid", 1, LinkOption.NOFOLLOW_LINKS);

        try (InputStream in = RankFifos.openExisting(fifo)) {
            assertTrue(in instanceof RankFifos.FifoInputStream, "a job user's FIFO, after a restart of the node");
        }
        IOException e = assertThrows(IOException.class, () -> RankFifos.openExisting(other));
        assertTrue(e.getMessage().contains("is owned by uid 1, not by uid 0"), e.getMessage());
    }

    @Test
    void shouldGiveAFifoToTheRanksUserThroughWhatItOpened() throws Exception {
        assumeTrue(PrivateDirectories.currentUid() == 0, "giving a FIFO to another user needs root");
        Path fifo = temp.resolve("rank-1.out.fifo");

        try (RankFifos.FifoInputStream reader = RankFifos.create(fifo, new org.mpiproxy.api.RankIdentity(65534, 65533))) {
            assertEquals(65534, (Integer) Files.getAttribute(fifo, "unix:uid", LinkOption.NOFOLLOW_LINKS));
            assertEquals(65533, (Integer) Files.getAttribute(fifo, "unix:gid", LinkOption.NOFOLLOW_LINKS));
            assertEquals(0600, (Integer) Files.getAttribute(fifo, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0777);
            RankFifos.close(RankFifos.openRankEnd(reader));
        }
    }

    @Test
    void shouldReplaceALinkWithItsOwnFifoWithoutTouchingTheTarget() throws Exception {
        Path victim = Files.writeString(temp.resolve("victim"), "untouched");
        Path fifo = Files.createSymbolicLink(temp.resolve("rank-1.out.fifo"), victim);

        try (RankFifos.FifoInputStream in = RankFifos.create(fifo)) {
            assertEquals(fifo, in.path());
            assertFalse(Files.isSymbolicLink(fifo));
            assertEquals(0010000, (Integer) Files.getAttribute(fifo, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 0170000,
                    "a FIFO of its own");
        }
        assertEquals("untouched", Files.readString(victim));
    }

    @Test
    void shouldNotHandARankAFifoSwappedInAfterItWasMade() throws Exception {
        Path fifo = temp.resolve("rank-1.out.fifo");
        try (RankFifos.FifoInputStream reader = RankFifos.create(fifo)) {
            int fd = RankFifos.openRankEnd(reader);
            RankFifos.close(fd);

            Files.delete(fifo);
            mkfifo(fifo);
            IOException e = assertThrows(IOException.class, () -> RankFifos.openRankEnd(reader));
            assertEquals("FIFO " + fifo + " was replaced after it was made; refusing to use it", e.getMessage());

            Files.delete(fifo);
            Files.createSymbolicLink(fifo, temp.resolve("elsewhere"));
            assertThrows(IOException.class, () -> RankFifos.openRankEnd(reader));
        }
    }

    @Test
    void shouldStillReadTheFifoItMade() throws Exception {
        Path fifo = temp.resolve("rank-1.out.fifo");
        try (RankFifos.FifoInputStream reader = RankFifos.create(fifo)) {
            int fd = RankFifos.openRankEnd(reader);
            try (InputStream again = RankFifos.openExisting(fifo)) {
                assertTrue(again instanceof RankFifos.FifoInputStream);
            } finally {
                RankFifos.close(fd);
            }
        }
    }
}
