package org.mpiproxy.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class CompareTest {

    private static final List<String> PAGE = List.of("## Goals", "",
            "| what | anchor | ours | ratio | goal | met |", "| --- | --- | --- | --- | --- | --- |",
            "| host to rank stream, 1448 B | raw UDP 300 k/s (this run) | 150 k/s | 0.50x raw | >= 0.9x raw | **no** |",
            "| EXEC to ack of one rank | ProcessBuilder 800 us | 1600 us | 2.00x ProcessBuilder, 3.0x C | <= 1.2x ProcessBuilder | **no** |",
            "", "## Next");

    @Test
    void shouldReadTheGoalTableAndCompareRatiosSoThatAboveOneIsBetter() {
        List<Compare.Row> rows = Compare.goalRows(PAGE);
        assertEquals(2, rows.size());
        assertEquals("150 k/s", rows.get(0).ours());
        Compare.Row faster = new Compare.Row("host to rank stream, 1448 B", "raw", "180 k/s", "0.60x raw", ">= 0.9x raw");
        assertEquals("1.20", Compare.change(List.of(rows.get(0)), List.of(faster)), "more throughput is better");
        Compare.Row slower = new Compare.Row("EXEC to ack of one rank", "pb", "2000 us", "2.50x ProcessBuilder",
                "<= 1.2x ProcessBuilder");
        assertEquals("0.80", Compare.change(List.of(rows.get(1)), List.of(slower)), "a longer launch is worse");
        String page = Compare.render("old", "new", Map.of(rows.get(0).what(), List.of(rows.get(0))),
                Map.of(faster.what(), List.of(faster)), List.of("1.0"), List.of("1.1"));
        assertTrue(page.contains("| host to rank stream, 1448 B | 150 k/s (0.50x raw) | 180 k/s (0.60x raw) | 1.20 |"), page);
    }
}
