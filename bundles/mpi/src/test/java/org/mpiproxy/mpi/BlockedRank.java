package org.mpiproxy.mpi;

/** A rank that joins its job, says so on standard output, then waits for data that never comes. */
public final class BlockedRank {

    private BlockedRank() {
    }

    /**
     * @param args {@code --slave <channel> <rank> <world>}
     */
    public static void main(String[] args) {
        try (Mpi mpi = Mpi.init(args)) {
            System.out.println("ready");
            System.out.flush();
            mpi.recv(new int[1], 0, 1, 0);
        }
        System.exit(3);
    }
}
