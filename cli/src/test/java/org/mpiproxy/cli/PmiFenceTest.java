package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

class PmiFenceTest {

    private final List<String> fences = new ArrayList<>();
    private int aborts;
    private final PmiFence fence = new PmiFence(3, (epoch, pairs) -> fences.add(epoch + " " + pairs), () -> aborts++);

    @Test
    void shouldEndAFenceOnceEveryRankEnteredItWithThePairsPutSinceTheLast() {
        assertNull(fence.onLine(1, "cmd=put key=b value=1"));
        assertNull(fence.onLine(0, "cmd=put key=a value=0"));
        assertNull(fence.onLine(0, "cmd=barrier_in"));
        assertNull(fence.onLine(1, "cmd=barrier_in"));
        assertEquals(List.of(), fences, "rank 2 has not entered");
        assertNull(fence.onLine(2, "cmd=barrier_in"));
        assertEquals(List.of("1 {b=1, a=0}"), fences);
        assertNull(fence.onLine(2, "cmd=barrier_in"));
        assertNull(fence.onLine(2, "cmd=put key=c value=2"));
        assertNull(fence.onLine(0, "cmd=barrier_in"));
        assertNull(fence.onLine(1, "cmd=barrier_in"));
        assertEquals(List.of("1 {b=1, a=0}", "2 {c=2}"), fences);
        assertEquals(2, fence.fenced());
    }

    @Test
    void shouldTakeAPmi2PutWhoseValueAPmi1LineCannotCarry() {
        assertNull(fence.onLine(1, org.mpiproxy.protocol.pmi.PmiLine.putLine("card 1", "tcp 1;x")));
        assertNull(fence.onLine(0, "cmd=barrier_in"));
        assertNull(fence.onLine(1, "cmd=barrier_in"));
        assertNull(fence.onLine(2, "cmd=barrier_in"));
        assertEquals(List.of("1 {card 1=tcp 1;x}"), fences);
        assertEquals("PMI put without key= or value= of rank 2", fence.onLine(2, "cmd=put key=k"));
        assertEquals("PMI put with encoding=rot13, not url of rank 2",
                fence.onLine(2, "cmd=put encoding=rot13 key=k value=v"));
    }

    @Test
    void shouldTellTheFirstAbortAndWhatItDoesNotUnderstand() {
        assertNull(fence.onLine(2, "cmd=abort exitcode=7 message=bad"));
        assertNull(fence.onLine(1, "cmd=abort exitcode=3"));
        assertEquals(new PmiFence.Abort(2, 7, "bad"), fence.abort());
        assertEquals(1, aborts);
        assertEquals("PMI line of rank 5, which the job does not have", fence.onLine(5, "cmd=barrier_in"));
        assertEquals("PMI line of rank 1 with cmd=get", fence.onLine(1, "cmd=get key=a"));
        assertEquals("PMI line of rank 1: 'garbage' is not key=value", fence.onLine(1, "garbage"));
    }

    @Test
    void shouldMapRanksToMachinesAsMpichReadsIt() {
        Placement here = new Placement("127.0.0.5", 6660, 0, "n1");
        Placement a = new Placement("198.51.100.1", 6660, 0, "a");
        Placement b = new Placement("198.51.100.2", 6661, 0, "b");
        // rank 0 shares node 0 with the ranks of the first proxy on this machine; a and b are nodes of their own
        assertEquals("(vector,(0,1,2),(1,1,2),(2,1,1),(1,1,1))",
                RankWorld.processMapping(List.of(here, a, a, b, a)));
        assertEquals("(vector,(0,1,4))", RankWorld.processMapping(List.of(here, here, here)));
    }
}
