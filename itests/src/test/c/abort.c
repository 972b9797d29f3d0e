/* Rank 1 calls MPI_Abort with exit code 7 while the others wait in a receive that never matches. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, dummy;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        fprintf(stderr, "rank 1 aborts\n");
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Recv(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
