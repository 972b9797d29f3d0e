/* Only MPI_Init and MPI_Finalize: what starting a job costs, wire-up included. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
