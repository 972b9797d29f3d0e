import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;
import mpi.Status;

/**
 * {@code Stream STOPFILE PAUSE_MS}: rank 0 and every other rank stream numbered ints to each other
 * in rounds, PAUSE_MS apart, until the file STOPFILE exists; each side checks every element
 * exactly once, in order, then rank 0 prints one line with the rounds. Every other rank prints
 * {@code rank R round K} for each round it answered. A wrong element ends the rank with status 1
 * and a line naming it. Written against the mpi package only.
 */
public class Stream {

    static final int COUNT = 256;
    static final int DATA = 1;
    static final int END = 2;

    public static void main(String[] args) throws MPIException, InterruptedException {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        int size = world.getSize();
        Path stop = Paths.get(args[0]);
        long pause = Long.parseLong(args[1]);
        int[] buf = new int[COUNT];
        if (rank == 0) {
            int round = 0;
            while (!Files.exists(stop)) {
                for (int r = 1; r < size; r++) {
                    for (int i = 0; i < COUNT; i++) {
                        buf[i] = round * COUNT + i;
                    }
                    world.send(buf, COUNT, MPI.INT, r, DATA);
                }
                for (int r = 1; r < size; r++) {
                    world.recv(buf, COUNT, MPI.INT, r, DATA);
                    check(0, r, buf, round, r);
                }
                round++;
                Thread.sleep(pause);
            }
            for (int r = 1; r < size; r++) {
                world.send(new int[] {round}, 1, MPI.INT, r, END);
            }
            for (int r = 1; r < size; r++) {
                int[] rounds = new int[1];
                world.recv(rounds, 1, MPI.INT, r, END);
                if (rounds[0] != round) {
                    fail(0, "rank " + r + " got " + rounds[0] + " rounds, " + round + " were sent");
                }
            }
            System.out.println("streamed " + round + " rounds of " + COUNT + " ints both ways with " + (size - 1)
                    + " ranks, every element checked");
        } else {
            int round = 0;
            while (true) {
                Status status = world.recv(buf, COUNT, MPI.INT, 0, MPI.ANY_TAG);
                if (status.getTag() == END) {
                    if (buf[0] != round) {
                        fail(rank, "rank 0 sent " + buf[0] + " rounds, " + round + " arrived");
                    }
                    world.send(new int[] {round}, 1, MPI.INT, 0, END);
                    break;
                }
                check(rank, 0, buf, round, 0);
                for (int i = 0; i < COUNT; i++) {
                    buf[i] += rank;
                }
                world.send(buf, COUNT, MPI.INT, 0, DATA);
                System.out.println("rank " + rank + " round " + round);
                round++;
            }
        }
        MPI.Finalize();
    }

    /** Element i of round {@code round} from {@code source} is {@code round * COUNT + i + offset}. */
    private static void check(int rank, int source, int[] buf, int round, int offset) {
        for (int i = 0; i < COUNT; i++) {
            int expected = round * COUNT + i + offset;
            if (buf[i] != expected) {
                fail(rank, "element " + i + " of round " + round + " from rank " + source + " is " + buf[i]
                        + ", not " + expected);
            }
        }
    }

    private static void fail(int rank, String what) {
        System.err.println("rank " + rank + ": " + what);
        System.exit(1);
    }
}
