package org.mpiproxy.api.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class ConfigurationGateTest {

    @interface Config {
        int stop_grace_seconds() default 10;

        boolean abort_on_failure() default true;
    }

    private static Config validate(Config c) {
        if (c.stop_grace_seconds() < 0) {
            throw new IllegalArgumentException("stop.grace.seconds=" + c.stop_grace_seconds() + " must be >= 0");
        }
        return c;
    }

    private final ConfigurationGate<Config> gate = new ConfigurationGate<>("org.example", Config.class,
            ConfigurationGateTest::validate);
    private final List<String> lines = new ArrayList<>();
    private final AtomicInteger enabled = new AtomicInteger();

    private boolean offer(Map<String, ?> properties) {
        return gate.offer(properties, lines::add, enabled::incrementAndGet);
    }

    @Test
    void shouldEnableAtOnceWhenTheFirstConfigurationIsGood() {
        assertTrue(offer(Map.of()));
        assertEquals(1, enabled.get());
        assertEquals(List.of(), lines);
        assertTrue(gate.isOpen());
    }

    @Test
    void shouldHoldTheComponentBackWithOneLinePerBadValueAndEnableItOnceFixed() {
        assertFalse(offer(Map.of("stop.grace.seconds", "ten")));
        assertFalse(offer(Map.of("stop.grace.seconds", "ten")));
        assertFalse(offer(Map.of("stop.grace.seconds", "-1")));
        assertFalse(offer(Map.of("stop.grace.seconds", "2", "abort.on.failure", "yes")));
        assertEquals(0, enabled.get(), "not enabled while no value was good");
        assertEquals(List.of(
                "org.example: stop.grace.seconds=ten is not a whole number; no good configuration yet: not started until"
                        + " the value is fixed",
                "org.example: stop.grace.seconds=-1 must be >= 0; no good configuration yet: not started until the value"
                        + " is fixed",
                "org.example: abort.on.failure=yes is not true or false; no good configuration yet: not started until"
                        + " the value is fixed"), lines, "one line per distinct problem, none repeated");

        assertTrue(offer(Map.of("stop.grace.seconds", "2")));
        assertEquals(1, enabled.get());
    }

    @Test
    void shouldLeaveLaterValuesToTheComponentOnceOpen() {
        assertTrue(offer(Map.of("stop.grace.seconds", "2")));
        assertTrue(offer(Map.of("stop.grace.seconds", "ten")));
        assertTrue(offer(Map.of("stop.grace.seconds", "3")));
        assertEquals(1, enabled.get(), "enabled once");
        assertEquals(List.of(), lines, "the component reports later bad values itself, keeping its last good one");
    }

    @Test
    void shouldEnableAChangedGoodConfigurationOnlyAfterTheHandOverToTheOtherComponents() {
        List<Duration> delays = new ArrayList<>();
        List<Runnable> later = new ArrayList<>();
        ConfigurationGate<Config> driven = new ConfigurationGate<>("org.example", Config.class,
                ConfigurationGateTest::validate, (delay, task) -> {
                    delays.add(delay);
                    later.add(task);
                });
        assertFalse(driven.offerChange(Map.of("stop.grace.seconds", "ten"), lines::add, enabled::incrementAndGet));
        assertEquals(List.of(), later, "nothing to enable");

        assertTrue(driven.offerChange(Map.of("stop.grace.seconds", "2"), lines::add, enabled::incrementAndGet));
        assertEquals(0, enabled.get(), "not from within the hand-over");
        assertEquals(List.of(ConfigurationGate.AFTER_CHANGE), delays, "a moment later");
        later.get(0).run();
        assertEquals(1, enabled.get());

        assertTrue(driven.offerChange(Map.of("stop.grace.seconds", "3"), lines::add, enabled::incrementAndGet));
        assertEquals(1, later.size(), "nothing more is enabled");
        assertEquals(1, enabled.get(), "enabled once");
    }

    @Test
    void shouldEnableAChangedConfigurationOnADaemonThreadOnceTheDelayHasPassed() throws Exception {
        CompletableFuture<Thread> enabledOn = new CompletableFuture<>();
        long offered = System.nanoTime();
        long[] at = new long[1];
        assertTrue(gate.offerChange(Map.of("stop.grace.seconds", "2"), lines::add, () -> {
            at[0] = System.nanoTime();
            enabledOn.complete(Thread.currentThread());
        }));
        Thread thread = enabledOn.get(60, TimeUnit.SECONDS);
        assertNotSame(Thread.currentThread(), thread, "not from within the hand-over");
        assertTrue(thread.isDaemon());
        assertEquals("mpiproxy-enable-org.example", thread.getName());
        assertTrue(at[0] - offered >= ConfigurationGate.AFTER_CHANGE.toNanos(), "not before the delay");
    }
}
