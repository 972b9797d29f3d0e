package mpi;

/** An MPI object that can be freed. */
public interface Freeable {

    /** Frees the object. */
    void free() throws MPIException;
}
