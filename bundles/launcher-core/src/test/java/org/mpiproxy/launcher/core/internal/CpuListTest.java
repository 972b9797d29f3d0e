package org.mpiproxy.launcher.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CpuListTest {

    private static BitSet cpus(int... numbers) {
        BitSet set = new BitSet();
        for (int n : numbers) {
            set.set(n);
        }
        return set;
    }

    @Test
    void shouldParseSingleCpusAndRanges() {
        assertEquals(cpus(0, 1, 4), CpuList.parse("0-1,4"));
        assertEquals(cpus(0), CpuList.parse("0"));
        assertEquals(cpus(0, 1, 2, 3, 8, 9, 10, 11), CpuList.parse("0-3,8-11"));
        assertEquals(cpus(5), CpuList.parse("5-5"));
    }

    @Test
    void shouldIgnoreSurroundingWhitespaceAndNewline() {
        assertEquals(cpus(0, 1), CpuList.parse("\t0-1\n"));
    }

    @Test
    void shouldAcceptHighestCpu() {
        assertTrue(CpuList.parse("65535").get(CpuList.MAX_CPU));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "a", "1-", "-1", "3-1", "1,,2", ",1", "1,", "1-2-3", "0 - 1", "1 ,2",
        "0x1", "+1", "65536", "99999999999", "0-3:2", "1.5"})
    void shouldRejectMalformedList(String list) {
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse(list));
    }

    @Test
    void shouldRejectNullList() {
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse(null));
    }

    @Test
    void shouldFindAllowedListInStatusLines() {
        List<String> status = List.of("Name:\tjava", "Cpus_allowed:\t3", "Cpus_allowed_list:\t0-1", "Mems_allowed:\t1");

        assertEquals("0-1", CpuList.allowedList(status));
    }

    @Test
    void shouldRejectStatusWithoutAllowedList() {
        assertThrows(IllegalArgumentException.class, () -> CpuList.allowedList(List.of("Name:\tjava")));
    }

    @Test
    void shouldReadThisProcessAllowedCpus() throws Exception {
        BitSet allowed = CpuList.parse(AllowedCpus.ofThisProcess().list());

        assertTrue(allowed.cardinality() >= 1);
    }
}
