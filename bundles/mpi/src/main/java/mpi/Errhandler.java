package mpi;

/**
 * What a communicator does with a failed call ({@link Comm#setErrhandler}): the two predefined
 * handlers of {@link MPI}. Under {@link MPI#ERRORS_ARE_FATAL} the process prints the error (its
 * class, the communicator, this rank, the message) and exits with the error class as status,
 * and the launcher stops the job's other ranks; under {@link MPI#ERRORS_RETURN} the call throws
 * an {@link MPIException} of that class.
 */
public final class Errhandler {

    static final Errhandler FATAL = new Errhandler("MPI.ERRORS_ARE_FATAL");
    static final Errhandler RETURN = new Errhandler("MPI.ERRORS_RETURN");

    /** How a process ends under {@link MPI#ERRORS_ARE_FATAL}: it halts; tests end their rank instead. */
    @FunctionalInterface
    interface Ending {
        void end(int status, String message);
    }

    static volatile Ending ending = (status, message) -> {
        System.out.flush();
        System.err.println(message);
        System.err.flush();
        Runtime.getRuntime().halt(status);
    };

    private final String name;

    private Errhandler(String name) {
        this.name = name;
    }

    /**
     * Hands a failed call's error to this handler.
     *
     * @param on the communicator's name
     * @return the exception to throw, under {@link MPI#ERRORS_RETURN}
     */
    MPIException handle(String on, MPIException e) {
        if (this == FATAL) {
            fatal(on, e);
        }
        return e;
    }

    /** Ends the job for {@code e}: exit status = its class, 1 where that is no exit status. */
    static void fatal(String on, MPIException e) {
        int status = e.getErrorClass() > 0 && e.getErrorClass() < 256 ? e.getErrorClass() : 1;
        ending.end(status, ErrorClasses.name(e.getErrorClass()) + " on " + on + " at rank " + MPI.worldRank()
                + " (MPI.ERRORS_ARE_FATAL: the job ends): " + e.getMessage());
    }

    @Override
    public String toString() {
        return name;
    }
}
