package org.mpiproxy.channel.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TwoProcessExchangeTest {

    private static final int INT = MappedMessageRingTest.INT;
    /**
     * How long the exchange may move nothing before the test counts it as hung (the echo
     * process first starts its JVM): on a busy machine it takes what it takes, only a stop fails it.
     */
    private static final long STALL_NANOS = TimeUnit.MINUTES.toNanos(2);

    @TempDir
    Path dir;

    @Test
    void shouldEchoAMillionIntsThroughAnotherProcess() throws Exception {
        final int total = 1_000_000;
        Path file = dir.resolve("rank-1.chan");
        Path err = dir.resolve("rank-1.err");
        try (MappedRankChannel channel = MappedRankChannel.create(file, 4096, 42L, 1)) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process process = new ProcessBuilder(List.of(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
                EchoRank.class.getName(), file.toString(), Integer.toString(total)))
                .redirectOutput(dir.resolve("rank-1.out").toFile())
                .redirectError(err.toFile())
                .start();
            try {
                ByteBuffer out = ByteBuffer.allocateDirect(4 * 100).order(ByteOrder.LITTLE_ENDIAN);
                ByteBuffer in = ByteBuffer.allocateDirect(4 * 1000).order(ByteOrder.LITTLE_ENDIAN);
                BackoffIdler idler = new BackoffIdler();
                long lastProgress = System.nanoTime();
                int sent = 0;
                int received = 0;
                while (received < total) {
                    int work = 0;
                    if (sent < total) {
                        int count = Math.min(total - sent, 1 + sent % 100);
                        for (int i = 0; i < count; i++) {
                            out.putInt(4 * i, sent + i);
                        }
                        if (channel.toRank().offer(INT, count, out, 0, 4 * count)) {
                            sent += count;
                            work++;
                        }
                    }
                    int n = channel.fromRank().poll(INT, in, 0, 1000);
                    assertTrue(n >= 0, "poll returned " + n);
                    for (int i = 0; i < n; i++) {
                        assertEquals(received + i, in.getInt(4 * i));
                    }
                    received += n;
                    work += n;
                    if (work > 0) {
                        lastProgress = System.nanoTime();
                    }
                    if (System.nanoTime() - lastProgress > STALL_NANOS
                        || !process.isAlive() && work == 0 && channel.fromRank().isEmpty() && received < total) {
                        fail("echo stopped at " + received + " of " + total + ": " + Files.readString(err));
                    }
                    idler.idle(work);
                }
                assertTrue(process.waitFor(60, TimeUnit.SECONDS), "echo process exits");
                assertEquals(0, process.exitValue(), Files.readString(err));
                assertTrue(channel.toRank().isEmpty());
                assertEquals(channel.toRank().bytesWritten(), channel.toRank().bytesRead());
                assertEquals(channel.fromRank().bytesWritten(), channel.fromRank().bytesRead());
            } finally {
                process.destroyForcibly();
            }
        }
    }
}
