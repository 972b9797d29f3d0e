package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mpiproxy.process.StagedFiles;
import org.mpiproxy.protocol.MpiErrors;

class StagedProgramsTest {

    @TempDir
    Path dir;

    private static ByteBuffer fragment(byte[] digest, byte[] content, int index, int chunk) {
        int from = index * chunk;
        int length = index < 0 ? 0 : Math.min(chunk, content.length - from);
        ByteBuffer b = ByteBuffer.allocate(32 + Math.max(0, length));
        b.put(digest);
        if (length > 0) {
            b.put(content, from, length);
        }
        return b;
    }

    private StagedPrograms.Outcome send(StagedPrograms s, byte[] digest, byte[] content, int index, int chunk,
                                        int count) {
        ByteBuffer b = fragment(digest, content, index, chunk);
        return s.onFragment(content.length, Math.max(0, index), count, chunk, b, 0, b.capacity(), 0);
    }

    @Test
    void shouldStoreAFileWhoseFragmentsCameInAnyOrderAndTwiceOnlyWhenTheDigestMatches() throws Exception {
        byte[] content = new byte[10_000];
        new Random(7).nextBytes(content);
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms s = new StagedPrograms(dir.resolve("staged"));
        int chunk = 1000;

        StagedPrograms.Outcome probe = send(s, digest, content, -1, chunk, 0);
        assertEquals(new StagedPrograms.Outcome(MpiErrors.SUCCESS, false, null), probe, "not here yet");
        for (int i : new int[] {9, 3, 3, 0, 1, 2, 4, 5, 6, 7}) {
            assertFalse(send(s, digest, content, i, chunk, 10).complete());
        }
        StagedPrograms.Outcome last = send(s, digest, content, 8, chunk, 10);
        assertEquals(new StagedPrograms.Outcome(MpiErrors.SUCCESS, true, null), last);
        Path file = dir.resolve("staged").resolve(StagedFiles.name(digest));
        assertArrayEquals(content, Files.readAllBytes(file));
        assertTrue(Files.isExecutable(file));
        assertTrue(send(s, digest, content, -1, chunk, 0).complete(), "the probe finds it cached");
    }

    @Test
    void shouldGoOnWithAFileAPreviousRevisionWasBeingGiven() throws Exception {
        byte[] content = new byte[5000];
        new Random(11).nextBytes(content);
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms before = new StagedPrograms(dir.resolve("staged"));
        for (int i : new int[] {0, 2, 4}) {
            assertFalse(send(before, digest, content, i, 1000, 5).complete());
        }

        StagedPrograms after = new StagedPrograms(dir.resolve("staged"));
        after.restore(before.export(), 0);
        after.restore(java.util.Map.of("sha256-x", new Object[] {"not", "a", "partial", "file"}), 0);
        assertFalse(send(after, digest, content, 1, 1000, 5).complete());
        assertTrue(send(after, digest, content, 3, 1000, 5).complete(), "the fragments stored before count");
        assertArrayEquals(content, Files.readAllBytes(dir.resolve("staged").resolve(StagedFiles.name(digest))));
    }

    @Test
    void shouldRefuseWhatDoesNotAddUpAndDropAFileOfAnotherContent() {
        byte[] content = new byte[2500];
        byte[] digest = StagedPrograms.sha256(content);
        StagedPrograms s = new StagedPrograms(dir.resolve("staged"));

        assertEquals(MpiErrors.ERR_ARG, send(s, digest, content, 0, 1000, 2).result(), "2500 bytes are 3 fragments");
        assertEquals(MpiErrors.ERR_ARG, s.onFragment(10, 0, 1, 10, ByteBuffer.allocate(5), 0, 5, 0).result(),
                "no digest");
        assertEquals(MpiErrors.ERR_MESSAGE_TOO_LARGE, s.onFragment(StagedPrograms.MAX_FILE_BYTES + 1, 0, 1, 1000,
                ByteBuffer.allocate(32), 0, 32, 0).result());

        byte[] wrong = digest.clone();
        wrong[0] ^= 1;
        for (int i = 0; i < 2; i++) {
            assertEquals(MpiErrors.SUCCESS, send(s, wrong, content, i, 1000, 3).result());
        }
        StagedPrograms.Outcome o = send(s, wrong, content, 2, 1000, 3);
        assertEquals(MpiErrors.ERR_ARG, o.result());
        assertTrue(o.problem().contains("the content has another SHA-256"), o.problem());
        assertFalse(Files.exists(dir.resolve("staged").resolve(StagedFiles.name(wrong))));
    }
}
