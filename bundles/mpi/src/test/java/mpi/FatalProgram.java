package mpi;

/** A program of a world of one that sends to rank 1, under the default error handler (after two calls before Init). */
public final class FatalProgram {

    private FatalProgram() {
    }

    public static void main(String[] args) throws MPIException {
        System.out.println(MPI.getErrorString(MPI.ERR_RANK));
        try {
            MPI.getErrorString(99);
        } catch (MPIException e) {
            // before Init no error handler applies: the call throws
            System.out.println("before Init: " + e.getErrorClass());
        }
        MPI.Init(args);
        System.out.println("before");
        MPI.COMM_WORLD.send(new int[1], 1, MPI.INT, 1, 0);
        System.out.println("after");
        MPI.Finalize();
    }
}
