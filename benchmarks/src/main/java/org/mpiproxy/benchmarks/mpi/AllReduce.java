package org.mpiproxy.benchmarks.mpi;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * allReduce of one double (MPI.SUM) over every rank, written only against the {@code mpi}
 * package, as {@code allreduce.c} is against MPICH. Rank 0 prints
 * {@code allreduce_us <mean microseconds per allReduce over ROUNDS>}.
 * Usage: AllReduce [ROUNDS] (default 5000, after ROUNDS/10 warm-up calls).
 */
public final class AllReduce {

    private AllReduce() {
    }

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        int size = world.getSize();
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5000;
        int warmup = rounds / 10;
        double[] in = {rank + 1};
        double[] out = new double[1];
        double start = 0;
        for (int i = 0; i < warmup + rounds; i++) {
            if (i == warmup) {
                world.barrier();
                start = MPI.wtime();
            }
            world.allReduce(in, out, 1, MPI.DOUBLE, MPI.SUM);
        }
        double elapsed = MPI.wtime() - start;
        if (out[0] != size * (size + 1) / 2.0) {
            System.err.println("AllReduce: rank " + rank + " got " + out[0] + ", expected " + size * (size + 1) / 2.0);
            world.abort(3);
        }
        if (rank == 0) {
            System.out.printf(java.util.Locale.ROOT, "allreduce_us %.3f%n", elapsed * 1e6 / rounds);
        }
        MPI.Finalize();
    }
}
