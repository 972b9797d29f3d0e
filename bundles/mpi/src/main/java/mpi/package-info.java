/**
 * MPI for Java with the class and method names of Open MPI's Java bindings ({@code MPI},
 * {@code Comm}, {@code Intracomm}, {@code Request}, {@code Status}, {@code Datatype}, {@code Op},
 * {@code MPIException}): point-to-point between any two ranks, non-blocking requests, the
 * collectives and communicators made by {@code split} and {@code dup}, over shared memory on a
 * node and the proxies across nodes.
 */
@Export
@Version("1.0.0")
package mpi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
