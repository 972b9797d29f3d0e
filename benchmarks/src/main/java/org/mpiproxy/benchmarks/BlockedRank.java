package org.mpiproxy.benchmarks;

import org.mpiproxy.mpi.Mpi;
import org.mpiproxy.mpi.MpiException;

/**
 * A rank that blocks in a receive from rank 0 until data or the library's timeout comes, and
 * echoes each int it receives, as often as its first argument says (1 by default).
 */
public final class BlockedRank {

    private BlockedRank() {
    }

    /**
     * @param args the rank command line the launcher passes
     */
    public static void main(String[] args) {
        try (Mpi mpi = Mpi.init(args)) {
            java.util.List<String> own = mpi.args();
            int echoes = own.isEmpty() ? 1 : Integer.parseInt(own.get(0));
            int[] one = new int[1];
            for (int i = 0; i < echoes; i++) {
                mpi.recv(one, 0, 1, 0);
                mpi.send(one, 0, 1, 0);
            }
        } catch (MpiException e) {
            System.err.println("blocked rank ended: " + e.getMessage());
        }
    }
}
