package org.mpiproxy.mpi;

/**
 * What a receive with a tag matched ({@code MPI_Status}).
 *
 * @param source the rank that sent the message
 * @param tag    the message's tag
 * @param count  the number of elements received
 */
public record Status(int source, int tag, int count) {
}
