package org.mpiproxy.benchmarks;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;

/** A rank that blocks in a receive from rank 0 until data or the library's timeout comes. */
public final class BlockedRank {

    private BlockedRank() {
    }

    /**
     * @param args the rank command line the launcher passes
     */
    public static void main(String[] args) {
        try (Mpi mpi = Mpi.init(args)) {
            int[] one = new int[1];
            mpi.recv(one, 0, 1, 0);
        } catch (MpiException e) {
            System.err.println("blocked rank ended: " + e.getMessage());
        }
    }
}
