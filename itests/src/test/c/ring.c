/* A token goes around the ring of all ranks ROUNDS times (argv[1], default 100), one added per hop. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 100;
    long token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, 0, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        printf("token %ld after %d rounds of %d ranks\n", token, rounds, size);
    }
    MPI_Finalize();
    /* only rank 0 holds the token that went all the way round */
    return rank != 0 || token == (long) rounds * size ? 0 : 1;
}
