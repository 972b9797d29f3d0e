package mpi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Error handlers on worlds of several ranks: {@code MPI.ERRORS_ARE_FATAL} (the default) ends the
 * rank with the error's class as status and a message naming class, communicator and rank;
 * {@code MPI.ERRORS_RETURN} throws an {@link MPIException} of the class Open MPI reports.
 */
class ErrhandlerTest {

    /** Each bad call of {@link Programs#badCalls}, with the class Open MPI's mpi.h gives its error. */
    private static final String[] BAD_CALLS = {
        "send to rank size", "send with tag -5", "send of -1 elements", "double[] as MPI.INT", "bcast from root size",
        "BAND on doubles", "getSize of a freed communicator", "free of MPI.COMM_WORLD", "incl of rank size",
        "incl of a rank twice", "rangeIncl with stride 0", "getSize of a freed group", "get on MPI.INFO_NULL",
        "getErrorString(99)", "setErrhandler(null)", "recv of 4 ints into 2",
    };
    private static final int[] CLASSES = {6, 4, 2, 3, 8, 10, 5, 5, 6, 6, 13, 9, 34, 13, 13, 15};

    static final class Programs {

        static Object defaults(Intracomm world) throws MPIException {
            List<Boolean> facts = new ArrayList<>();
            facts.add(world.getErrhandler() == MPI.ERRORS_ARE_FATAL);
            facts.add(MPI.COMM_SELF.getErrhandler() == MPI.ERRORS_ARE_FATAL);
            Intracomm copy = world.dup();
            facts.add(copy.getErrhandler() == MPI.ERRORS_ARE_FATAL);
            world.setErrhandler(MPI.ERRORS_RETURN);
            facts.add(world.getErrhandler() == MPI.ERRORS_RETURN);
            // new communicators take the handler of the one they are made from
            facts.add(world.dup().getErrhandler() == MPI.ERRORS_RETURN);
            facts.add(world.split(0, 0).getErrhandler() == MPI.ERRORS_RETURN);
            facts.add(world.clone().getErrhandler() == MPI.ERRORS_RETURN);
            facts.add(world.create(world.getGroup()).getErrhandler() == MPI.ERRORS_RETURN);
            facts.add(copy.getErrhandler() == MPI.ERRORS_ARE_FATAL);
            return facts;
        }

        /** Every rank sends to a rank that does not exist. */
        static Object fatalByDefault(Intracomm world) throws MPIException {
            world.send(new int[1], 1, MPI.INT, world.getSize(), 0);
            return "not ended";
        }

        /** The same error on the world (returned) and on a copy whose handler is fatal. */
        static Object fatalOnOneCommunicator(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Intracomm copy = world.dup();
            copy.setName("the copy");
            copy.setErrhandler(MPI.ERRORS_ARE_FATAL);
            try {
                world.send(new int[1], 1, MPI.INT, world.getSize(), 0);
                return "no error on the world";
            } catch (MPIException e) {
                copy.send(new int[1], 1, MPI.INT, copy.getSize(), 0);
                return "not ended";
            }
        }

        static Object callReturn(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            world.callErrhandler(MPI.ERR_OTHER);
            return "returned";
        }

        static Object callFatal(Intracomm world) throws MPIException {
            world.callErrhandler(MPI.ERR_OTHER);
            return "not ended";
        }

        /** The group's calls use MPI.COMM_WORLD's handler, fatal by default. */
        static Object fatalGroupCall(Intracomm world) throws MPIException {
            world.getGroup().incl(new int[] {world.getSize()});
            return "not ended";
        }

