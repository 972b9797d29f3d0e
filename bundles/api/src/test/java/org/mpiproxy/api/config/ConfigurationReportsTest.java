package org.mpiproxy.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The record of refused values and unknown keys the health checks read. */
class ConfigurationReportsTest {

    @interface Config {
        int stop_grace_seconds() default 10;

        boolean abort_on_failure() default true;
    }

    private final ConfigurationReports reports = new ConfigurationReports();
    private final List<Runnable> later = new ArrayList<>();

    @Test
    void shouldReportTheGatesRefusalAsNotStartedUntilTheComponentAcceptsAGoodValue() {
        ConfigurationGate<Config> gate = new ConfigurationGate<>("org.example", Config.class, c -> c,
                (delay, task) -> later.add(task), reports);
        List<String> lines = new ArrayList<>();
        gate.offer(Map.of("stop.grace.seconds", "ten"), lines::add, () -> { });

        String line = "org.example: stop.grace.seconds=ten is not a whole number; no good configuration yet: not"
                + " started until the value is fixed";
        assertEquals(List.of(line), lines);
        assertEquals(List.of(new ConfigurationReports.Report("org.example", line, false, List.of())),
                reports.reports());

        CheckedConfiguration<Config> component = new CheckedConfiguration<>("org.example", Config.class,
                w -> { }, reports);
        gate.offerChange(Map.of("stop.grace.seconds", "5"), lines::add,
                () -> component.activation(Map.of("stop.grace.seconds", "5"), c -> c, lines::add));
        later.forEach(Runnable::run);
        assertEquals(List.of(), reports.reports());
    }

    @Test
    void shouldSuggestOnlyACloseKey() {
        List<String> known = List.of("stop.grace.seconds", "abort.on.failure");
        assertEquals("stop.grace.seconds", ConfigurationReports.closest("stop.grace.second", known));
        assertEquals("abort.on.failure", ConfigurationReports.closest("abort.on.falure", known));
        assertNull(ConfigurationReports.closest("port", known));
    }
}
