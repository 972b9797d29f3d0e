package org.mpiproxy.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlurmAllocationTest {

    private static List<String> hosts(String expression) {
        return SlurmAllocation.expandHostlist("SLURM_JOB_NODELIST", expression);
    }

    @Test
    void shouldExpandPlainNames() {
        assertEquals(List.of("login1"), hosts("login1"));
        assertEquals(List.of("a", "b-2", "c.example.org"), hosts("a,b-2,c.example.org"));
    }

    @Test
    void shouldExpandRangesAndListsWithZeroPadding() {
        assertEquals(List.of("n01", "n02", "n03", "n04", "n07"), hosts("n[01-04,07]"));
        assertEquals(List.of("n8", "n9", "n10"), hosts("n[8-10]"));
        assertEquals(List.of("n08", "n09", "n10"), hosts("n[08-10]"));
        assertEquals(List.of("n1", "n2", "n3"), hosts("n[1-3]"));
        assertEquals(List.of("n5"), hosts("n[5]"));
    }

    @Test
    void shouldExpandSeveralItemsAndSuffixes() {
        assertEquals(List.of("a1", "a2", "b3"), hosts("a[1-2],b3"));
        assertEquals(List.of("n1-ib", "n2-ib", "x"), hosts("n[1-2]-ib,x"));
    }

    @Test
    void shouldExpandSeveralBracketGroupsAsAProduct() {
        assertEquals(List.of("r1n1", "r1n2", "r2n1", "r2n2"), hosts("r[1-2]n[1-2]"));
        assertEquals(List.of("rack01-n1", "rack01-n3", "rack02-n1", "rack02-n3"), hosts("rack[01-02]-n[1,3]"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "n[1-3           | '[' is not closed at position 2",
        "n1-3]           | ']' without '[' at position 5",
        "n[1-[2]]        | '[' inside a bracket (ranges do not nest) at position 5",
        "n[]             | empty range in brackets at position 3",
        "n[1,,3]         | empty range in brackets at position 5",
        "n[3-1]          | range '3-1' runs backwards at position 3",
        "n[a-b]          | range 'a-b' is not N or N-M with decimal numbers at position 3",
        "n[1-2-3]        | range '1-2-3' is not N or N-M",
        "n1,,n2          | empty host name at position 4",
        ",n1             | empty host name at position 1",
        "n 1             | ' ' is not allowed in a host name at position 2",
        "n[0-99999]      | range '0-99999' has more than 65534 hosts",
    })
    void shouldNameTheProblemOfAMalformedHostlist(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> hosts(bad));

        assertTrue(e.getMessage().startsWith("SLURM_JOB_NODELIST='" + bad + "': "), e.getMessage());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void shouldExpandTasksPerNode() {
        assertEquals(List.of(2, 2, 2, 1), SlurmAllocation.expandTasksPerNode("T", "2(x3),1"));
        assertEquals(List.of(4), SlurmAllocation.expandTasksPerNode("T", "4"));
        assertEquals(List.of(1, 2, 2), SlurmAllocation.expandTasksPerNode("T", "1,2(x2)"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "2(x3         | '(x3' is not a repeat (xk) with k >= 1 at position 2",
        "2(3)         | '(3)' is not a repeat",
        "2(x0)        | '(x0)' is not a repeat",
        "0            | '0' is not a task count",
        "2,,1         | '' is not a task count n or n(xk) with n >= 1 at position 3",
        "x(x2)        | 'x(x2)' is not a task count",
    })
    void shouldNameTheProblemOfMalformedTasksPerNode(String bad, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SlurmAllocation.expandTasksPerNode("SLURM_TASKS_PER_NODE", bad));

        assertTrue(e.getMessage().startsWith("SLURM_TASKS_PER_NODE='" + bad + "': "), e.getMessage());
        assertTrue(e.getMessage().contains(message), e.getMessage());
    }

    @Test
    void shouldReadTheAllocationFromTheEnvironment() {
        Map<String, String> env = Map.of("SLURM_JOB_NODELIST", "n[1-3]", "SLURM_TASKS_PER_NODE", "2(x2),1");

        assertTrue(SlurmAllocation.isPresent(env::get));
        assertEquals(List.of(new NodeSlots("n1", 2), new NodeSlots("n2", 2), new NodeSlots("n3", 1)),
                SlurmAllocation.fromEnvironment(env::get));
    }

    @Test
    void shouldFallBackToTheOldNodeListAndOneTaskPerNode() {
        Map<String, String> env = Map.of("SLURM_NODELIST", "a,b");

        assertEquals(List.of(new NodeSlots("a", 1), new NodeSlots("b", 1)), SlurmAllocation.fromEnvironment(env::get));
    }

    @Test
    void shouldRejectTaskCountsThatDoNotMatchTheNodes() {
        Map<String, String> env = Map.of("SLURM_JOB_NODELIST", "n[1-3]", "SLURM_TASKS_PER_NODE", "2(x2)");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SlurmAllocation.fromEnvironment(env::get));
        assertEquals("SLURM_TASKS_PER_NODE='2(x2)' gives 2 node(s) but SLURM_JOB_NODELIST='n[1-3]' names 3",
                e.getMessage());
    }

    @Test
    void shouldReportNoAllocation() {
        Map<String, String> env = Map.of();

        assertFalse(SlurmAllocation.isPresent(env::get));
        assertThrows(IllegalArgumentException.class, () -> SlurmAllocation.fromEnvironment(env::get));
    }
}
