package org.mpiproxy.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.mpiproxy.mpi.Message;
import org.mpiproxy.protocol.MpiDatatype;

/** The self-check plan, the comparison of echoes and the stop message of mpiecho. */
class MpiEchoTest {

    @Test
    void shouldPlanEveryDatatypeTwiceAndOneLargeDoubleMessageOverV2() {
        List<Message> plan = MpiEcho.plan(true, 1 << 20, 1);

        assertEquals(27, plan.size());
        for (int code = 0; code <= 12; code++) {
            Message one = plan.get(2 * code);
            Message small = plan.get(2 * code + 1);
            assertEquals(code, one.datatype());
            assertEquals(1, one.count());
            assertEquals(code, one.tag());
            assertEquals(code, small.datatype());
            assertEquals(3000 / MpiDatatype.sizeOf(code), small.count());
            assertEquals(100 + code, small.tag());
        }
        Message large = plan.get(26);
        assertEquals(MpiDatatype.DOUBLE.code(), large.datatype());
        assertEquals(131072, large.count());
        assertEquals(MpiEcho.LARGE_TAG, large.tag());
        assertEquals(1500, plan.get(3).count(), "MPI_SHORT x 1500");
        assertNotEquals(plan.get(26).elements(), MpiEcho.plan(true, 1 << 20, 2).get(26).elements(),
                "every rank gets its own elements");
        assertFalse(plan.stream().anyMatch(MpiEcho::isStop));
    }

    @Test
    void shouldPlanOnlyV1DatatypesWithTagZeroOverV1() {
        List<Message> plan = MpiEcho.plan(false, 100, 1);

        assertEquals(17, plan.size());
        Set<Integer> tags = plan.stream().map(Message::tag).collect(Collectors.toSet());
        assertEquals(Set.of(0), tags);
        assertTrue(plan.stream().allMatch(m -> m.datatype() <= MpiDatatype.V1_MAX_CODE));
        Message large = plan.get(16);
        assertEquals(MpiDatatype.LONG.code(), large.datatype());
        assertEquals(12, large.count(), "100 bytes rounded down to whole MPI_LONG elements");
        assertEquals(1, MpiEcho.plan(false, 3, 1).get(16).count(), "at least one element");
    }

    @Test
    void shouldFindTheFirstElementThatDiffers() {
        Message sent = MpiEcho.plan(true, 1 << 20, 1).get(26);
        byte[] bytes = sent.toByteArray();
        assertNull(MpiEcho.difference(sent, Message.of(sent.datatype(), sent.tag(), bytes.clone())));

        bytes[bytes.length - 1] ^= 0x40;
        String wrong = MpiEcho.difference(sent, Message.of(sent.datatype(), sent.tag(), bytes));

        assertTrue(wrong.startsWith("element 131071 of MPI_DOUBLE: sent 0x"), wrong);
        Message shorts = Message.of(MpiDatatype.SHORT.code(), 3, new byte[] {2, 1, 4, 3});
        assertEquals("element 1 of MPI_SHORT: sent 0x0304, got 0x0305",
                MpiEcho.difference(shorts, Message.of(MpiDatatype.SHORT.code(), 3, new byte[] {2, 1, 5, 3})));
        assertEquals("came back with tag 4",
                MpiEcho.difference(shorts, Message.of(MpiDatatype.SHORT.code(), 4, new byte[] {2, 1, 4, 3})));
        assertEquals("came back as MPI_UNSIGNED_SHORT",
                MpiEcho.difference(shorts, Message.of(MpiDatatype.UNSIGNED_SHORT.code(), 3, new byte[] {2, 1, 4, 3})));
        assertEquals("came back with 1 elements",
                MpiEcho.difference(shorts, Message.of(MpiDatatype.SHORT.code(), 3, new byte[] {2, 1})));
    }

    @Test
    void shouldStopOnlyOnFourCharsStopWithTagZero() {
        byte[] stop = "STOP".getBytes(StandardCharsets.US_ASCII);
        assertTrue(MpiEcho.isStop(MpiEcho.stop()));
        assertTrue(MpiEcho.isStop(Message.of(MpiDatatype.CHAR.code(), 0, stop)));
        assertFalse(MpiEcho.isStop(Message.of(MpiDatatype.CHAR.code(), 1, stop)));
        assertFalse(MpiEcho.isStop(Message.of(MpiDatatype.UNSIGNED_CHAR.code(), 0, stop)));
        assertFalse(MpiEcho.isStop(Message.of(MpiDatatype.CHAR.code(), 0, "STOPS".getBytes(StandardCharsets.US_ASCII))));
        assertFalse(MpiEcho.isStop(Message.of(MpiDatatype.CHAR.code(), 0, "STOQ".getBytes(StandardCharsets.US_ASCII))));
        assertFalse(MpiEcho.isStop(Message.of(MpiDatatype.INT.code(), 0, stop)));
    }
}
