/*
 * One int back and forth between ranks 0 and 1. Rank 0 prints the one-way latency:
 *   pingpong_us <mean one-way microseconds over ROUNDS round trips>
 * Usage: pingpong [ROUNDS] (default 20000, after 2000 warm-up round trips).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) {
            fprintf(stderr, "pingpong: needs 2 ranks, has %d\n", size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    int warmup = rounds / 10;
    double start = 0;
    for (int i = 0; i < warmup + rounds; i++) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            value++;
        } else if (rank == 1) {
            MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0) {
        if (value != warmup + rounds) {
            fprintf(stderr, "pingpong: counted %d round trips, expected %d\n", value, warmup + rounds);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        printf("pingpong_us %.3f\n", elapsed * 1e6 / (2.0 * rounds));
    }
    MPI_Finalize();
    return 0;
}
