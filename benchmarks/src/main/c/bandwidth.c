/*
 * 64 KiB messages from rank 0 to rank 1, WINDOW in flight, each window acknowledged by one int.
 * Rank 0 prints the bandwidth in bytes of message data per second, in MB/s (10^6):
 *   bandwidth_MBps <rate>
 * Usage: bandwidth [WINDOWS] (default 400, after 40 warm-up windows).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE 65536
#define WINDOW 64

int main(int argc, char **argv)
{
    int rank, size, ack = 0;
    MPI_Request requests[WINDOW];
    MPI_Status statuses[WINDOW];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) {
            fprintf(stderr, "bandwidth: needs 2 ranks, has %d\n", size);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int windows = argc > 1 ? atoi(argv[1]) : 400;
    int warmup = windows / 10;
    char *buffer = malloc((size_t) SIZE * WINDOW);
    memset(buffer, rank + 1, (size_t) SIZE * WINDOW);
    double start = 0;
    for (int w = 0; w < warmup + windows; w++) {
        if (w == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            start = MPI_Wtime();
        }
        if (rank == 0) {
            for (int i = 0; i < WINDOW; i++) {
                MPI_Isend(buffer + (size_t) i * SIZE, SIZE, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &requests[i]);
            }
            MPI_Waitall(WINDOW, requests, statuses);
            MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < WINDOW; i++) {
                MPI_Irecv(buffer + (size_t) i * SIZE, SIZE, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &requests[i]);
            }
            MPI_Waitall(WINDOW, requests, statuses);
            if (buffer[0] != 1 || buffer[(size_t) SIZE * WINDOW - 1] != 1) {
                fprintf(stderr, "bandwidth: rank 1 received wrong bytes\n");
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            ack = w;
            MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        }
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0) {
        printf("bandwidth_MBps %.1f\n", (double) SIZE * WINDOW * windows / elapsed / 1e6);
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
