/*
 * MPI_Allreduce of one double (MPI_SUM) over every rank. Rank 0 prints
 *   allreduce_us <mean microseconds per MPI_Allreduce over ROUNDS>
 * Usage: allreduce [ROUNDS] (default 5000, after ROUNDS/10 warm-up calls).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 5000;
    int warmup = rounds / 10;
    double in = rank + 1, out = 0, start = 0;
    for (int i = 0; i < warmup + rounds; i++) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double elapsed = MPI_Wtime() - start;
    if (out != size * (size + 1) / 2.0) {
        fprintf(stderr, "allreduce: rank %d got %f, expected %f\n", rank, out, size * (size + 1) / 2.0);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank == 0) {
        printf("allreduce_us %.3f\n", elapsed * 1e6 / rounds);
    }
    MPI_Finalize();
    return 0;
}
