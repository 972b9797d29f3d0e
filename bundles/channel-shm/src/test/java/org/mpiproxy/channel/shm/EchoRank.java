package org.mpiproxy.channel.shm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/** A rank program for the two-process test: echoes {@code count} ints from toRank to fromRank. */
final class EchoRank {

    /** How long it may echo nothing before it gives up: its test is gone or hung. */
    private static final long STALL_NANOS = 120_000_000_000L;

    private EchoRank() {
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        long total = Long.parseLong(args[1]);
        long lastProgress = System.nanoTime();
        try (MappedRankChannel channel = MappedRankChannel.map(file)) {
            MappedMessageRing in = channel.toRank();
            MappedMessageRing out = channel.fromRank();
            ByteBuffer buffer = ByteBuffer.allocateDirect(4 * 300).order(ByteOrder.LITTLE_ENDIAN);
            BackoffIdler idler = new BackoffIdler();
            long echoed = 0;
            while (echoed < total) {
                int n = in.poll(MappedMessageRingTest.INT, buffer, 0, 300);
                if (n < 0) {
                    System.err.println("unexpected datatype " + in.peekDatatype());
                    System.exit(2);
                }
                if (n > 0) {
                    while (!out.offer(MappedMessageRingTest.INT, n, buffer, 0, 4 * n)) {
                        idler.idle(0);
                        checkStall(lastProgress);
                    }
                    echoed += n;
                    lastProgress = System.nanoTime();
                }
                idler.idle(n);
                checkStall(lastProgress);
            }
        }
        System.exit(0);
    }

    private static void checkStall(long lastProgress) {
        if (System.nanoTime() - lastProgress > STALL_NANOS) {
            System.err.println("nothing to echo for " + STALL_NANOS / 1_000_000_000L + " s");
            System.exit(3);
        }
    }
}
