package mpi;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.mpiproxy.api.MessageRing;
import org.mpiproxy.channel.shm.MappedMessageRing;
import org.mpiproxy.channel.shm.RingDescriptor;

/**
 * A world of ranks of the {@code mpi} package in this JVM: each rank a thread with a class
 * loader of its own (so its own {@code MPI}, {@code COMM_WORLD} and engine), every pair linked by
 * two rings in direct memory, as two ranks of one node are. A program is a static method taking
 * {@code MPI.COMM_WORLD}; what it returns comes back per rank (Java values only: arrays, strings,
 * numbers, lists).
 */
final class World {

    /** What a rank did: its program's result, or how it ended under {@code MPI.ERRORS_ARE_FATAL}. */
    record Outcome(Object value, Integer endedStatus, String endedMessage) {
    }

    private World() {
    }

    /**
     * Runs {@code method} of {@code programs} on {@code size} ranks.
     *
     * @return each rank's outcome
     * @throws AssertionError when a rank failed (its exception is the cause) or still runs after
     *         the ceiling that only catches hangs
     */
    static List<Outcome> run(int size, Class<?> programs, String method) throws Exception {
        MessageRing[][] rings = new MessageRing[size][size];
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < size; j++) {
                if (i != j) {
                    rings[i][j] = new MappedMessageRing(ByteBuffer.allocateDirect(RingDescriptor.RING_HEADER_LENGTH
                            + (1 << 16)));
                }
            }
        }
        URL[] classpath = {MPI.class.getProtectionDomain().getCodeSource().getLocation(),
            World.class.getProtectionDomain().getCodeSource().getLocation()};
        Object[][] results = new Object[size][];
        Throwable[] failures = new Throwable[size];
        Thread[] threads = new Thread[size];
        for (int r = 0; r < size; r++) {
            int rank = r;
            threads[r] = new Thread(() -> {
                try (RankLoader loader = new RankLoader(classpath, World.class.getClassLoader())) {
                    results[rank] = (Object[]) loader.loadClass(WorldRank.class.getName())
                            .getMethod("run", int.class, int.class, MessageRing[][].class, String.class, String.class)
                            .invoke(null, rank, size, rings, programs.getName(), method);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    failures[rank] = e.getCause();
                } catch (Throwable t) {
                    failures[rank] = t;
                }
            }, "rank-" + r + "-" + method);
            threads[r].start();
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            threads[r].join(120_000);
            if (threads[r].isAlive()) {
                throw new AssertionError(method + ": rank " + r + " of " + size + " still runs after 2 minutes");
            }
        }
        for (int r = 0; r < size; r++) {
            if (failures[r] != null) {
                throw new AssertionError(method + ": rank " + r + " of " + size + ": " + failures[r], failures[r]);
            }
            outcomes.add(new Outcome(results[r][0], (Integer) results[r][1], (String) results[r][2]));
        }
        return outcomes;
    }

    /** @return each rank's result, every rank having returned */
    static List<Object> values(int size, Class<?> programs, String method) throws Exception {
        List<Object> values = new ArrayList<>();
        for (Outcome o : run(size, programs, method)) {
            if (o.endedStatus() != null) {
                throw new AssertionError(method + ": a rank ended (" + o.endedStatus() + "): " + o.endedMessage());
            }
            values.add(o.value());
        }
        return values;
    }

    /** Loads the {@code mpi} package and the library's classes itself; everything else from its parent. */
    private static final class RankLoader extends URLClassLoader {

        RankLoader(URL[] classpath, ClassLoader parent) {
            super(classpath, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("mpi.") && !name.startsWith("org.mpiproxy.mpi.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = findClass(name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