        static Object badCalls(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            int size = world.getSize();
            int rank = world.getRank();
            List<Integer> classes = new ArrayList<>();
            List<Call> calls = List.of(
                () -> world.send(new int[1], 1, MPI.INT, size, 0),
                () -> world.send(new int[1], 1, MPI.INT, 0, -5),
                () -> world.send(new int[1], -1, MPI.INT, 0, 0),
                () -> world.send(new double[1], 1, MPI.INT, 0, 0),
                () -> world.bcast(new int[1], 1, MPI.INT, size),
                () -> world.allReduce(new double[1], new double[1], 1, MPI.DOUBLE, MPI.BAND),
                () -> {
                    Intracomm copy = world.dup();
                    copy.free();
                    copy.getSize();
                },
                () -> world.free(),
                () -> world.getGroup().incl(new int[] {size}),
                () -> world.getGroup().incl(new int[] {0, 0}),
                () -> world.getGroup().rangeIncl(new int[][] {{0, 1, 0}}),
                () -> {
                    Group g = world.getGroup();
                    g.free();
                    g.getSize();
                },
                () -> MPI.INFO_NULL.get("key"),
                () -> MPI.getErrorString(99),
                () -> world.setErrhandler(null));
            for (Call c : calls) {
                classes.add(classOf(c));
            }
            if (rank == 1) {
                world.send(new int[] {1, 2, 3, 4}, 4, MPI.INT, 0, 9);
            } else if (rank == 0) {
                classes.add(classOf(() -> world.recv(new int[2], 2, MPI.INT, 1, 9)));
            }
            world.barrier();
            return classes;
        }

        @FunctionalInterface
        interface Call {
            void run() throws MPIException;
        }

        private static int classOf(Call c) {
            try {
                c.run();
                return MPI.SUCCESS;
            } catch (MPIException e) {
                if (e.getErrorCode() != e.getErrorClass()) {
                    throw new IllegalStateException("code " + e.getErrorCode() + " of class " + e.getErrorClass());
                }
                return e.getErrorClass();
            }
        }

        /** Every error class's string, then the names of MPI's ERR_ fields and their values. */
        static Object errorStrings(Intracomm world) throws MPIException, IllegalAccessException {
            List<String> found = new ArrayList<>();
            for (Field f : MPI.class.getFields()) {
                if (f.getType() == int.class && Modifier.isStatic(f.getModifiers())
                        && (f.getName().startsWith("ERR_") || f.getName().equals("SUCCESS"))
                        && !f.getName().equals("ERR_LASTCODE") && !f.getName().equals("ERR_SYSRESOURCE")) {
                    int value = f.getInt(null);
                    found.add("MPI_" + f.getName() + "=" + value + " -> " + MPI.getErrorString(value));
                }
            }
            return found;
        }
    }

    @Test
    void shouldStartFatalOnEveryCommunicatorAndPassTheHandlerOnToCommunicatorsMadeFromOne() throws Exception {
        for (Object facts : World.values(3, Programs.class, "defaults")) {
            assertEquals(List.of(true, true, true, true, true, true, true, true, true), facts);
        }
    }

    @Test
    void shouldEndEveryRankWithTheErrorClassAndAMessageUnderTheDefaultHandler() throws Exception {
        List<World.Outcome> outcomes = World.run(3, Programs.class, "fatalByDefault");

        for (int r = 0; r < 3; r++) {
            World.Outcome o = outcomes.get(r);
            assertEquals(MPI.ERR_RANK, o.endedStatus(), String.valueOf(o));
            assertEquals("MPI_ERR_RANK on MPI_COMM_WORLD at rank " + r + " (MPI.ERRORS_ARE_FATAL: the job ends): rank 3"
                    + " does not exist (the communicator has 3)", o.endedMessage());
            assertNull(o.value());
        }
    }

    @Test
    void shouldEndOnlyThroughTheCommunicatorWhoseHandlerIsFatal() throws Exception {
        for (World.Outcome o : World.run(2, Programs.class, "fatalOnOneCommunicator")) {
            assertEquals(MPI.ERR_RANK, o.endedStatus(), String.valueOf(o));
            assertTrue(o.endedMessage().startsWith("MPI_ERR_RANK on the copy at rank "), o.endedMessage());
        }
    }

    @Test
    void shouldCallTheHandlerOfTheCommunicator() throws Exception {
        assertEquals(List.of("returned", "returned"), World.values(2, Programs.class, "callReturn"));

        for (World.Outcome o : World.run(2, Programs.class, "callFatal")) {
            assertEquals(MPI.ERR_OTHER, o.endedStatus(), String.valueOf(o));
            assertTrue(o.endedMessage().startsWith("MPI_ERR_OTHER on MPI_COMM_WORLD at rank "), o.endedMessage());
            assertTrue(o.endedMessage().endsWith(": callErrhandler(16) on MPI_COMM_WORLD"), o.endedMessage());
        }
    }

