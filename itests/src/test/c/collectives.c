/* Broadcast, reduce and all-to-all, each checked against what every rank can compute alone. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int value = rank == 0 ? 4242 : -1;
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    bad |= value != 4242;

    long mine = rank + 1, sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        bad |= sum != (long) size * (size + 1) / 2;
    }
    long max = 0;
    MPI_Allreduce(&mine, &max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    bad |= max != size;

    int *send = malloc(sizeof(int) * size), *recv = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) {
        send[i] = rank * 1000 + i;
    }
    MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) {
        bad |= recv[i] != i * 1000 + rank;
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("collectives of %d ranks: %s\n", size, anybad ? "WRONG" : "ok");
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return anybad;
}
