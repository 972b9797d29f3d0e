package mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Info objects: keys in the order first set, copies that stay apart, free, the errors of bad keys and values. */
class InfoTest {

    static final class Programs {

        static Object info(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            List<Object> r = new ArrayList<>();
            Info i = new Info();
            i.set("b", "2");
            i.set("a", "1");
            i.set("b", "3");
            r.add(Arrays.asList(i.size(), i.getKey(0), i.getKey(1), i.get("b"), i.get("a"), i.get("none")));
            Info d = i.dup();
            d.delete("b");
            Info c = i.clone();
            c.set("c", "x");
            r.add(Arrays.asList(i.size(), d.size(), d.getKey(0), c.size(), c.getKey(2), i.get("c")));
            String longest = "k".repeat(MPI.MAX_INFO_KEY);
            i.set(longest, "v".repeat(MPI.MAX_INFO_VAL));
            r.add(i.get(longest).length());
            r.add(Arrays.asList(
                    CommunicatorsTest.Programs.classOf(() -> i.set(longest + "k", "v")),
                    CommunicatorsTest.Programs.classOf(() -> i.set("k", "")),
                    CommunicatorsTest.Programs.classOf(() -> i.set("k", "v".repeat(MPI.MAX_INFO_VAL + 1))),
                    CommunicatorsTest.Programs.classOf(() -> i.get(null)),
                    CommunicatorsTest.Programs.classOf(() -> i.delete("zz")),
                    CommunicatorsTest.Programs.classOf(() -> i.getKey(3)),
                    CommunicatorsTest.Programs.classOf(() -> MPI.INFO_NULL.size()),
                    CommunicatorsTest.Programs.classOf(MPI.INFO_NULL::free)));
            i.free();
            r.add(Arrays.asList(i.isNull(), d.isNull(), MPI.INFO_NULL.isNull(),
                    CommunicatorsTest.Programs.classOf(() -> i.get("a")),
                    CommunicatorsTest.Programs.classOf(i::free)));
            return r;
        }

        static Object communicatorHints(Intracomm world) throws MPIException {
            world.setErrhandler(MPI.ERRORS_RETURN);
            Info hints = new Info();
            hints.set("no_locks", "true");
            world.setInfo(hints);
            Info used = world.getInfo();
            Info freed = new Info();
            freed.free();
            return Arrays.asList(used.size(), used.isNull(), hints.size(), world.isInter(),
                    CommunicatorsTest.Programs.classOf(() -> world.setInfo(MPI.INFO_NULL)),
                    CommunicatorsTest.Programs.classOf(() -> world.setInfo(freed)));
        }

        /** Under the default handler an info error ends the rank. */
        static Object infoNullFatal(Intracomm world) throws MPIException {
            return MPI.INFO_NULL.get("key");
        }
    }

    @Test
    void shouldKeepKeysAndValuesAsMpiInfoDoes() throws Exception {
        @SuppressWarnings("unchecked")
        List<Object> got = (List<Object>) World.values(1, Programs.class, "info").get(0);

        assertEquals(Arrays.asList(2, "b", "a", "3", "1", null), got.get(0));
        assertEquals(Arrays.asList(2, 1, "a", 3, "c", null), got.get(1));
        assertEquals(MPI.MAX_INFO_VAL, got.get(2));
        assertEquals(List.of(MPI.ERR_INFO_KEY, MPI.ERR_INFO_VALUE, MPI.ERR_INFO_VALUE, MPI.ERR_INFO_KEY,
                MPI.ERR_INFO_NOKEY, MPI.ERR_ARG, MPI.ERR_INFO, MPI.ERR_INFO), got.get(3));
        assertEquals(List.of(true, false, true, MPI.ERR_INFO, MPI.ERR_INFO), got.get(4));
    }

    @Test
    void shouldTakeACommunicatorsHintsAndReportNoneInUse() throws Exception {
        assertEquals(Arrays.asList(0, false, 1, false, MPI.ERR_INFO, MPI.ERR_INFO),
                World.values(2, Programs.class, "communicatorHints").get(1));
    }

    @Test
    void shouldEndTheRankForAnInfoErrorUnderTheDefaultHandler() throws Exception {
        World.Outcome o = World.run(1, Programs.class, "infoNullFatal").get(0);

        assertEquals(MPI.ERR_INFO, o.endedStatus(), String.valueOf(o));
        assertEquals("MPI_ERR_INFO on MPI_COMM_WORLD at rank 0 (MPI.ERRORS_ARE_FATAL: the job ends):"
                + " get on MPI.INFO_NULL",
                o.endedMessage());
    }
}