    @Test
    void shouldHandAGroupsErrorToTheWorldsHandler() throws Exception {
        for (World.Outcome o : World.run(2, Programs.class, "fatalGroupCall")) {
            assertEquals(MPI.ERR_RANK, o.endedStatus(), String.valueOf(o));
            assertTrue(o.endedMessage().endsWith("incl: rank 2 is not in a group of 2"), o.endedMessage());
        }
    }

    @Test
    void shouldThrowTheErrorClassOpenMpiReportsUnderErrorsReturn() throws Exception {
        List<Object> classes = World.values(3, Programs.class, "badCalls");

        int calls = BAD_CALLS.length - 1;
        for (int r = 0; r < 3; r++) {
            @SuppressWarnings("unchecked")
            List<Integer> got = (List<Integer>) classes.get(r);
            int n = r == 0 ? calls + 1 : calls;
            assertEquals(n, got.size());
            for (int i = 0; i < n; i++) {
                assertEquals(CLASSES[i], got.get(i), "rank " + r + ": " + BAD_CALLS[i]);
            }
        }
    }

    @Test
    void shouldHaveOpenMpisValuesAndAStringForEveryErrorClass() throws Exception {
        @SuppressWarnings("unchecked")
        List<String> strings = (List<String>) World.values(1, Programs.class, "errorStrings").get(0);

        // one field for each class 0..53, and each class's string starts with that field's name
        boolean[] seen = new boolean[54];
        for (String s : strings) {
            String name = s.substring(0, s.indexOf('='));
            int value = Integer.parseInt(s.substring(s.indexOf('=') + 1, s.indexOf(" -> ")));
            assertFalse(seen[value], s);
            seen[value] = true;
            assertTrue(s.substring(s.indexOf(" -> ") + 4).startsWith(name + ": "), s);
        }
        assertEquals(54, strings.size(), strings.toString());
        assertTrue(strings.contains("MPI_SUCCESS=0 -> MPI_SUCCESS: no error"), strings.toString());
        assertTrue(strings.contains("MPI_ERR_RANK=6 -> MPI_ERR_RANK: invalid rank"), strings.toString());
        int[] openMpi = {MPI.ERR_BUFFER, MPI.ERR_ARG, MPI.ERR_TRUNCATE, MPI.ERR_IN_STATUS, MPI.ERR_INFO, MPI.ERR_IO,
            MPI.ERR_SPAWN, MPI.ERR_WIN, MPI.ERR_LASTCODE, MPI.ERR_SYSRESOURCE};
        assertArrayEquals(new int[] {1, 13, 15, 18, 34, 35, 50, 53, 54, -2}, openMpi);
        assertArrayEquals(new int[] {0, 1, 2, 3, -32766}, new int[] {MPI.IDENT, MPI.CONGRUENT, MPI.SIMILAR,
            MPI.UNEQUAL, MPI.UNDEFINED});
    }

    @Test
    void shouldEndTheProcessWithTheErrorClassAsStatusWhenNothingCatchesIt() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                FatalProgram.class.getName());
        pb.environment().keySet().removeIf(k -> k.startsWith("MPIPROXY_"));
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertTrue(p.waitFor(1, TimeUnit.MINUTES), "the program still runs");

        String stderr = new String(err, StandardCharsets.UTF_8);
        assertEquals(MPI.ERR_RANK, p.exitValue(), stderr);
        assertEquals("MPI_ERR_RANK on MPI_COMM_WORLD at rank 0 (MPI.ERRORS_ARE_FATAL: the job ends): rank 1 does not"
                + " exist (the communicator has 1)", stderr.strip());
        assertEquals(List.of("MPI_ERR_RANK: invalid rank", "before Init: 13", "before"),
                new String(out, StandardCharsets.UTF_8).strip().lines().toList());
        assertFalse(stderr.contains("Exception"), stderr);
    }
}
