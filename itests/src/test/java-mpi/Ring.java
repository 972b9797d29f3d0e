import mpi.MPI;
import mpi.MPIException;
import mpi.Intracomm;

/** Passes a token around every rank: each adds one. Written against the mpi package only. */
public class Ring {
    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        int size = world.getSize();
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int[] token = new int[1];
        for (int i = 0; i < rounds; i++) {
            if (rank == 0) {
                world.send(token, 1, MPI.INT, 1 % size, 0);
                world.recv(token, 1, MPI.INT, size - 1, 0);
            } else {
                world.recv(token, 1, MPI.INT, rank - 1, 0);
                token[0]++;
                world.send(token, 1, MPI.INT, (rank + 1) % size, 0);
            }
        }
        if (rank == 0) {
            System.out.println("token " + token[0] + " after " + rounds + " rounds of " + size + " ranks on "
                    + MPI.getProcessorName());
        }
        MPI.Finalize();
    }
}
