package org.mpiproxy.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.mpiproxy.api.ProcessLauncher;

class LauncherTableTest {

    private final List<String> lines = new ArrayList<>();
    private final LauncherTable table = new LauncherTable(lines::add);
    private long nextServiceId = 1;

    private Map<String, Object> properties(String kind, String cores, int ranking) {
        Map<String, Object> p = new HashMap<>();
        if (kind != null) {
            p.put(ProcessLauncher.KIND, kind);
        }
        if (cores != null) {
            p.put(ProcessLauncher.CORES, cores);
        }
        if (ranking != 0) {
            p.put("service.ranking", ranking);
        }
        p.put("service.id", nextServiceId++);
        return p;
    }

    @Test
    void shouldChooseTheLauncherThatDeclaresTheRanksCore() {
        FakeLauncher local = new FakeLauncher();
        FakeLauncher core = new FakeLauncher();
        table.bind(local, properties("local", "0", 0));
        table.bind(core, properties("core", "1-", 0));
        assertSame(local, table.forCore(0));
        assertSame(core, table.forCore(1));
        assertSame(core, table.forCore(4095));
        assertEquals(List.of(), lines);
    }

    @Test
    void shouldLetANewKindTakeItsCoresWithoutAnyChangeToTheProxy() {
        FakeLauncher core = new FakeLauncher();
        FakeLauncher gpu = new FakeLauncher();
        table.bind(core, properties("core", "1-", 0));
        table.bind(gpu, properties("gpu", "8-11,16", 10));
        assertSame(core, table.forCore(7));
        assertSame(gpu, table.forCore(8));
        assertSame(gpu, table.forCore(11));
        assertSame(core, table.forCore(12));
        assertSame(gpu, table.forCore(16));
        assertNull(table.forCore(0), "nothing serves core 0");

        table.unbind(gpu);
        assertSame(core, table.forCore(8), "its cores go back to the next launcher that serves them");
    }

    @Test
    void shouldPreferTheHighestRankingThenTheOldestService() {
        FakeLauncher first = new FakeLauncher();
        FakeLauncher second = new FakeLauncher();
        FakeLauncher ranked = new FakeLauncher();
        table.bind(first, properties("local", "0", 0));
        table.bind(second, properties("local", "0", 0));
        assertSame(first, table.forCore(0));
        table.bind(ranked, properties("local", "0", 5));
        assertSame(ranked, table.forCore(0));
        table.bind(ranked, properties("local", "1", 5));
        assertSame(first, table.forCore(0), "changed properties replace what was known");
        assertSame(ranked, table.forCore(1));
    }

    @Test
    void shouldFallBackOnTheKindWhenNoCoresAreDeclared() {
        FakeLauncher local = new FakeLauncher();
        FakeLauncher core = new FakeLauncher();
        table.bind(local, properties("local", null, 0));
        table.bind(core, properties("core", null, 0));
        assertSame(local, table.forCore(0));
        assertSame(core, table.forCore(3));
    }

    @Test
    void shouldLeaveOutALauncherWhoseCoresCannotBeReadInOneLine() {
        FakeLauncher good = new FakeLauncher();
        table.bind(good, properties("core", "1-", 0));
        for (String bad : List.of("one", "3-1", "-2", "1,,2", "")) {
            table.bind(new FakeLauncher(), properties("core", bad, 100));
        }
        table.bind(new FakeLauncher(), properties("gpu", null, 100));
        assertSame(good, table.forCore(2), "the bad ones are not used");
        assertEquals(6, lines.size(), String.join("\n", lines));
        assertEquals(true, lines.get(0).startsWith("launcher service "), lines.get(0));
        assertEquals(true, lines.get(0).endsWith("is not used: mpiproxy.launcher.cores=one is not a list of cores and"
                + " ranges such as 0, 1- or 2-7,9"), lines.get(0));
        assertEquals(true, lines.get(5).endsWith("is not used: it has neither mpiproxy.launcher.cores nor a known"
                + " mpiproxy.launcher (gpu)"), lines.get(5));
    }

    @Test
    void shouldReadCoreListsAndRanges() {
        assertArrayEquals(new long[] {0, 0}, LauncherTable.cores(Map.of(ProcessLauncher.CORES, "0")));
        assertArrayEquals(new long[] {1, Long.MAX_VALUE}, LauncherTable.cores(Map.of(ProcessLauncher.CORES, "1-")));
        assertArrayEquals(new long[] {2, 7, 9, 9}, LauncherTable.cores(Map.of(ProcessLauncher.CORES, " 2-7, 9 ")));
        assertThrows(IllegalArgumentException.class, () -> LauncherTable.cores(Map.of(ProcessLauncher.CORES, "x")));
    }
}
