/**
 * MPI for Java with the class and method names of Open MPI's Java bindings ({@code MPI},
 * {@code Comm}, {@code Intracomm}, {@code CartComm}, {@code GraphComm}, {@code Request}, {@code Status},
 * {@code Datatype}, {@code Op}, {@code Group}, {@code Info}, {@code Errhandler},
 * {@code MPIException}, {@code Struct} and the pair and complex types): point-to-point between
 * any two ranks, non-blocking requests, the collectives blocking and non-blocking ({@code iBcast},
 * {@code iAllReduce} and the others, moving on in every call), communicators made by {@code split},
 * {@code dup} and {@code create} from groups, Cartesian topologies ({@code createCart},
 * {@code shift}, {@code sub}, {@code CartComm.createDims}), graph and distributed-graph
 * topologies ({@code createGraph}, {@code createDistGraph}, {@code createDistGraphAdjacent}) and
 * the neighbourhood collectives over all three ({@code neighborAllGather},
 * {@code iNeighborAllToAllv} and the others), derived datatypes in every call with
 * {@code pack}/{@code unpack}, persistent requests ({@code Prequest}), matched probes
 * ({@code Message}), buffered sends, cancellation, attributes, the program's own reduction
 * operations ({@code UserFunction}), {@code allToAllw}, and the error handlers
 * {@code MPI.ERRORS_ARE_FATAL} (the default) and {@code MPI.ERRORS_RETURN}, over shared memory on
 * a node and the proxies across nodes.
 */
@Export
@Version("1.5.0")
package mpi;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
