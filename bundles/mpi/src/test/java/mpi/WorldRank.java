package mpi;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.mpi.internal.Join;
import org.mpiproxy.mpi.internal.engine.Engine;
import org.mpiproxy.mpi.internal.engine.Fabric;
import org.mpiproxy.mpi.internal.engine.Link;
import org.mpiproxy.mpi.internal.engine.RingLink;

/**
 * One rank of a {@link World}, inside the rank's own class loader (so its own {@code MPI}): joins
 * the world over the rings, runs a program, then {@code MPI.Finalize}. Under
 * {@code MPI.ERRORS_ARE_FATAL} the rank ends by an exception instead of halting the test's JVM.
 */
public final class WorldRank {

    private WorldRank() {
    }

    /** How a rank ended under {@code MPI.ERRORS_ARE_FATAL}. */
    static final class Ended extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        Ended(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    /**
     * @param rings    {@code rings[i][j]} carries rank i's messages to rank j
     * @param programs the class of the program
     * @param method   a static method of it taking {@code MPI.COMM_WORLD}
     * @return {the program's result, the exit status or {@code null}, the fatal message or {@code null}}
     */
    public static Object[] run(int rank, int size, MessageRing[][] rings, String programs, String method)
            throws Throwable {
        Errhandler.ending = (status, message) -> {
            throw new Ended(status, message);
        };
        Link[] links = new Link[size];
        for (int j = 0; j < size; j++) {
            if (j != rank) {
                links[j] = new RingLink(rings[rank][j], rings[j][rank], null, null);
            }
        }
        MPI.start(new Join.Joined(null, rank, size, List.of(), null),
                new Engine(rank, size, fabric(links), TimeUnit.MINUTES.toNanos(1)));
        Method m = Class.forName(programs, true, WorldRank.class.getClassLoader())
                .getDeclaredMethod(method, Intracomm.class);
        m.setAccessible(true);
        try {
            Object value = m.invoke(null, MPI.COMM_WORLD);
            MPI.Finalize();
            return new Object[] {value, null, null};
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof Ended ended) {
                return new Object[] {null, ended.status, ended.getMessage()};
            }
            throw e.getCause();
        } catch (Ended ended) {
            return new Object[] {null, ended.status, ended.getMessage()};
        }
    }

    private static Fabric fabric(Link[] links) {
        return new Fabric() {
            @Override
            public Link link(int peer) {
                return links[peer];
            }

            @Override
            public void listen(int peer) {
            }

            @Override
            public int poll(Link.Sink sink) {
                int n = 0;
                for (Link l : links) {
                    if (l != null) {
                        n += l.poll(sink);
                    }
                }
                return n;
            }

            @Override
            public void close() {
            }
        };
    }
}
