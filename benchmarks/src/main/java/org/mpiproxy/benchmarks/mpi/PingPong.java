package org.mpiproxy.benchmarks.mpi;

import mpi.Intracomm;
import mpi.MPI;
import mpi.MPIException;

/**
 * One int back and forth between ranks A and B, written only against the {@code mpi} package
 * (as {@code benchmarks/src/main/c/pingpong.c} is against MPICH). Rank 0 prints rank A's one-way
 * latency: {@code pingpong_us <mean one-way microseconds over ROUNDS round trips>}; the other
 * ranks only take part in the barrier.
 * Usage: PingPong [ROUNDS [A B]] (default 20000 after ROUNDS/10 warm-up round trips, ranks 0 and 1).
 */
public final class PingPong {

    private PingPong() {
    }

    public static void main(String[] args) throws MPIException {
        MPI.Init(args);
        Intracomm world = MPI.COMM_WORLD;
        int rank = world.getRank();
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
        int a = args.length > 2 ? Integer.parseInt(args[1]) : 0;
        int b = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        if (world.getSize() <= Math.max(a, b) || a == b) {
            System.err.println("PingPong: ranks " + a + " and " + b + " in a world of " + world.getSize());
            world.abort(2);
        }
        int warmup = rounds / 10;
        int[] value = new int[1];
        double start = 0;
        for (int i = 0; i < warmup + rounds; i++) {
            if (i == warmup) {
                world.barrier();
                start = MPI.wtime();
            }
            if (rank == a) {
                world.send(value, 1, MPI.INT, b, 0);
                world.recv(value, 1, MPI.INT, b, 0);
                value[0]++;
            } else if (rank == b) {
                world.recv(value, 1, MPI.INT, a, 0);
                world.send(value, 1, MPI.INT, a, 0);
            }
        }
        double elapsed = MPI.wtime() - start;
        double[] figure = {elapsed * 1e6 / (2.0 * rounds)};
        if (rank == a && value[0] != warmup + rounds) {
            System.err.println("PingPong: counted " + value[0] + " round trips, expected " + (warmup + rounds));
            world.abort(3);
        }
        report(world, a, figure);
        if (rank == 0) {
            System.out.printf(java.util.Locale.ROOT, "pingpong_us %.3f%n", figure[0]);
        }
        MPI.Finalize();
    }

    /** Rank {@code a}'s figure reaches rank 0, which prints it (the launcher's own output). */
    static void report(Intracomm world, int a, double[] figure) throws MPIException {
        if (a == 0) {
            return;
        }
        if (world.getRank() == a) {
            world.send(figure, 1, MPI.DOUBLE, 0, 9);
        } else if (world.getRank() == 0) {
            world.recv(figure, 1, MPI.DOUBLE, a, 9);
        }
    }
}
